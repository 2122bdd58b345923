#!/bin/bash
#SBATCH --gres=gpu:a100:4
#SBATCH --time=08:00:00
#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=4096 micro-batch=2
srun python train.py
