#!/bin/bash
#SBATCH --job-name=tokenize
#SBATCH --partition=cpu
#SBATCH --cpus-per-task=16
#SBATCH --time=01:00:00

# Data preparation: not an LLM training job; fmte must leave it untouched.
python tools/preprocess_data.py \
    --input data/corpus.jsonl \
    --output-prefix data/corpus \
    --tokenizer-type GPT2BPETokenizer \
    --workers 16
echo done
