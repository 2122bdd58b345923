#!/bin/bash
#SBATCH --job-name=grpo
#SBATCH --partition=h100
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:8
# A TRL GRPO job without a time limit: each of its 500 steps generates 8 completions of up to
# 1024 tokens per prompt (colocated vLLM) before the update fmte estimates. The update alone would
# take minutes; the generation, which fmte does not model, takes most of each step. fmte must set
# no time limit (one from the update alone would end the job), and its sequences are the prompt
# and the completion (512 + 1024), not TRL's max_length default of SFT and DPO.
accelerate launch --num_processes 8 --use_deepspeed --zero_stage 3 trl/scripts/grpo.py \
  --model_name_or_path Qwen/Qwen2.5-7B --dataset_name trl-lib/DeepMath-103K \
  --per_device_train_batch_size 8 --num_generations 8 \
  --max_prompt_length 512 --max_completion_length 1024 \
  --use_vllm --vllm_mode colocate --gradient_checkpointing --bf16 --max_steps 500
