#!/bin/bash
#SBATCH --job-name=ds-unread-too-big
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100:2
#SBATCH --time=1-00:00:00
# An unread ZeRO config, and activations that no sharding can hold (128k tokens x 8, no
# checkpointing): rejected even under the most favourable reading.
deepspeed --num_gpus 2 train.py --deepspeed configs/ds_config.json \
    --model_name_or_path meta-llama/Llama-3.1-8B \
    --per_device_train_batch_size 8 --model_max_length 131072 --bf16 --max_steps 100
