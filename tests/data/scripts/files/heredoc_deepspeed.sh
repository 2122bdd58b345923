#!/bin/bash
#SBATCH --gres=gpu:a100:8
#SBATCH --partition=gpu
MICRO=2
cat <<EOT > ds_config.json
{
  "train_micro_batch_size_per_gpu": $MICRO,
  "gradient_accumulation_steps": 4,
  "bf16": {"enabled": true},
  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}
}
EOT
deepspeed --num_gpus 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B --deepspeed ds_config.json --max_seq_length 2048
