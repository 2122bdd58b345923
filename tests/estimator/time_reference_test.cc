// Step time of large models against published throughput that fmte never trained on.
//
// fms-fsdp (github.com/foundation-model-stack/fms-fsdp, README "Training Throughput" table): FMS's
// LLaMA pretrained with PyTorch FSDP on 128 A100s
// (16 nodes x 8), sequence length 4096 (train_config default), bf16 mixed precision:
//   7b  HSDP, no activation checkpointing, batch 2: 3760 tokens/GPU/s
//   13b HSDP, no activation checkpointing, batch 1: 1700 tokens/GPU/s
//   34b FSDP, activation checkpointing,   batch 8:  772 tokens/GPU/s
//   70b FSDP, activation checkpointing,   batch 6:  380 tokens/GPU/s
// The nodes: the repo's scripts load AWS EFA libraries (/opt/amazon/efa), i.e. p4de.24xlarge:
// 8x A100-SXM4-80GB with NVLink 3, 400 Gb/s EFA per node (AWS instance page).
// Tolerance: the run's exact network and software versions are not published; 25% is what the
// time limit's calibrated bound has to absorb. None of these numbers was used in fitting: the
// step-time constants come from vTrain's measured iterations and the ai4ci operator samples.
// (Before the operator-learned GEMM curve, 70b was predicted at 203 tokens/GPU/s: -47%.)
// (Before HSDP's all-reduce across nodes was hidden under backward, as PyTorch FSDP issues it on
// a stream of its own, 7b and 13b were predicted 13% and 22% slow; now 17% and 16% fast.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fmte/estimator.h"
#include "fmte/request.h"

namespace fmte {
namespace {

struct Published {
  const char* flags;  // fms-fsdp main_training.py flags of the run
  double tokens_per_s_per_gpu;
};

TEST(TimeReferenceTest, FmsFsdpThroughputOn128A100) {
  auto est = Estimator::Load();
  ASSERT_TRUE(est.ok()) << est.status().ToString();
  ASSERT_TRUE(est->catalogs().has_time_model);
  const Published kRuns[] = {
      {"--model_variant=7b --sharding_strategy=hsdp --batch_size=2", 3760},
      {"--model_variant=13b --sharding_strategy=hsdp --batch_size=1", 1700},
      {"--model_variant=34b --sharding_strategy=fsdp --fsdp_activation_checkpointing=True "
       "--batch_size=8",
       772},
      {"--model_variant=70b --sharding_strategy=fsdp --fsdp_activation_checkpointing=True "
       "--batch_size=6",
       380},
  };
  auto gpu = est->catalogs().gpus.Find("A100-SXM4-80GB");
  ASSERT_TRUE(gpu.ok());
  for (const Published& p : kRuns) {
    SlurmFacts facts;
    facts.tres_per_node = "gres:gpu:a100:8";
    facts.min_nodes = 16;
    auto req = ParseJobRequest(
        "torchrun --nnodes=16 --nproc_per_node=8 main_training.py " + std::string(p.flags) + "\n",
        {}, facts);
    TrainingJob job = req.job;
    job.gpus = 128;
    job.gpus_per_node = 8;
    job.inter_node_gbps = 400;
    auto arch = req.arch_json.empty() ? ResolveModel(est->catalogs().models, job.model)
                                      : ParseModelConfig(req.arch_json, job.model);
    ASSERT_TRUE(arch.ok()) << p.flags << ": " << arch.status().ToString();
    auto e = est->Estimate(*arch, job, **gpu);
    ASSERT_TRUE(e.ok()) << p.flags << ": " << e.status().ToString();
    ASSERT_TRUE(e->has_step_time);
    const double got = e->time.step.tokens_per_s_per_gpu;
    EXPECT_NEAR(got / p.tokens_per_s_per_gpu, 1.0, 0.25)
        << p.flags << ": predicted " << got << " tokens/GPU/s, published " << p.tokens_per_s_per_gpu
        << " (MFU " << e->time.step.mfu << ")";
  }
}

}  // namespace
}  // namespace fmte
