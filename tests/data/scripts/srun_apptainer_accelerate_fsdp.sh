#!/bin/bash
#SBATCH --job-name=acc-fsdp
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:2
#SBATCH --time=10:00:00

# accelerate with FSDP settings on the command line, inside an Apptainer image.
IMG=/shared/containers/pytorch-24.05.sif
export ACCELERATE_MIXED_PRECISION=bf16
srun apptainer exec --nv $IMG \
  accelerate launch --num_processes 2 --num_machines 1 \
    --use_fsdp --fsdp_sharding_strategy FULL_SHARD --fsdp_offload_params false \
    --mixed_precision bf16 \
    finetune.py --model_name_or_path "meta-llama/Llama-3.1-8B" \
    --per_device_train_batch_size 4 --gradient_accumulation_steps 2 \
    --max_seq_length 2048 --gradient_checkpointing
