#!/bin/bash
#SBATCH --gres=gpu:a100:4
#SBATCH --nodes=2-4
#SBATCH --time=soon
#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=2048 micro-batch=1
srun python train.py
