#!/bin/bash
#SBATCH --gres=gpu:a100:8
#SBATCH --time=12:00:00
# Found by fuzz_submission (UBSan): a number beyond int64 in a config file was converted to an
# integer before its range was checked. It must be a bad value with a warning naming its key.
cat > ds_huge.json <<'JSON'
{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": 8.55556e+46}
JSON
deepspeed --num_gpus 8 train.py --deepspeed ds_huge.json \
    --model_name_or_path meta-llama/Llama-3.1-8B --model_max_length 2048
