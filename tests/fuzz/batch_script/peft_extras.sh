#!/bin/bash
#SBATCH --gres=gpu:a100:2
accelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft --use_dora --lora_modules_to_save embed_tokens lm_head --lora_target_modules q_proj v_proj
litgpt finetune_lora checkpoints/google/gemma-2b --train.micro_batch_size 2 --train.global_batch_size 16 --lora_head true --lora_mlp false
tune run lora_finetune_single_device --config llama3_1/8B_lora model.apply_lora_to_output=True model.use_dora=False model.lora_attn_modules=[q_proj,k_proj]
