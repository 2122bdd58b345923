#!/bin/bash
#SBATCH --job-name=ds-unread-given
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100:8
#SBATCH --time=1-00:00:00
# The ZeRO config file is not read, but an #FMTE line says what it holds: fmte checks that.
#FMTE sharding=none
deepspeed --num_gpus 8 train.py --deepspeed configs/ds_config.json \
    --model_name_or_path meta-llama/Llama-3.1-8B \
    --per_device_train_batch_size 2 --gradient_accumulation_steps 4 \
    --model_max_length 2048 --bf16 --gradient_checkpointing --max_steps 2000
