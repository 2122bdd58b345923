#!/bin/bash
#SBATCH --job-name=qlora-mistral
#SBATCH --gres=gpu:1
#SBATCH --time=04:00:00
#SBATCH --mem=64G

# QLoRA (4-bit NF4 base) with a TRL SFT script on a single GPU.
cd $SLURM_SUBMIT_DIR
python -u sft_qlora.py \
  --model_name_or_path=mistralai/Mistral-7B-Instruct-v0.2 \
  --load_in_4bit \
  --bnb_4bit_quant_type nf4 \
  --use_bnb_nested_quant \
  --use_peft --lora_r=64 --lora_target_modules=all-linear \
  --per_device_train_batch_size=4 --gradient_accumulation_steps=4 \
  --max_seq_length=2048 \
  --optim paged_adamw_8bit \
  --bf16 \
  --max_steps=500 > qlora.log 2>&1
