// Speed of one whole estimate (issues 13 and 14: under 5 us with expert and context parallelism
// and FP8): fmte::Estimate, as `fmte-advise estimate` and job_submit call it, with the shipped
// catalogs and step-time model loaded once outside the timed loop: the per-GPU memory with its
// phases, ranks and bound, the step time with its stages and correction, and the wall time.
#include <benchmark/benchmark.h>

#include <string>

#include "bench_jobs.h"
#include "fmte/estimator.h"

namespace {

const fmte::Catalogs* Shipped(benchmark::State& state) {
  static const fmte::Result<fmte::Catalogs> catalogs = fmte::LoadCatalogs(
      std::string(FMTE_SOURCE_DIR) + "/etc", std::string(FMTE_SOURCE_DIR) + "/regressors");
  if (!catalogs.ok()) {
    state.SkipWithError(catalogs.status().ToString().c_str());
    return nullptr;
  }
  return &*catalogs;
}

// Times Estimate of `job` with the catalog model and GPU named (skipped, with the reason, when the
// job does not estimate: the loop would time the error path).
void TimeEstimate(benchmark::State& state, const fmte::TrainingJob& job, const char* gpu_name) {
  const fmte::Catalogs* catalogs = Shipped(state);
  if (catalogs == nullptr) return;
  auto model = catalogs->models.Find(job.model);
  auto gpu = catalogs->gpus.Find(gpu_name);
  if (!model.ok() || !gpu.ok()) {
    state.SkipWithError("model or GPU missing from the catalogs");
    return;
  }
  if (auto e = fmte::Estimate(*catalogs, **model, job, **gpu); !e.ok()) {
    state.SkipWithError(e.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    auto e = fmte::Estimate(*catalogs, **model, job, **gpu);
    benchmark::DoNotOptimize(e);
  }
}

// The common case: an 8B model's LoRA fine-tuning under the HF Trainer on one node.
void BM_EstimateLlama8bLoraHf(benchmark::State& state) {
  fmte::TrainingJob job;
  job.model = "meta-llama/Llama-3.1-8B";
  job.method = fmte::Method::kLora;
  job.framework = fmte::Framework::kHf;
  job.gpus = 8;
  job.precision = fmte::Precision::kMixedBf16;
  job.seq_len = 4096;
  job.micro_batch = 2;
  job.activation_checkpointing = fmte::Checkpointing::kFull;
  job.steps = 1000;
  TimeEstimate(state, job, "H100-SXM5-80GB");
}
BENCHMARK(BM_EstimateLlama8bLoraHf);

// Expert parallelism, context parallelism and FP8 together (bench_jobs.h).
void BM_EstimateNemotronEpCpFp8(benchmark::State& state) {
  fmte::TrainingJob job = fmte::bench::NemotronEpCpFp8Job();
  job.steps = 1000;
  TimeEstimate(state, job, "H100-SXM5-80GB");
}
BENCHMARK(BM_EstimateNemotronEpCpFp8);

// A long-context dense job: Llama-3.1-70B at 131,072 tokens with tp 8, cp 8 and pp 2 on 128
// GPUs, MXFP8 on Blackwell.
void BM_EstimateLlama70bCp8Mxfp8(benchmark::State& state) {
  fmte::TrainingJob job;
  job.model = "meta-llama/Llama-3.1-70B";
  job.framework = fmte::Framework::kMegatron;
  job.gpus = 128;
  job.tp = 8;
  job.cp = 8;
  job.pp = 2;
  job.sequence_parallel = true;
  job.fp8 = fmte::Fp8::kMxfp8;
  job.sharding = fmte::Sharding::kZero1;
  job.precision = fmte::Precision::kMixedBf16;
  job.seq_len = 131072;
  job.activation_checkpointing = fmte::Checkpointing::kFull;
  job.steps = 1000;
  TimeEstimate(state, job, "B200-HGX");
}
BENCHMARK(BM_EstimateLlama70bCp8Mxfp8);

}  // namespace
