#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH --time=02:00:00
# A classifier fine-tune: not LLM training (golden: must not be taken for one).
python run_glue.py --model_name_or_path bert-base-uncased --task_name mrpc --do_train \
    --per_device_train_batch_size 32 --max_seq_length 128 --output_dir out/
