#!/bin/bash
#SBATCH --gres=gpu:a100:2
#SBATCH -t 120
# The #FMTE line names a local model directory (mymodel/config.json: TinyLlama-1.1B-Chat-v1.0's
# published config, copied from etc/models); it wins over the launch line's model, and its
# config.json is read where the job runs.
#FMTE model=./mymodel method=full seq-len=2048 micro-batch=4
torchrun --nproc_per_node 2 train.py --model_name_or_path meta-llama/Llama-3.1-8B --bf16
