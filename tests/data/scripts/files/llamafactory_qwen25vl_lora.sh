#!/bin/bash
#SBATCH --job-name=vl-lora
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100:4
# A vision-language LoRA job as LLaMA-Factory users write them: the model's whole context as
# cutoff_len (a truncation limit: batches are padded to their longest sample), no time limit.
llamafactory-cli train configs/qwen25vl_lora_sft.yaml
