#!/bin/bash
#SBATCH --gres=gpu:h100:1
#SBATCH --time=3-00:00:00
#FMTE model=meta-llama/Llama-3.1-8B method=qlora quant=nf4 double-quant=true lora-r=64
#FMTE seq-len=2048 micro-batch=4 grad-accum=4 tokens=200M activation-checkpointing=full
srun python train.py
