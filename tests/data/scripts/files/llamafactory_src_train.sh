#!/bin/bash
#SBATCH --job-name=lf-fsdp
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:2
#SBATCH --time=12:00:00
# LLaMA-Factory from its checkout, as its examples/extras/fsdp_qlora/train.sh launches it:
# accelerate with an FSDP config, src/train.py with a YAML and dotlist overrides after it.
accelerate launch \
    --config_file configs/fsdp.yaml \
    src/train.py configs/llama3_lora_sft_fsdp.yaml \
    cutoff_len=4096 per_device_train_batch_size=2
