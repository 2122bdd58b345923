#!/bin/bash
# Bug 14 (fuzz_fmte_lines): micro-batch 84096 x 5.5 M tokens of a 70B model saturates the memory
# prediction (INT64_MAX); the record must still be readable (pred_mem at most 2^62).
#SBATCH --gres=gpu:a100:4
#FMTE model=meta-llama/Llama-3.1-70B method=full sharding=fsdp-full micro-batch=84096 seq-len=5555555
torchrun --nproc_per_node 4 train.py
