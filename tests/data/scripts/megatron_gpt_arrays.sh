#!/bin/bash
#SBATCH --job-name=megatron-gpt
#SBATCH --partition=gpu
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --time=2-00:00:00

# Megatron-LM GPT pretraining in the style of examples/gpt3/train_gpt3_175b_distributed.sh
# (bash arrays), scaled to a 13B-class model on 16 GPUs.
GPUS_PER_NODE=8
NUM_NODES=2
CHECKPOINT_PATH=/scratch/$USER/ckpt
VOCAB_FILE=data/gpt2-vocab.json
MERGE_FILE=data/gpt2-merges.txt
DATA_PATH=data/my-gpt_text_document

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr $MASTER_ADDR   # from the launcher
    --master_port 6000
)

GPT_MODEL_ARGS=(
    --num-layers 40
    --hidden-size 5120
    --num-attention-heads 40
    --seq-length 4096
    --max-position-embeddings 4096
)

TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 256
    --train-iters 50000
    --weight-decay 0.1
    --clip-grad 1.0
    --bf16
    --lr 6.0e-5
    --recompute-granularity selective
    --use-distributed-optimizer
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 4
    --pipeline-model-parallel-size 2
    --sequence-parallel
)

DATA_ARGS=(
    --data-path $DATA_PATH
    --vocab-file $VOCAB_FILE
    --merge-file $MERGE_FILE
    --split 949,50,1
)

srun torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH
