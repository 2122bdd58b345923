#!/bin/bash
#SBATCH --job-name=full-70b-ddp
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100:4

# Full fine-tuning of a 70B model with plain DDP on 4 A100s: cannot fit.
accelerate launch --num_processes 4 --mixed_precision bf16 \
  train.py \
  --model_name_or_path meta-llama/Llama-3.1-70B \
  --per_device_train_batch_size 1 \
  --gradient_accumulation_steps 8 \
  --max_seq_length 2048 \
  --bf16
