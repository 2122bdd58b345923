#!/bin/bash
# Found by fuzz_batch_script: a launcher that starts 1440 processes on one node, without a GPU
# request. The record held gpn=1440, which its reader refused (at most 1024): the job's record
# would have been lost to fmte-retrain. Records now write such a value as the bound.
#SBATCH --time=06:00:00
torchrun --nproc_per_node 1440 train.py --model_name_or_path Qwen/Qwen2.5-7B-Instruct \
    --per_device_train_batch_size 1 --max_seq_length 2048
