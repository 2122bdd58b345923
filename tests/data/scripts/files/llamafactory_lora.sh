#!/bin/bash
#SBATCH --job-name=lf-lora
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100:2
#SBATCH --time=12:00:00
# LLaMA-Factory: everything is in the YAML, which names a DeepSpeed config of its own.
source configs/env.sh
FORCE_TORCHRUN=1 llamafactory-cli train configs/${RECIPE:-qwen_lora_sft}.yaml
