#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --ntasks-per-node=1
#SBATCH --time=04:00:00
# The launch line is built in shell and run by `srun bash -c` (golden corpus: indirect launch).
LAUNCHER="torchrun --nproc_per_node 8 --nnodes ${SLURM_NNODES:-2} --rdzv_backend c10d"
CMD="run_clm.py --model_name_or_path ${MODEL:-mistralai/Mistral-7B-v0.1} --per_device_train_batch_size 1 --block_size 4096 --bf16 --fsdp 'full_shard auto_wrap'"
srun bash -c "$LAUNCHER $CMD"
