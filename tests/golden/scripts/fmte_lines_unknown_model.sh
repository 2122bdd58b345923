#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH --time=02:00:00
#FMTE model=acme/NotARealModel-13B method=lora seq-len=4096 micro-batch=1
srun python train.py
