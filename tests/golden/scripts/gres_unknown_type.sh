#!/bin/bash
#SBATCH --gres=gpu:quantumcore:4
#SBATCH --time=08:00:00
#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=2048 micro-batch=1
srun python train.py
