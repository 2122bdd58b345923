#!/bin/bash
#SBATCH --gres=gpu:a100:4
# 4000T tokens of a 70B model on 4 GPUs: a prediction of ~1e13 s, longer than an accounting record
# holds (recorded as 1e12 s; fuzz_fmte_lines found a record that its own reader refused).
#FMTE model=meta-llama/Llama-3.1-70B method=lora framework=fsdp activation-checkpointing=full tokens=4000T
torchrun --nproc_per_node 4 train.py
