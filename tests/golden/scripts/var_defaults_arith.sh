#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:4
#SBATCH --time=06:00:00
# ${VAR:-default}, arithmetic and a line continuation (golden: shell forms).
NGPU=${NGPU:-4}
MBS=$((8 / 4))
SEQ=${SEQ_LEN:-2048}
accelerate launch --num_processes $NGPU --mixed_precision bf16 \
    train.py --model_name_or_path Qwen/Qwen2.5-7B-Instruct \
    --per_device_train_batch_size $MBS --max_seq_length $SEQ \
    --use_peft --lora_r 16 --bf16 --max_steps 500
