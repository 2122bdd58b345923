#!/bin/bash
#SBATCH --gres=gpu:a100:2
#SBATCH --time=01:00:00
A='$B $B $B $B'
B='$A $A $A $A'
C=${D:-${E:-${F:-${G:-meta-llama/Llama-3.1-8B}}}}
ARGS=( --model_name_or_path $C $A )
torchrun --nproc_per_node 2 train.py "${ARGS[@]}" --per_device_train_batch_size 1 --bf16
