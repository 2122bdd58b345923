#!/bin/bash
#SBATCH --job-name=ds-z3-70b
#SBATCH --partition=gpu
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:a100:8
#SBATCH --exclusive

# Llama-3.1-70B full fine-tuning with the DeepSpeed launcher and ZeRO-3 + CPU offload.
export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export MASTER_PORT=29500
DS_CONFIG=configs/ds_z3_offload_config.json
HOSTFILE=hostfile_${SLURM_JOB_ID}

deepspeed --num_gpus 8 --num_nodes 2 --hostfile $HOSTFILE \
    --master_addr $MASTER_ADDR --master_port $MASTER_PORT \
    train.py \
    --deepspeed $DS_CONFIG \
    --model_name_or_path meta-llama/Llama-3.1-70B \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --model_max_length 4096 \
    --bf16 \
    --gradient_checkpointing \
    --num_train_epochs 3 \
    --output_dir out/llama70b
