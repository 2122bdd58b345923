#!/bin/bash
#SBATCH --job-name=tt-lora
#SBATCH --partition=gpu
#SBATCH --gres=gpu:h100:1
#SBATCH --time=02:00:00

# torchtune LoRA recipe on one GPU with a few config overrides.
tune download meta-llama/Llama-3.1-8B-Instruct --output-dir /tmp/Meta-Llama-3.1-8B-Instruct --ignore-patterns "original/consolidated.00.pth"
tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device \
  batch_size=4 gradient_accumulation_steps=8 \
  tokenizer.max_seq_len=8192 \
  model.lora_rank=16 \
  enable_activation_checkpointing=True \
  epochs=1 max_steps_per_epoch=1000
