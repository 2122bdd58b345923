#!/bin/bash
#SBATCH --job-name=litgpt-full
#SBATCH --gres=gpu:a100:2
#SBATCH --time=04:00:00
# litgpt's older command line (v0.3): "finetune full" is full fine-tuning, "finetune" alone LoRA;
# the longest matching subcommand wins.
litgpt finetune full --config configs/litgpt_lora_llama2_7b.yaml --devices 2
