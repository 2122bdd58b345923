#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH -t 60
# The model is a local directory whose config.json is cut short: the warning names the file.
torchrun --nproc_per_node 1 train.py --model_name_or_path ./mymodel --use_peft --bf16 \
  --per_device_train_batch_size 1 --max_seq_length 2048
