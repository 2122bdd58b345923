#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH --time=02:00:00
#FMTE model=meta-llama/Llama-3.1-8B method=lora seqlen=4096 micro-batch=1
srun python train.py
