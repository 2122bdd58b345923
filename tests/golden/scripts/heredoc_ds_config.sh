#!/bin/bash
#SBATCH --job-name=ds-heredoc
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:8
#SBATCH --time=1-00:00:00
# A DeepSpeed config written by a heredoc, then the deepspeed launcher (golden corpus: heredoc form).
cat > ds_config.json <<'JSON'
{
  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}},
  "bf16": {"enabled": true},
  "train_micro_batch_size_per_gpu": "auto"
}
JSON
#SBATCH --this-is-inside-no-heredoc-but-after-commands=1
deepspeed --num_gpus 8 train.py --deepspeed ds_config.json \
    --model_name_or_path meta-llama/Llama-3.1-8B \
    --per_device_train_batch_size 2 --gradient_accumulation_steps 4 \
    --model_max_length 2048 --bf16 --gradient_checkpointing --max_steps 2000
