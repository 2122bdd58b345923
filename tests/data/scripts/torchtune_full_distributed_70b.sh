#!/bin/bash
#SBATCH --job-name=tt-full-70b
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
#SBATCH --time=1-00:00:00

# torchtune full fine-tuning of Llama-3.3-70B, FSDP2 over 8 GPUs.
tune run --nproc_per_node 8 full_finetune_distributed --config llama3_3/70B_full \
    batch_size=2 \
    tokenizer.max_seq_len=4096 \
    enable_activation_checkpointing=True \
    optimizer_in_bwd=False \
    compile=True
