#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --partition=gpu
# Found by fuzz_config_toml: a TOML float too large for an integer (undefined behaviour before the fix).
srun torchrun --nnodes 2 --nproc_per_node 8 -m torchtitan.train --job.config_file ./train.toml
