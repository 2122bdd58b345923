#!/bin/bash
#SBATCH --gres=gpu:a100:2
torchrun --nproc_per_node 2 train.py --model_name_or_path meta-llama/Llama-3.1-8B \
