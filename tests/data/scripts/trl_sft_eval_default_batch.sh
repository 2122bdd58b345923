#!/bin/bash
#SBATCH --job-name=sft-eval
#SBATCH --gres=gpu:h100:1
#SBATCH --time=10:00:00
# A TRL SFT LoRA job that evaluates every 500 steps without setting its evaluation batch: the HF
# Trainer then evaluates per_device_eval_batch_size=8 sequences per GPU (TrainingArguments'
# default) where it trains one, and the evaluation's logits (8 x 8192 tokens x 128,256 entries)
# need more memory than the training steps.
accelerate launch --num_processes 1 trl/scripts/sft.py \
  --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --lora_r 16 \
  --per_device_train_batch_size 1 --gradient_accumulation_steps 8 \
  --max_length 8192 --bf16 --gradient_checkpointing \
  --eval_strategy steps --eval_steps 500 --max_steps 2000
