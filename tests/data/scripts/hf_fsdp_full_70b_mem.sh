#!/bin/bash
#SBATCH -J llama70b-full-fsdp
#SBATCH -p gpu
#SBATCH -N 4
#SBATCH --gpus-per-node=8
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=96
#SBATCH --mem=512G
#SBATCH --time=2-00:00:00

# Full fine-tuning of a 70B model with the HF Trainer (run_clm.py) under FSDP full sharding on four
# nodes that each ask for 512 GB of host memory. The Trainer's FSDP saves a full state dict by
# default (FULL_STATE_DICT, offload_to_cpu, rank0_only): every 250 steps rank 0's node gathers the
# whole model and then the AdamW moments, more than its 512 GB.
set -euo pipefail
SEQ=4096

srun --kill-on-bad-exit=1 torchrun --nproc_per_node 8 --nnodes $SLURM_NNODES \
  --rdzv_backend c10d --rdzv_endpoint $(hostname):29500 \
  examples/pytorch/language-modeling/run_clm.py \
  --model_name_or_path meta-llama/Llama-3.1-70B \
  --dataset_name wikitext --dataset_config_name wikitext-103-raw-v1 \
  --do_train \
  --block_size ${SEQ} \
  --per_device_train_batch_size 1 \
  --gradient_accumulation_steps 1 \
  --bf16 True \
  --fsdp "full_shard auto_wrap" \
  --fsdp_transformer_layer_cls_to_wrap LlamaDecoderLayer \
  --gradient_checkpointing True \
  --optim adamw_torch_fused \
  --max_steps 1000 --save_steps 250 \
  --output_dir /scratch/$USER/clm-llama70b 2>&1 | tee train.log
