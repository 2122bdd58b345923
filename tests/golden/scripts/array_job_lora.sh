#!/bin/bash
#SBATCH --array=0-3
#SBATCH --gres=gpu:a100:1
#SBATCH --time=04:00:00
# An array sweep of LoRA ranks (golden: arrays indexed by SLURM_ARRAY_TASK_ID).
RANKS=(8 16 32 64)
R=${RANKS[$SLURM_ARRAY_TASK_ID]}
python trl/scripts/sft.py --model_name_or_path Qwen/Qwen2.5-7B-Instruct --use_peft --lora_r $R \
    --per_device_train_batch_size 2 --max_seq_length 2048 --bf16 --gradient_checkpointing
