#!/bin/bash
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-task=8
#SBATCH --partition=gpu
CONFIG_FILE=${CONFIG_FILE:-"./configs/llama3_8b.toml"}
srun torchrun --nnodes 4 --nproc_per_node 8 -m torchtitan.train --job.config_file ${CONFIG_FILE} "$@"
