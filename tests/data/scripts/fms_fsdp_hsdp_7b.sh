#!/bin/bash
#SBATCH --nodes=16
#SBATCH --gres=gpu:8
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive

MODEL_ARGS="\
--model_variant=7b
--use_dummy_dataset=False
--fsdp_activation_checkpointing=False
--selective_checkpointing=1
--sharding_strategy=hsdp
--batch_size=2
--num_steps=100000
"

srun torchrun --nnodes=$SLURM_NTASKS --node_rank=$SLURM_NODEID --nproc_per_node=8 \
    main_training.py ${MODEL_ARGS}
