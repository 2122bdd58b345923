#!/bin/bash
#SBATCH --job-name=ax-moe-qlora
#SBATCH --partition=gpu
#SBATCH --gres=gpu:h100:1
#SBATCH --time=08:00:00
# axolotl QLoRA of a mixture of experts, everything in the YAML; quantize_moe_experts has
# bitsandbytes quantise the stacked experts too.
axolotl train configs/${RECIPE:-axolotl_qwen3moe_qlora}.yaml
