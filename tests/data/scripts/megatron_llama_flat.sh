#!/bin/bash
#SBATCH --job-name=megatron-llama
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=06:00:00

# Megatron-LM Llama-style pretraining with flat string variables.
GPT_ARGS="--num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
  --group-query-attention --num-query-groups 8 --ffn-hidden-size 14336 \
  --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights \
  --padded-vocab-size 128256 --seq-length 8192 --max-position-embeddings 8192"
PAR="--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1"
torchrun --nproc_per_node 8 pretrain_gpt.py $GPT_ARGS $PAR \
  --micro-batch-size 1 --global-batch-size 64 --bf16 --use-distributed-optimizer \
  --recompute-granularity full --train-samples 1000000
