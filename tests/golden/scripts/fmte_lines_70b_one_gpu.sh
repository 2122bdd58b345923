#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH --time=2-00:00:00
#FMTE model=meta-llama/Llama-3.1-70B method=full seq-len=4096 micro-batch=1 precision=mixed-bf16
#FMTE tokens=500M
srun python train.py
