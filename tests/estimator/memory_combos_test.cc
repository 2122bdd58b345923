// Sharding x precision x offload combinations, pipeline in-flight activations, the logits/loss per
// framework and the memory savers. Each expected value is derived in the comment beside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "fmte/memory.h"
#include "memory_test_util.h"

namespace fmte {
namespace {

using testing::BaseJob;
using testing::GptArch;
using testing::Gpu80;
using testing::Llama2_7b;
using testing::LlamaArch;
using testing::Psi7_5B;

struct ComboRow {
  const char* name;
  Framework framework;
  Precision precision;
  Sharding sharding;
  int64_t gpus, gpus_per_node, tp;
  bool offload_optimizer, offload_params;
  double gpu_states_per_psi;    // weights + gradients + optimizer on the GPU, bytes per parameter
  double cpu_per_node_per_psi;  // host bytes per node per parameter
};

TEST(MemoryCombosTest, ShardingPrecisionOffload) {
  const double psi = 7.5e9;
  // clang-format off
  const ComboRow rows[] = {
      // fp32: 4 + 4 + 8.
      {"none fp32", Framework::kHf, Precision::kFp32, Sharding::kNone, 1, 0, 1, false, false, 16, 0},
      // AMP (HF --bf16): fp32 weights and grads + fp32 Adam = 16; DDP buckets are in `other`.
      {"ddp amp-bf16", Framework::kHf, Precision::kAmpBf16, Sharding::kDdp, 8, 8, 1, false, false, 16, 0},
      // ZeRO-2, DeepSpeed bf16: 2 (weights) + (2 + 12) / 8.
      {"zero2 mixed-bf16", Framework::kDeepspeed, Precision::kMixedBf16, Sharding::kZero2, 8, 8, 1, false, false, 2 + 14.0 / 8, 0},
      // ZeRO-3 pure bf16: (2 + 2 + 4) / 8.
      {"zero3 pure-bf16", Framework::kDeepspeed, Precision::kPureBf16, Sharding::kZero3, 8, 8, 1, false, false, 1, 0},
      // FSDP SHARD_GRAD_OP with MixedPrecision: fp32 shard 4 + fp32 grad 4 + Adam 8, all / 8
      // (the gathered bf16 parameters are in `other`).
      {"fsdp-grad-op mixed-bf16", Framework::kFsdp, Precision::kMixedBf16, Sharding::kFsdpGradOp, 8, 8, 1, false, false, 2, 0},
      // HYBRID_SHARD on 2 nodes x 8: sharded over the 8 GPUs of a node: 16 / 8.
      {"fsdp-hybrid 2x8", Framework::kFsdp, Precision::kMixedBf16, Sharding::kFsdpHybrid, 16, 8, 1, false, false, 2, 0},
      // NO_SHARD: 16 on every GPU.
      {"fsdp-no-shard", Framework::kFsdp, Precision::kMixedBf16, Sharding::kFsdpNoShard, 8, 8, 1, false, false, 16, 0},
      // ZeRO-3 + offload optimizer, 8 GPUs on 1 node: GPU keeps its 2/8 weight shard; the host holds
      // fp32 master + Adam (12) + fp32 grads (4) for all 8 GPUs: 16 per parameter per node
      // (DeepSpeed's cold estimate prints P*16/nodes times its 1.5 safety factor,
      // docs/formulas.md §3).
      {"zero3 offload optimizer", Framework::kDeepspeed, Precision::kMixedBf16, Sharding::kZero3, 8, 8, 1, true, false, 2.0 / 8, 16},
      // ... and offload params: nothing persistent on the GPU, host 16 + 2 = 18 per parameter
      // (DeepSpeed: P*18/nodes).
      {"zero3 offload both", Framework::kDeepspeed, Precision::kMixedBf16, Sharding::kZero3, 8, 8, 1, true, true, 0, 18},
      // Two nodes: the host bytes per node halve.
      {"zero3 offload both 2 nodes", Framework::kDeepspeed, Precision::kMixedBf16, Sharding::kZero3, 16, 8, 1, true, true, 0, 9},
      // Megatron tp 8 (every weight split), bf16 with fp32 grads: 18 / 8.
      {"megatron tp8 bf16", Framework::kMegatron, Precision::kMixedBf16, Sharding::kNone, 8, 8, 8, false, false, 18.0 / 8, 0},
  };
  // clang-format on
  const ModelArch m = Psi7_5B();
  for (const ComboRow& r : rows) {
    TrainingJob j = BaseJob();
    j.framework = r.framework;
    j.precision = r.precision;
    j.sharding = r.sharding;
    j.gpus = r.gpus;
    j.gpus_per_node = r.gpus_per_node;
    j.tp = r.tp;
    j.offload_optimizer = r.offload_optimizer;
    j.offload_params = r.offload_params;
    j.grad_accum = 2;
    j.seq_len = 16;
    ASSERT_TRUE(ValidateJob(j).ok()) << r.name << ": " << ValidateJob(j).ToString();
    Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
    ASSERT_TRUE(e.ok()) << r.name << ": " << e.status().ToString();
    const double states = static_cast<double>(e->breakdown.weights + e->breakdown.optimizer +
                                              (r.offload_optimizer ? 0 : e->breakdown.gradients));
    EXPECT_NEAR(states, r.gpu_states_per_psi * psi, 2) << r.name;
    EXPECT_NEAR(static_cast<double>(e->cpu_bytes_per_node), r.cpu_per_node_per_psi * psi, 8)
        << r.name;
  }
}

TEST(MemoryCombosTest, DdpBucketsAndFsdpGatheredWeights) {
  const ModelArch m = Psi7_5B();
  TrainingJob j = BaseJob();
  j.seq_len = 16;
  j.grad_accum = 2;
  j.precision = Precision::kFp32;
  const int64_t plain = EstimateMemory(m, j, Gpu80())->breakdown.other;  // one GPU
  // torch DDP (gradient_as_bucket_view=False): a second fp32 gradient copy, 4 * Psi = 3e10,
  // plus 5% fragmentation on it.
  j.gpus = 8;
  j.sharding = Sharding::kDdp;
  EXPECT_NEAR(static_cast<double>(EstimateMemory(m, j, Gpu80())->breakdown.other - plain),
              3e10 * 1.05, 1e9);
  // FSDP SHARD_GRAD_OP keeps all parameters gathered in bf16 through backward: >= 2 * Psi.
  j.precision = Precision::kMixedBf16;
  j.framework = Framework::kFsdp;
  j.sharding = Sharding::kFsdpGradOp;
  EXPECT_GE(EstimateMemory(m, j, Gpu80())->breakdown.other, 15000000000LL);
}

TEST(MemoryCombosTest, PipelineInFlightMicroBatches) {
  // GPT with a small vocabulary so that stage 0 is the heaviest. 1F1B: stage 0 holds p in-flight
  // micro-batches of L/p layers = L layers' worth (Korthikanti section 4.2.3); interleaved with v
  // chunks: L * (1 + (p - 1) / (p v)).
  const ModelArch gpt = GptArch(2048, 16, 24, 1024);
  TrainingJob j = BaseJob();
  j.framework = Framework::kMegatron;
  j.precision = Precision::kMixedBf16;
  j.attention = Attention::kEager;
  j.seq_len = 2048;
  j.gpus = 4;
  j.pp = 4;
  j.grad_accum = 8;
  const int64_t per_layer = LayerActivationBytes(gpt, j, 0);
  Result<MemoryEstimate> e = EstimateMemory(gpt, j, Gpu80());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->heaviest_stage, 0);
  EXPECT_EQ(e->breakdown.activations, 24 * per_layer);
  j.vpp = 2;
  e = EstimateMemory(gpt, j, Gpu80());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_NEAR(static_cast<double>(e->breakdown.activations), 24.0 * per_layer * (1 + 3.0 / 8), 2);
}

struct LogitsRow {
  const char* name;
  Framework framework;
  bool chunked;
  double bytes_per_token;  // per token, per the derivation in the comment
};

TEST(MemoryCombosTest, LogitsAndLossPerFramework) {
  // Llama-3-8B shape (V 128256, h 4096), LoRA (frozen head), 16-bit activations, 1 GPU:
  //   hf: at the loss backward the fp32 log-softmax output 4 and the two fp32 gradients
  //     nll_loss_backward and _log_softmax_backward_data allocate, 8: 12 per vocabulary entry
  //     (the 16-bit logits are dropped with the outputs before backward);
  //   torchtune chunked (8 chunks): 2 + 4 + 8/8 = 7 per entry;
  //   hf + chunked loss (Liger fused linear CE): no full logits; (2*2 + 8) per hidden unit = 12h;
  //   megatron: V padded to a multiple of 128 (already), fp32 softmax in place 4 + bf16 grad 2 = 6;
  //   litgpt chunked (lm_head_chunk_size=128 + chunked_cross_entropy, litgpt/utils.py): every
  //     chunk's 16-bit logits 2 and saved 16-bit log-softmax 2 for all 2000 tokens, plus one
  //     chunk of 2 x 128 tokens being turned into gradients (2 + 2): 4 x 2256 / 2000 per token.
  const ModelArch m = LlamaArch(4096, 32, 8, 14336, 4, 128256);
  // clang-format off
  const LogitsRow rows[] = {{"hf", Framework::kHf, false, 12.0 * 128256},
                            {"torchtune", Framework::kTorchtune, false, 7.0 * 128256},
                            {"hf chunked", Framework::kHf, true, 12.0 * 4096},
                            {"megatron", Framework::kMegatron, false, 6.0 * 128256},
                            {"litgpt chunked", Framework::kLitgpt, true, 4.0 * 128256 * 2256 / 2000}};
  // clang-format on
  for (const LogitsRow& r : rows) {
    TrainingJob j = BaseJob();
    j.method = Method::kLora;
    j.precision = Precision::kPureBf16;
    j.framework = r.framework;
    j.chunked_loss = r.chunked;
    j.seq_len = 1000;
    j.micro_batch = 2;
    Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(e->peak_phase, "forward-backward") << r.name;
    EXPECT_NEAR(static_cast<double>(e->breakdown.logits), 2000 * r.bytes_per_token, 1) << r.name;
  }
}

TEST(MemoryCombosTest, MemorySavers) {
  const ModelArch m = LlamaArch(4096, 32, 8, 14336, 32, 128256);
  TrainingJob j = BaseJob();
  j.framework = Framework::kTorchtune;
  j.precision = Precision::kPureBf16;
  j.seq_len = 8192;
  j.optimizer_in_backward = false;
  Result<MemoryEstimate> base = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(base.ok());
  // Activation offloading: at most two layers stay on the GPU, the rest goes to host memory.
  j.activation_offload = true;
  Result<MemoryEstimate> off = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(off.ok());
  EXPECT_LE(off->per_gpu_bytes, base->per_gpu_bytes);
  EXPECT_GT(off->cpu_bytes_per_node, 0);
  j.activation_offload = false;
  // Optimizer step in backward: gradients never exceed one module's (the 128256 x 4096 head:
  // 2 bytes x 525,336,576 in pure bf16).
  j.optimizer_in_backward = true;
  Result<MemoryEstimate> oib = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(oib.ok());
  EXPECT_LE(oib->breakdown.gradients, 2 * 525336576LL);
  EXPECT_LE(oib->per_gpu_bytes, base->per_gpu_bytes);
}

}  // namespace
}  // namespace fmte

