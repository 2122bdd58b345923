#!/bin/bash
# A job that is not LLM training, as most of a GPU cluster's jobs are (scripts/ctld_cost.sh with
# FMTE_CTLD_SCRIPT=bench/ctld/other_job.sh): fmte must leave it untouched, and what it costs the
# controller for it is what every such job pays. Written for this benchmark.
#SBATCH --job-name=eval-vision
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00

module load cuda/12.4 2>/dev/null || true
source ~/venvs/vision/bin/activate
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
for split in val test; do
  python evaluate.py --checkpoint runs/resnet50/best.pt --split "$split" \
    --batch-size 256 --workers 8 --output "results/$split.json"
done
python summarize.py results/*.json > results/summary.txt
