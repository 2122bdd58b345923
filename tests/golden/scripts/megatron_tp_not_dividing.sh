#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8
#SBATCH --time=10:00:00
# Megatron flags with a tensor-parallel degree that does not divide the heads (golden: layout error).
torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 \
    --num-attention-heads 20 --seq-length 2048 --max-position-embeddings 2048 \
    --micro-batch-size 2 --global-batch-size 128 --train-iters 1000 --bf16 \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 1
