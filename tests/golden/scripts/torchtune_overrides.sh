#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH --time=08:00:00
tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device \
    batch_size=8 dataset.packed=True tokenizer.max_seq_len=4096 enable_activation_checkpointing=False
