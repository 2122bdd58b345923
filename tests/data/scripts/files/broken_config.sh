#!/bin/bash
#SBATCH --gres=gpu:a100:4
#SBATCH --partition=gpu
accelerate launch --config_file configs/broken.yaml train.py --model_name_or_path meta-llama/Llama-3.1-8B