namespace fmte {
namespace {

TEST(MemoryCombosTest, TensorParallelSplitsByRole) {
  // Llama-3-8B shape (h 4096, 32 heads, 8 KV heads, f 14336, 32 layers, V 128256), pure bf16, 2 B:
  // Megatron tp 8: every projection / 8 (8 KV heads: k,v / 8), norms replicated (2 x 4096 per
  //   layer + 4096 final), vocab-parallel embedding and head / 8:
  //   32 x (4096^2 x 2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) / 8 + 32 x 8192 + 4096
  //   + 2 x 128256 x 4096 / 8.
  // HF tp 16 (KV heads replicated over 2 ranks): q,o,MLP / 16, k,v / 8, embed_tokens replicated,
  //   lm_head / 16.
  const ModelArch m = testing::LlamaArch(4096, 32, 8, 14336, 32, 128256);
  const double proj = 4096.0 * 4096 * 2 + 3 * 4096.0 * 14336, kv = 2 * 4096.0 * 1024;
  const double norms = 32 * 8192.0 + 4096, vocab = 128256.0 * 4096;
  struct Row {
    Framework fw;
    int64_t tp;
    double params;
  } rows[] = {{Framework::kMegatron, 8, 32 * (proj + kv) / 8 + norms + 2 * vocab / 8},
              {Framework::kHf, 16, 32 * (proj / 16 + kv / 8) + norms + vocab + vocab / 16}};
  for (const Row& r : rows) {
    TrainingJob j = testing::BaseJob();
    j.framework = r.fw;
    j.precision = Precision::kPureBf16;
    j.tp = r.tp;
    j.gpus = r.tp;
    j.seq_len = 128;
    Result<MemoryEstimate> e = EstimateMemory(m, j, testing::Gpu80());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_NEAR(static_cast<double>(e->breakdown.weights), 2 * r.params, 2) << ToString(r.fw);
  }
}

TEST(MemoryCombosTest, RanksAndPhasesNameTheHeaviest) {
  // memory.ranks: one entry per pipeline stage (the first holds the embedding, the last the head);
  // per_gpu_bytes is the heaviest one's. memory.phases: the three phases of a step on that stage;
  // the largest is peak_phase and equals per_gpu_bytes.
  const ModelArch llama = Llama2_7b();
  for (const int64_t pp : {int64_t{1}, int64_t{4}}) {
    SCOPED_TRACE("pp " + std::to_string(pp));
    TrainingJob j = BaseJob();
    j.framework = Framework::kMegatron;
    j.precision = Precision::kMixedBf16;
    j.sharding = Sharding::kZero1;
    j.gpus = 8;
    j.pp = pp;
    j.grad_accum = 8;
    Result<MemoryEstimate> e = EstimateMemory(llama, j, Gpu80());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_EQ(e->ranks.size(), static_cast<size_t>(pp));
    EXPECT_TRUE(e->ranks.front().embedding);
    EXPECT_TRUE(e->ranks.back().head);
    int64_t heaviest = 0;
    int layers = 0;
    for (const MemoryRank& r : e->ranks) {
      heaviest = std::max(heaviest, r.per_gpu_bytes);
      layers += r.layers;
    }
    EXPECT_EQ(layers, llama.num_layers);
    EXPECT_EQ(heaviest, e->per_gpu_bytes);
    EXPECT_EQ(e->ranks[static_cast<size_t>(e->heaviest_stage)].per_gpu_bytes, e->per_gpu_bytes);
    ASSERT_EQ(e->phases.size(), 4u);
    const MemoryPhase* top = &e->phases[0];
    for (const MemoryPhase& p : e->phases) {
      if (p.per_gpu_bytes > top->per_gpu_bytes) top = &p;
      EXPECT_LE(p.allocated_bytes, p.per_gpu_bytes) << p.name;
    }
    // The first step's forward-backward, before the optimizer's states, never sets the peak.
    EXPECT_NE(std::string(top->name), "first-forward-backward");
    EXPECT_EQ(std::string(top->name), e->peak_phase);
    EXPECT_NEAR(static_cast<double>(top->per_gpu_bytes), static_cast<double>(e->per_gpu_bytes),
                64);  // each part is saturated (rounded) on its own
  }
}

}  // namespace
}  // namespace fmte
