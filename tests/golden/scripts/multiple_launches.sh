#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=12:00:00
# Two launch lines: SFT then DPO (golden: which one is read).
accelerate launch --num_processes 8 --use_fsdp --fsdp_sharding_strategy FULL_SHARD --mixed_precision bf16 \
    sft.py --model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 4 --max_seq_length 2048 --bf16
accelerate launch --num_processes 8 --use_fsdp --fsdp_sharding_strategy FULL_SHARD --mixed_precision bf16 \
    dpo.py --model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 2 --max_length 4096 --bf16
