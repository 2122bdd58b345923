#!/bin/bash
#SBATCH --gres=gpu:a100:4
#FMTE model=meta-llama/Llama-3.1-8B method=lora
srun python train.py
