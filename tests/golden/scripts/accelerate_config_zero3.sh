#!/bin/bash
#SBATCH --job-name=grpo-zero3
#SBATCH --partition=h100
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=12:00:00
# GRPO with TRL under accelerate, the sharding in an accelerate config file whose name gives the
# ZeRO stage (the layout of open-r1's recipes/accelerate_configs).
accelerate launch --config_file recipes/accelerate_configs/zero3.yaml --num_processes 8 \
    src/open_r1/grpo.py --model_name_or_path Qwen/Qwen2.5-7B-Instruct \
    --per_device_train_batch_size 4 --max_completion_length 1024 --bf16 --gradient_checkpointing \
    --max_steps 500
