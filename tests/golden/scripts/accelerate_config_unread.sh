#!/bin/bash
#SBATCH --job-name=sft-accelerate-config
#SBATCH --partition=h100
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=12:00:00
# Full SFT under accelerate with a config file whose name says nothing of the sharding: fmte does
# not open it at submit time, so it reads it as favourably as it can.
accelerate launch --config_file configs/accelerate/cluster.yaml --num_processes 8 \
    sft.py --model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 2 \
    --max_seq_length 4096 --bf16 --max_steps 1000
