// Jobs more than one benchmark times.
#ifndef FMTE_BENCH_BENCH_JOBS_H_
#define FMTE_BENCH_BENCH_JOBS_H_

#include "fmte/job.h"

namespace fmte::bench {

// The features of issues 13 and 14 together: Nemotron 3 Nano (52 Mamba-2 / MoE / attention
// layers) under Megatron on 64 GPUs with expert parallelism 8, context parallelism 2, FP8 linears
// and selective recompute of the MoE layers.
inline TrainingJob NemotronEpCpFp8Job() {
  TrainingJob job;
  job.model = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16";
  job.gpus = 64;
  job.ep = 8;
  job.cp = 2;
  job.fp8 = Fp8::kTensorwise;
  job.sharding = Sharding::kZero1;
  job.precision = Precision::kMixedBf16;
  job.framework = Framework::kMegatron;
  job.seq_len = 16384;
  job.activation_checkpointing = Checkpointing::kSelective;
  job.recompute_modules = RecomputeModuleBit(RecomputeModule::kMoe);
  return job;
}

}  // namespace fmte::bench

#endif  // FMTE_BENCH_BENCH_JOBS_H_
