#!/bin/bash
#SBATCH --job-name=custom-loop
#SBATCH --gres=gpu:h100:2
#SBATCH --time=12:00:00
#FMTE model=Qwen/Qwen2.5-7B-Instruct method=full seq-len=8192 micro-batch=1 grad-accum=16
#FMTE precision=mixed-bf16 sharding=fsdp-full activation-checkpointing=full framework=fsdp tokens=2B

# A home-grown FSDP training loop: nothing on the command line says what it trains,
# so the #FMTE lines above describe it.
srun python my_trainer/main.py --config configs/qwen7b.yaml
