#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --partition=gpu
# An accelerate FSDP config file; the model and the recipe come as the script's arguments.
MODEL=$1
RECIPE=${2-configs/fsdp.yaml}
NUM_PROCESSES=$((SLURM_NNODES * 8))
LAUNCHER="accelerate launch --config_file $RECIPE --num_processes $NUM_PROCESSES --num_machines $SLURM_NNODES"
CMD="train.py --model_name_or_path $MODEL --per_device_train_batch_size 1 --max_seq_length 4096"
srun bash -c "$LAUNCHER $CMD --bf16"
