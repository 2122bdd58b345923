#!/bin/bash
#SBATCH --job-name=internvl-stage1.5
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:a100:8
#SBATCH --time=24:00:00
# InternVL 2.5 stage 1.5: the vision encoder and MLP projector train on top of the frozen language
# model (--freeze_llm True, --freeze_backbone False).
torchrun --nnodes=2 --nproc_per_node=8 internvl/train/internvl_chat_pretrain.py \
  --model_name_or_path OpenGVLab/InternVL2_5-8B \
  --freeze_llm True --freeze_backbone False --freeze_mlp False \
  --bf16 True --max_seq_length 8192 --per_device_train_batch_size 1 \
  --gradient_accumulation_steps 4 --grad_checkpoint True
