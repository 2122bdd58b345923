#!/bin/bash
#SBATCH --job-name=litgpt-lora
#SBATCH --gres=gpu:a100:2
#SBATCH --time=04:00:00
# litgpt's LoRA subcommand: the method comes from the subcommand, not the config.
srun litgpt finetune_lora --config configs/litgpt_lora_llama2_7b.yaml
