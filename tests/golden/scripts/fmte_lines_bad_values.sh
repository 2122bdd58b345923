#!/bin/bash
#SBATCH --gres=gpu:a100:2
#SBATCH --time=02:00:00
#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=-4 micro-batch=two
#FMTE precision=bf17 tp=0
srun python train.py
