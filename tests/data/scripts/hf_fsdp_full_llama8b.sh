#!/bin/bash
#SBATCH -J llama8b-full-fsdp
#SBATCH -p gpu
#SBATCH -N 1
#SBATCH --gpus-per-node=8
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=64
#SBATCH --mem=0

# Full fine-tuning with the HF Trainer (run_clm.py) under FSDP full sharding.
set -euo pipefail
export OMP_NUM_THREADS=8
NGPU=8
SEQ=2048

srun --kill-on-bad-exit=1 torchrun --nproc_per_node $NGPU --nnodes $SLURM_NNODES \
  --rdzv_backend c10d --rdzv_endpoint $(hostname):29500 \
  examples/pytorch/language-modeling/run_clm.py \
  --model_name_or_path meta-llama/Llama-3.1-8B \
  --dataset_name wikitext --dataset_config_name wikitext-103-raw-v1 \
  --do_train \
  --block_size ${SEQ} \
  --per_device_train_batch_size 1 \
  --gradient_accumulation_steps 4 \
  --bf16 True \
  --fsdp "full_shard auto_wrap" \
  --fsdp_transformer_layer_cls_to_wrap LlamaDecoderLayer \
  --gradient_checkpointing True \
  --optim adamw_torch_fused \
  --max_steps 2000 \
  --output_dir /scratch/$USER/clm-llama8b 2>&1 | tee train.log
