#!/bin/bash
#SBATCH --job-name=sft-llama8b-lora
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:4
#SBATCH --cpus-per-task=32
#SBATCH --time=08:00:00
#SBATCH --output=logs/%x-%j.out

# LoRA SFT of Llama-3.1-8B with TRL (examples/scripts/sft.py), 4 GPUs on one node.
module purge
module load cuda/12.4 python/3.11
source $HOME/venvs/trl/bin/activate

export HF_HOME=/scratch/$USER/hf
export WANDB_MODE=offline
MODEL=meta-llama/Llama-3.1-8B
OUT=/scratch/$USER/runs/${SLURM_JOB_ID}

torchrun --nproc_per_node=4 --nnodes=1 --standalone \
    trl/scripts/sft.py \
    --model_name_or_path $MODEL \
    --dataset_name trl-lib/Capybara \
    --learning_rate 2.0e-4 \
    --num_train_epochs 1 \
    --packing \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --gradient_checkpointing \
    --max_seq_length 4096 \
    --bf16 \
    --use_peft \
    --lora_r 32 \
    --lora_alpha 16 \
    --lora_target_modules q_proj k_proj v_proj o_proj \
    --output_dir "$OUT" \
    --logging_steps 25 --eval_strategy no
