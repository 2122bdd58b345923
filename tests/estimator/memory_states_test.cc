// Model states per GPU (weights + gradients + optimizer) against published tables, and QLoRA
// weight bytes by derivation.
#include <gtest/gtest.h>

#include <cstdint>

#include "fmte/memory.h"
#include "fmte/model.h"
#include "memory_test_util.h"

namespace fmte {
namespace {

using testing::BaseJob;
using testing::Gpu80;
using testing::Llama2_7b;
using testing::Psi7_5B;

int64_t ModelStateBytes(const MemoryEstimate& e) {
  return e.breakdown.weights + e.breakdown.gradients + e.breakdown.optimizer;
}

struct StatesRow {
  const char* source;
  Framework framework;
  Precision precision;
  Sharding sharding;
  int64_t gpus;
  double expected_bytes;
  double tolerance_bytes;
};

TEST(MemoryStatesTest, PublishedModelStateTables) {
  const ModelArch m = Psi7_5B();
  ASSERT_EQ(m.Counts().total, 7500000000LL);
  const double psi = 7.5e9;
  // clang-format off
  const StatesRow rows[] = {
      // ZeRO paper (Rajbhandari et al. 2020), Figure 1: Psi = 7.5B, N_d = 64, K = 12, fp16 mixed
      // precision Adam. Baseline (2+2+K)Psi = 120GB; P_os 31.4GB; P_os+g 16.6GB; P_os+g+p 1.9GB.
      {"ZeRO fig.1 baseline", Framework::kDeepspeed, Precision::kMixedFp16, Sharding::kDdp, 64, 120e9, 0.05e9},
      {"ZeRO fig.1 P_os", Framework::kDeepspeed, Precision::kMixedFp16, Sharding::kZero1, 64, 31.4e9, 0.05e9},
      {"ZeRO fig.1 P_os+g", Framework::kDeepspeed, Precision::kMixedFp16, Sharding::kZero2, 64, 16.6e9, 0.05e9},
      {"ZeRO fig.1 P_os+g+p", Framework::kDeepspeed, Precision::kMixedFp16, Sharding::kZero3, 64, 1.9e9, 0.05e9},
      // Megatron-LM docs, distributed optimizer ("theoretical number of bytes per parameter",
      // d = data-parallel size): fp16 param/fp16 grads 20 | 4 + 16/d; bf16 param/fp32 grads
      // 18 | 6 + 12/d; fp32 16 | 8 + 8/d. Here d = 8.
      {"Megatron fp16", Framework::kMegatron, Precision::kMixedFp16, Sharding::kNone, 8, 20 * psi, 1},
      {"Megatron fp16 distributed", Framework::kMegatron, Precision::kMixedFp16, Sharding::kZero1, 8, (4 + 16.0 / 8) * psi, 1},
      {"Megatron bf16", Framework::kMegatron, Precision::kMixedBf16, Sharding::kNone, 8, 18 * psi, 1},
      {"Megatron bf16 distributed", Framework::kMegatron, Precision::kMixedBf16, Sharding::kZero1, 8, (6 + 12.0 / 8) * psi, 1},
      {"Megatron fp32", Framework::kMegatron, Precision::kFp32, Sharding::kNone, 8, 16 * psi, 1},
      {"Megatron fp32 distributed", Framework::kMegatron, Precision::kFp32, Sharding::kZero1, 8, (8 + 8.0 / 8) * psi, 1},
      // docs/formulas.md §2: HF Trainer --bf16 (AMP): fp32 weights 4 + fp32 grads 4 + Adam 8 = 16;
      // pure bf16: 2 + 2 + 4 = 8.
      {"HF amp-bf16", Framework::kHf, Precision::kAmpBf16, Sharding::kNone, 1, 16 * psi, 1},
      {"HF pure-bf16", Framework::kHf, Precision::kPureBf16, Sharding::kNone, 1, 8 * psi, 1},
      // FSDP full shard with MixedPrecision: fp32 flat param 4 + fp32 grad 4 + Adam 8, all /d.
      {"FSDP full, 8 GPUs", Framework::kFsdp, Precision::kMixedBf16, Sharding::kFsdpFull, 8, 16 * psi / 8, 1},
  };
  // clang-format on
  for (const StatesRow& r : rows) {
    TrainingJob j = BaseJob();
    j.framework = r.framework;
    j.precision = r.precision;
    j.sharding = r.sharding;
    j.gpus = r.gpus;
    j.grad_accum = 2;  // gradients of earlier micro-batches are alive at every phase
    j.seq_len = 16;
    Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
    ASSERT_TRUE(e.ok()) << r.source << ": " << e.status().ToString();
    EXPECT_NEAR(static_cast<double>(ModelStateBytes(*e)), r.expected_bytes, r.tolerance_bytes)
        << r.source;
  }
}

struct OptimizerRow {
  const char* name;
  Optimizer optimizer;
  double bytes_per_param;  // derivation in the comment of the test
};

TEST(MemoryStatesTest, OptimizersPerParameter) {
  // fp32 training of the 7.5B test model (weights 4 + grads 4 + states):
  //   adamw: 2 fp32 states = 8 -> 16; sgd with momentum: 1 state = 4 -> 12;
  //   adamw-8bit: 2 x (1 + 4/256 absmax) = 2.03125 -> 10.03125 (every tensor >= 4096 elements);
  //   adafactor: factored row+col statistics, fp32: 29 x (5000 + 50000) + (50000 + 5000) elements
  //   -> 8 * 7.5e9 + 4 * 30 * 55000 bytes.
  const ModelArch m = Psi7_5B();
  const double psi = 7.5e9;
  // clang-format off
  const OptimizerRow rows[] = {{"adamw", Optimizer::kAdamW, 16},
                               {"sgd", Optimizer::kSgd, 12},
                               {"adamw-8bit", Optimizer::kAdamW8bit, 10.03125},
                               {"adafactor", Optimizer::kAdafactor, 8 + 4.0 * 30 * 55000 / 7.5e9}};
  // clang-format on
  for (const OptimizerRow& r : rows) {
    TrainingJob j = BaseJob();
    j.precision = Precision::kFp32;
    j.optimizer = r.optimizer;
    j.grad_accum = 2;
    j.seq_len = 16;
    Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_NEAR(static_cast<double>(ModelStateBytes(*e)), r.bytes_per_param * psi, 2) << r.name;
  }
}

// LoRA r 8 on q_proj and v_proj (litgpt's default adapters, finetune/lora.py; PEFT's for Llama).
TrainingJob QvJob(Framework framework, Method method, Precision precision) {
  TrainingJob j = BaseJob();
  j.framework = framework;
  j.method = method;
  j.lora_r = 8;
  j.lora_targets = {"q_proj", "v_proj"};
  j.precision = precision;
  return j;
}

TEST(MemoryStatesTest, LitgptQloraQuantisesItsHeadAndKeepsTheRestIn16Bits) {
  // litgpt builds the model under Lightning's BitsandbytesPrecision, which makes every nn.Linear
  // a 4-bit one (the lm_head too) and never calls PEFT's prepare_model_for_kbit_training: the
  // embeddings and norms stay bf16 (lightning/fabric/plugins/precision/bitsandbytes.py). Llama-2-7b
  // (vocabulary 32000, h 4096): of QloraWeightBytes' 262,410,240 non-block parameters the
  // embedding and the 32 x 2 + 1 norms (131,338,240) take 2 bytes, the head (131,072,000) 0.5
  // byte, the adapters (r 8 on q_proj, v_proj: 4,194,304) 4 (ChooseDtypes reads litgpt's LoRA
  // as PEFT's):
  //   3,238,002,688 + 2 x 131,338,240 + 0.5 x 131,072,000 + 4 x 4,194,304 = 3,582,992,384.
  const ModelArch m = Llama2_7b();
  TrainingJob j = QvJob(Framework::kLitgpt, Method::kQlora, Precision::kPureBf16);
  j.seq_len = 512;
  Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->breakdown.weights, 3582992384LL);
}

TEST(MemoryStatesTest, QloraWeightBytes) {
  // Llama-2-7b: block linears 32 x (4 x 4096^2 + 3 x 4096 x 11008) = 6,476,005,376 quantised;
  // embeddings, head and norms 262,410,240 kept in fp32 by prepare_model_for_kbit_training;
  // LoRA r=8 on q_proj,v_proj: 4,194,304 fp32 adapters.
  //   nf4: 0.5 B per quantised weight -> 3,238,002,688 + 4 x 262,410,240 + 4 x 4,194,304
  //        = 4,304,420,864 bytes of weights.
  //   int8: 1 B per weight -> 6,476,005,376 + 1,049,640,960 + 16,777,216 = 7,542,423,552.
  // Quantisation constants (breakdown.other): fp32 absmax per 64 weights = 404,750,336; with
  // double quantisation 6,476,005,376/64 + 4 x 6,476,005,376/16384 = 102,768,640.
  const ModelArch m = Llama2_7b();
  TrainingJob j = BaseJob();
  j.method = Method::kQlora;
  j.lora_r = 8;
  j.precision = Precision::kPureBf16;
  j.seq_len = 512;
  Result<MemoryEstimate> nf4 = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(nf4.ok()) << nf4.status().ToString();
  EXPECT_EQ(nf4->trainable_params, 4194304);
  EXPECT_EQ(nf4->breakdown.weights, 4304420864LL);
  j.double_quant = true;
  Result<MemoryEstimate> dq = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(dq.ok());
  EXPECT_EQ(dq->breakdown.weights, nf4->breakdown.weights);
  // Everything else is equal, and fragmentation is 5% of the allocated peak.
  EXPECT_NEAR(static_cast<double>(nf4->allocator_peak_bytes - dq->allocator_peak_bytes),
              (404750336.0 - 102768640.0) * 1.05, 4);
  j.double_quant = false;
  j.quant = Quant::kInt8;
  Result<MemoryEstimate> int8 = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(int8.ok());
  EXPECT_EQ(int8->breakdown.weights, 7542423552LL);
  // axolotl leaves the 262,410,240 unquantised weights in the model's bf16 (kbit_upcast false):
  // 2 bytes each instead of 4.
  j.quant = Quant::kNf4;
  j.kbit_upcast = false;
  Result<MemoryEstimate> axolotl = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(axolotl.ok());
  EXPECT_EQ(axolotl->breakdown.weights, 4304420864LL - 2 * 262410240LL);
}

TEST(MemoryStatesTest, LoraFrozenBaseCarriesNoGradients) {
  // LoRA r=8 q,v on Llama-2-7b, pure-bf16 base, HF PEFT: base weights 2 B x 6,738,415,616;
  // adapters fp32 4 B; gradients fp32 4 B x 4,194,304; AdamW fp32 8 B x 4,194,304.
  const ModelArch m = Llama2_7b();
  TrainingJob j = BaseJob();
  j.method = Method::kLora;
  j.lora_r = 8;
  j.precision = Precision::kPureBf16;
  j.grad_accum = 2;
  Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->breakdown.weights, 2 * 6738415616LL + 4 * 4194304LL);
  EXPECT_EQ(e->breakdown.gradients, 4 * 4194304LL);
  EXPECT_EQ(e->breakdown.optimizer, 8 * 4194304LL);
}

// Expert parallelism, by derivation from Mixtral-8x7B's config.json (etc/models: 32 layers,
// hidden 4096, 8 routed experts of 3 x 4096 x 14336, 32/8 heads, vocabulary 32000, untied):
//   routed experts E = 32 x 8 x 3 x 4096 x 14336            = 45,097,156,608
//   the rest        D = 46,702,792,704 (model card, 46.7B) - E = 1,605,636,096
//     (attention 32 x 41,943,040 + router 32 x 32,768 + norms 65 x 4096 + 2 x 32000 x 4096)
// Megatron with the distributed optimizer, bf16 params with fp32 main grads (Megatron-LM docs:
// 6 + 12/d bytes per parameter), 8 GPUs, dp 8, ep 8: each rank holds D + E/8 parameters;
// the optimizer's 12 bytes are sharded over the data-parallel group (8) for D and over the
// expert-data-parallel group (dp / ep = 1) for the experts (Megatron-core
// distributed/param_and_grad_buffer: expert params go to the expert_data_parallel group).
//   weights   2 x (D + E/8)      gradients 4 x (D + E/8)      optimizer 12 x (D/8 + E/8)
// Without ep: 2 x (D + E), 4 x (D + E), 12 x (D + E) / 8 (the same optimizer bytes).
TEST(MemoryStatesTest, ExpertParallelismSplitsRoutedExperts) {
  Result<ModelArch> a =
      LoadModelConfigFile(std::string(FMTE_SOURCE_DIR) + "/etc/models/mistralai/Mixtral-8x7B-v0.1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const double e_params = 32.0 * 8 * 3 * 4096 * 14336, d_params = 46702792704.0 - e_params;
  ASSERT_EQ(a->Counts().total, 46702792704LL);
  TrainingJob j = BaseJob();
  j.model = a->id;
  j.framework = Framework::kMegatron;
  j.precision = Precision::kMixedBf16;
  j.sharding = Sharding::kZero1;
  j.gpus = 8;
  j.gpus_per_node = 8;
  j.activation_checkpointing = Checkpointing::kFull;
  auto check = [&](int64_t ep) {
    SCOPED_TRACE("ep " + std::to_string(ep));
    j.ep = ep;
    Result<MemoryEstimate> est = EstimateMemory(*a, j, Gpu80());
    ASSERT_TRUE(est.ok()) << est.status().ToString();
    const double per_rank = d_params + e_params / static_cast<double>(ep);
    EXPECT_NEAR(static_cast<double>(est->breakdown.weights), 2 * per_rank, 1e6);
    EXPECT_NEAR(static_cast<double>(est->breakdown.gradients), 4 * per_rank, 1e6);
    EXPECT_NEAR(static_cast<double>(est->breakdown.optimizer), 12 * (d_params + e_params) / 8, 1e6);
  };
  check(1);
  check(8);
  check(2);
  // ep must divide the 8 experts and the data-parallel group.
  j.ep = 3;
  EXPECT_FALSE(EstimateMemory(*a, j, Gpu80()).ok());
  j.ep = 16;
  EXPECT_FALSE(ValidateJob(j).ok());
  // MoE parallel folding (Megatron --expert-tensor-parallel-size 1): tp 2 for the dense layers,
  // the experts unsplit by tensor parallelism and spread over ep 8 of the 8 ranks: per rank
  // D/2 dense (embedding and head split too; norms and routers, under 2M, replicated) and E/8
  // expert parameters; the distributed optimizer shards dense states over dp 4 and expert states
  // over the expert-data-parallel group, tp x dp / (etp x ep) = 1 rank.
  j.ep = 8;
  j.tp = 2;
  j.etp = 1;
  {
    Result<MemoryEstimate> est = EstimateMemory(*a, j, Gpu80());
    ASSERT_TRUE(est.ok()) << est.status().ToString();
    const double dense = d_params / 2, expert = e_params / 8;
    EXPECT_NEAR(static_cast<double>(est->breakdown.weights), 2 * (dense + expert), 2 * 2e6);
    EXPECT_NEAR(static_cast<double>(est->breakdown.optimizer), 12 * (dense / 4 + expert), 12 * 2e6);
  }
  j.etp = 2;  // 2 x 8 does not fit in the 8 ranks of the stage
  EXPECT_FALSE(ValidateJob(j).ok());
  j.etp = 0;  // without folding ep must divide dp (4)
  EXPECT_FALSE(ValidateJob(j).ok());
  j.tp = 1;
  // A dense model has no experts to split.
  j.ep = 2;
  j.model = "test/llama";
  EXPECT_FALSE(EstimateMemory(testing::LlamaArch(4096, 32, 8, 14336, 32, 32000), j, Gpu80()).ok());
}

int64_t PhaseAllocated(const MemoryEstimate& e, std::string_view name) {
  for (const MemoryPhase& p : e.phases)
    if (name == p.name) return p.allocated_bytes;
  ADD_FAILURE() << "no phase " << name;
  return 0;
}

// An evaluation forward (HF Trainer evaluate() -> prediction_step under torch.no_grad, after the
// optimizer step and model.zero_grad(set_to_none=True)) holds the weights and optimizer states but
// no gradients and no saved activations; its peak is the loss over the evaluation batch's logits:
// the model's 16-bit logits, transformers ForCausalLMLoss's .float() copy and cross_entropy's fp32
// log_softmax output, 2 + 4 + 4 bytes per token per vocabulary entry (loss/loss_utils.py), beside
// one layer's working set. Derived for Llama-2-7b (h 4096, SwiGLU 11008, vocabulary 32,000): a
// SwiGLU MLP holds act(gate(x)), up(x) and their product, 3 x 11008 16-bit values per token, the
// widest of the layer's tensors, plus the residual stream and its normed copy (2 x 4096):
// (33024 + 8192) x 2 = 82,432 bytes per token.
TEST(MemoryStatesTest, EvaluationHoldsItsBatchsLogitsBesideTheStates) {
  const ModelArch llama = Llama2_7b();
  TrainingJob j = BaseJob();
  j.method = Method::kLora;
  j.precision = Precision::kPureBf16;
  j.seq_len = 4096;
  j.micro_batch = 1;
  j.activation_checkpointing = Checkpointing::kFull;
  Result<MemoryEstimate> none = EstimateMemory(llama, j, Gpu80());
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  for (const MemoryPhase& p : none->phases) EXPECT_STRNE(p.name, "evaluation");
  auto eval_phase = [&](int64_t batch) {
    TrainingJob k = j;
    k.eval_batch = batch;
    Result<MemoryEstimate> e = EstimateMemory(llama, k, Gpu80());
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? PhaseAllocated(*e, "evaluation") : 0;
  };
  const double per_sequence = 4096.0 * (32000.0 * (2 + 4 + 4) + 82432.0);
  EXPECT_NEAR(static_cast<double>(eval_phase(8) - eval_phase(4)), 4 * per_sequence,
              1e-6 * per_sequence);
  // What the evaluation holds besides its batch: the weights, the adapters' optimizer states and
  // framework buffers, less than the training step's end of backward (which adds the gradients).
  const double states = static_cast<double>(eval_phase(1)) - per_sequence;
  EXPECT_GE(states, static_cast<double>(none->breakdown.weights));
  EXPECT_LT(states, static_cast<double>(PhaseAllocated(*none, "end-of-backward")));
  // Eight 4096-token sequences (the Trainer's default per_device_eval_batch_size) where training
  // takes one: the evaluation is the job's peak; the low end the policy rejects on stays the
  // training step's (the evaluation set's lengths are the data's).
  TrainingJob k = j;
  k.eval_batch = 8;
  Result<MemoryEstimate> eight = EstimateMemory(llama, k, Gpu80());
  ASSERT_TRUE(eight.ok());
  EXPECT_EQ(eight->peak_phase, "evaluation");
  EXPECT_GT(eight->per_gpu_bytes, none->per_gpu_bytes);
  EXPECT_EQ(eight->phases.back().name, std::string_view("evaluation"));
  EXPECT_EQ(eight->per_gpu_bytes, eight->phases.back().per_gpu_bytes);
  EXPECT_EQ(eight->low_bytes, none->low_bytes);
  // Megatron's main_grad buffer stays allocated through evaluate().
  TrainingJob m = j;
  m.method = Method::kFull;
  m.framework = Framework::kMegatron;
  m.precision = Precision::kMixedBf16;
  m.eval_batch = 1;
  Result<MemoryEstimate> meg = EstimateMemory(llama, m, Gpu80());
  ASSERT_TRUE(meg.ok()) << meg.status().ToString();
  ASSERT_GT(meg->breakdown.gradients, 0);
  EXPECT_GE(PhaseAllocated(*meg, "evaluation"),
            meg->breakdown.weights + meg->breakdown.gradients + meg->breakdown.optimizer);
  m.eval_batch = -1;
  EXPECT_FALSE(ValidateJob(m).ok());
}

int64_t PhaseHost(const MemoryEstimate& e, std::string_view name) {
  for (const MemoryPhase& p : e.phases)
    if (name == p.name) return p.host_bytes;
  return -1;
}

// A checkpoint save with FSDP1's FULL_STATE_DICT (accelerate's default for FSDP1, offload_to_cpu
// and rank0_only) gathers one FSDP unit at a time on every GPU, the optimizer's states in one fp32
// buffer of the unit's unsharded size (torch/distributed/fsdp/_optim_utils.py
// _allgather_orig_param_states), and rank 0's host receives the whole model, then the whole
// optimizer state (the HF Trainer saves them one after the other). Derived for Llama-2-7b
// (P = 6,738,415,616) fully fine-tuned in amp-bf16 (fp32 flat parameters): host max(4 P, AdamW's
// 2 x 4 P) = 8 P; the largest unit is the root (embeddings, head and final norm: 2 x 32,000 x
// 4096 + 4096 = 262,148,096 parameters), 4 bytes each while gathered. litgpt's full.py saves model
// and optimizer in one dict (bf16-true: 2 P + 2 x 2 P); a sharded save (torchtitan's DCP,
// --state-dict sharded, FSDP2's default) gathers nothing.
TEST(MemoryStatesTest, AFullStateDictSaveGathersOnRankZerosHost) {
  const ModelArch llama = Llama2_7b();
  const double P = 6738415616.0, root = 262148096.0;
  TrainingJob j = BaseJob();
  j.precision = Precision::kAmpBf16;
  j.sharding = Sharding::kFsdpFull;
  j.gpus = 8;
  j.framework = Framework::kHf;
  j.activation_checkpointing = Checkpointing::kFull;
  Result<MemoryEstimate> hf = EstimateMemory(llama, j, Gpu80());
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  EXPECT_NEAR(static_cast<double>(PhaseHost(*hf, "checkpoint-save")), 8 * P, 1e6);
  EXPECT_NEAR(static_cast<double>(PhaseAllocated(*hf, "checkpoint-save") - hf->breakdown.weights -
                                  hf->breakdown.optimizer),
              4 * root, 1e6);
  TrainingJob lit = j;
  lit.framework = Framework::kLitgpt;
  lit.precision = Precision::kPureBf16;
  Result<MemoryEstimate> litgpt = EstimateMemory(llama, lit, Gpu80());
  ASSERT_TRUE(litgpt.ok()) << litgpt.status().ToString();
  EXPECT_NEAR(static_cast<double>(PhaseHost(*litgpt, "checkpoint-save")), 6 * P, 1e6);
  for (const auto& [framework, state_dict] : {std::pair{Framework::kFsdp, StateDict::kAuto},
                                              std::pair{Framework::kHf, StateDict::kSharded}}) {
    TrainingJob k = j;
    k.framework = framework;
    k.state_dict = state_dict;
    Result<MemoryEstimate> e = EstimateMemory(llama, k, Gpu80());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(PhaseHost(*e, "checkpoint-save"), -1);
  }
  // ZeRO-3 consolidates the 16-bit weights on rank 0 only when asked
  // (stage3_gather_16bit_weights_on_model_save: --state-dict full): 2 P on the host, one module
  // gathered at a time (the largest: the 32,000 x 4096 embedding, 2 bytes each); the optimizer
  // goes to the sharded ZeRO checkpoint.
  TrainingJob zero3 = j;
  zero3.framework = Framework::kDeepspeed;
  zero3.sharding = Sharding::kZero3;
  zero3.precision = Precision::kMixedBf16;
  Result<MemoryEstimate> z3 = EstimateMemory(llama, zero3, Gpu80());
  ASSERT_TRUE(z3.ok()) << z3.status().ToString();
  EXPECT_EQ(PhaseHost(*z3, "checkpoint-save"), -1);
  zero3.state_dict = StateDict::kFull;
  z3 = EstimateMemory(llama, zero3, Gpu80());
  ASSERT_TRUE(z3.ok()) << z3.status().ToString();
  EXPECT_NEAR(static_cast<double>(PhaseHost(*z3, "checkpoint-save")), 2 * P, 1e6);
  EXPECT_GE(PhaseAllocated(*z3, "checkpoint-save"),
            z3->breakdown.weights + z3->breakdown.optimizer + 2 * 32000 * 4096);
  // Without sharding there is nothing to gather.
  TrainingJob single = j;
  single.sharding = Sharding::kNone;
  single.gpus = 1;
  single.state_dict = StateDict::kFull;
  Result<MemoryEstimate> one = EstimateMemory(llama, single, Gpu80());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(PhaseHost(*one, "checkpoint-save"), -1);
}

TEST(MemoryStatesTest, ForeachAdamWAddsOneStateSizedTemporaryAtTheStep) {
  // Full AdamW fine-tuning of Llama-2-7b (P = 6,738,415,616) in amp-bf16 under the HF Trainer:
  // the optimizer step holds fp32 weights, gradients and both moments (16 P); torch.optim's
  // foreach step adds one state-sized fp32 list (torch._foreach_sqrt(exp_avg_sq), 4 P), the fused
  // step none (torch/optim/adamw.py). auto is the framework's default: fused for the HF Trainer
  // (adamw_torch_fused with torch >= 2.8 since transformers PR #37358 (July 2025)), foreach for
  // plain FSDP loops.
  const ModelArch llama = Llama2_7b();
  const double P = 6738415616.0;
  TrainingJob j = BaseJob();
  j.precision = Precision::kAmpBf16;
  j.activation_checkpointing = Checkpointing::kFull;
  auto step = [&](OptimizerImpl impl, Framework fw) {
    TrainingJob k = j;
    k.optimizer_impl = impl;
    k.framework = fw;
    Result<MemoryEstimate> e = EstimateMemory(llama, k, Gpu80());
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? PhaseAllocated(*e, "optimizer-step") : 0;
  };
  const int64_t fused = step(OptimizerImpl::kFused, Framework::kHf);
  EXPECT_NEAR(static_cast<double>(fused), 16 * P, 1e-3 * P);
  EXPECT_NEAR(static_cast<double>(step(OptimizerImpl::kForeach, Framework::kHf) - fused), 4 * P,
              1e3);
  EXPECT_EQ(step(OptimizerImpl::kAuto, Framework::kHf), fused);
  EXPECT_NEAR(static_cast<double>(step(OptimizerImpl::kAuto, Framework::kFsdp) - fused), 4 * P,
              1e3);
}

TEST(MemoryStatesTest, MegatronPrecisionOptionsAndTheFirstStep) {
  // Llama-2-7b (P = 6,738,415,616 parameters; 32 layers of linears with 4 x 4096^2 +
  // 3 x 4096 x 11008 = 202,375,168 each) under Megatron on 8 GPUs, distributed optimizer, FP8.
  const ModelArch llama = Llama2_7b();
  const double P = 6738415616.0, layer_linears = 32 * 202375168.0;
  TrainingJob j = BaseJob();
  j.framework = Framework::kMegatron;
  j.precision = Precision::kMixedBf16;
  j.sharding = Sharding::kZero1;
  j.gpus = 8;
  j.gpus_per_node = 8;
  j.fp8 = Fp8::kDelayed;
  j.activation_checkpointing = Checkpointing::kFull;
  auto estimate = [&](const TrainingJob& job) {
    Result<MemoryEstimate> e = EstimateMemory(llama, job, Gpu80());
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : MemoryEstimate{};
  };
  const MemoryEstimate plain = estimate(j);
  // --grad-reduce-in-bf16: main grads in bf16, 2 bytes per parameter less at the end of backward.
  TrainingJob g = j;
  g.grad_reduce_bf16 = true;
  EXPECT_NEAR(
      PhaseAllocated(plain, "end-of-backward") - PhaseAllocated(estimate(g), "end-of-backward"),
      2 * P, 1e3);
  // At the optimizer step the fp32 master shard's gradient is `main_grad.float()`: the same tensor
  // for fp32 main grads, a new fp32 copy of this rank's shard (4 bytes x P / 8) for bf16 ones.
  EXPECT_NEAR(
      PhaseAllocated(estimate(g), "optimizer-step") - PhaseAllocated(plain, "optimizer-step"),
      -2 * P + 4 * P / 8, 1e3);
  // --fp8-param-gather: the layers' linear weights in 1 byte instead of 2, and TE caches only
  // their transpose (1 byte instead of the cast and its transpose, 2): 2 bytes per linear
  // parameter less in every phase; the embedding and output layer are unchanged.
  TrainingJob f = j;
  f.fp8_params = true;
  const MemoryEstimate fp8w = estimate(f);
  for (const char* phase : {"forward-backward", "end-of-backward", "optimizer-step"})
    EXPECT_NEAR(PhaseAllocated(plain, phase) - PhaseAllocated(fp8w, phase), 2 * layer_linears, 1e3)
        << phase;
  // The first step's forward-backward has no Adam moments yet (8 bytes per parameter, sharded
  // over the 8 data-parallel ranks); DeepSpeed's ZeRO allocates them at initialisation.
  EXPECT_NEAR(
      PhaseAllocated(plain, "forward-backward") - PhaseAllocated(plain, "first-forward-backward"),
      8 * P / 8, 1e3);
  TrainingJob ds = j;
  ds.framework = Framework::kDeepspeed;
  ds.fp8 = Fp8::kNone;
  const MemoryEstimate zero = estimate(ds);
  EXPECT_EQ(PhaseAllocated(zero, "forward-backward"),
            PhaseAllocated(zero, "first-forward-backward"));
  // --optimizer-states-bf16 (the precision-aware optimizer's bf16 exp_avg and exp_avg_sq): 2
  // bytes less per moment and parameter, sharded over the 8 data-parallel ranks.
  TrainingJob o = j;
  o.optimizer_states_bf16 = true;
  EXPECT_NEAR(
      PhaseAllocated(plain, "optimizer-step") - PhaseAllocated(estimate(o), "optimizer-step"),
      2 * 2 * P / 8, 1e3);
  // Megatron's gradients live in one main_grad buffer allocated when the model is wrapped
  // (param_and_grad_buffer.py), not as backward produces them: one micro-batch per step peaks as
  // high as two.
  TrainingJob one = j, two = j;
  one.grad_accum = 1;
  two.grad_accum = 2;
  EXPECT_EQ(PhaseAllocated(estimate(one), "forward-backward"),
            PhaseAllocated(estimate(two), "forward-backward"));
  // All are Megatron options; FP8 weights need FP8 linears.
  TrainingJob ds_states = ds;
  ds_states.optimizer_states_bf16 = true;
  EXPECT_FALSE(ValidateJob(ds_states).ok());
  ds.grad_reduce_bf16 = true;
  EXPECT_FALSE(ValidateJob(ds).ok());
  f.fp8 = Fp8::kNone;
  EXPECT_FALSE(ValidateJob(f).ok());
}

TEST(MemoryStatesTest, FsdpNoSyncAccumulatesUnshardedGradients) {
  // accelerate's guide (docs/source/concept_guides/gradient_synchronization.md, "no_sync requires
  // additional GPU memory when using FSDP"): fine-tuning Mixtral-8x7B under FSDP on 8 A100-80GB
  // peaks at 69G with accumulation 1, runs out of memory with accumulation 2, and peaks at 69G
  // again with accumulation 16 and sync_each_batch. Precision, batch and sequence are not
  // stated: the reading that needs least is taken (bf16 weights and states, one sequence of 512
  // tokens, full checkpointing), so the out-of-memory run must still be predicted not to fit.
  Result<ModelArch> a =
      LoadModelConfigFile(std::string(FMTE_SOURCE_DIR) + "/etc/models/mistralai/Mixtral-8x7B-v0.1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  TrainingJob j = BaseJob();
  j.model = a->id;
  j.framework = Framework::kHf;
  j.precision = Precision::kPureBf16;
  j.sharding = Sharding::kFsdpFull;
  j.gpus = 8;
  j.gpus_per_node = 8;
  j.seq_len = 512;
  j.activation_checkpointing = Checkpointing::kFull;
  GpuSpec a100 = Gpu80();
  auto estimate = [&](int64_t accum, bool sync_each_batch) {
    j.grad_accum = accum;
    j.sync_each_batch = sync_each_batch;
    Result<MemoryEstimate> e = EstimateMemory(*a, j, a100);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : MemoryEstimate{};
  };
  const MemoryEstimate one = estimate(1, false), two = estimate(2, false),
                       synced = estimate(16, true);
  EXPECT_LE(one.per_gpu_bytes, a100.memory_bytes);
  EXPECT_GT(two.per_gpu_bytes, a100.memory_bytes);  // 46.7B unsharded bf16 gradients: 93 GB
  EXPECT_LE(synced.per_gpu_bytes, a100.memory_bytes);
  // While a later micro-batch runs, the accumulated unsharded gradient is 2 bytes per trained
  // parameter (the gathered bf16 copy) where synchronising keeps the 2-byte shard: 2P - 2P/8.
  EXPECT_NEAR(static_cast<double>(PhaseAllocated(two, "forward-backward") -
                                  PhaseAllocated(synced, "forward-backward")),
              (2 - 2.0 / 8) * 46702792704.0, 1e6);
}

TEST(MemoryStatesTest, HfFsdpHoldsTheRootUnitsGradientUntilTheEndOfBackward) {
  // The HF Trainer's FSDP (accelerate, transformer-layer auto-wrap) and litgpt's
  // (FSDPStrategy(auto_wrap_policy={Block}), finetune/full.py) leave embeddings, final norm and
  // head in the root unit: its unsharded gradient appears at the head's backward and is
  // reduce-scattered after the embeddings' gradient, at the end of backward. A loop that wraps
  // the head apart (torchtitan's fully_shard([norm, output])) releases it after the head.
  // Llama-2-7B's root: 2 x 32,000 x 4,096 (untied embedding and head) + 4,096 (final norm).
  const ModelArch m = Llama2_7b();
  TrainingJob j = BaseJob();
  j.precision = Precision::kPureBf16;
  j.sharding = Sharding::kFsdpFull;
  j.gpus = 8;
  j.gpus_per_node = 8;
  j.seq_len = 2048;
  j.activation_checkpointing = Checkpointing::kFull;
  auto phase = [&](Framework fw, Method method) {
    j.framework = fw;
    j.method = method;
    if (method == Method::kLora) {
      j.lora_r = 16;
      j.lora_targets = {"q", "v"};
    }
    Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? PhaseAllocated(*e, "end-of-backward") : 0;
  };
  const double root = 2 * 32000.0 * 4096 + 4096;
  for (Framework fw : {Framework::kHf, Framework::kLitgpt}) {
    EXPECT_NEAR(
        static_cast<double>(phase(fw, Method::kFull) - phase(Framework::kFsdp, Method::kFull)),
        2 * root, 1e3)
        << ToString(fw);
    // A frozen root (LoRA) has no gradient to hold.
    EXPECT_EQ(phase(fw, Method::kLora), phase(Framework::kFsdp, Method::kLora)) << ToString(fw);
  }
}

TEST(MemoryStatesTest, FrozenWeightsInsideFsdpUnitsGetGradients) {
  // litgpt's resource tables (tutorials/resource-tables.md at 26857050, "Finetuning with LoRA on
  // Multiple GPUs"; litgpt 8641822, A100-SXM4-40GB, torch 2.1, --precision bf16-true): LoRA
  // (r 8, query and value) of Llama-2-7b on 2 GPUs under FSDPStrategy(auto_wrap_policy={Block}),
  // micro-batch 1, 128 / 1 accumulation, longest Alpaca sample 1304 tokens: "Memory used: 22.18
  // GB" (torch.cuda.max_memory_allocated). One flat parameter per block holds the adapters and
  // the frozen weights, so every block's gradient is computed and, under no_backward_sync,
  // accumulated unsharded in bf16.
  const ModelArch m = Llama2_7b();
  TrainingJob j = BaseJob();
  j.framework = Framework::kLitgpt;
  j.method = Method::kLora;
  j.lora_r = 8;
  j.lora_targets = {"q", "v"};
  j.precision = Precision::kPureBf16;
  j.sharding = Sharding::kFsdpFull;
  j.gpus = 2;
  j.gpus_per_node = 2;
  j.micro_batch = 1;
  j.seq_len = 1304;
  j.grad_accum = 128;
  j.activation_checkpointing = Checkpointing::kFull;
  j.chunked_loss = true;
  j.optimizer_impl = OptimizerImpl::kForeach;
  GpuSpec a100 = Gpu80();
  a100.memory_bytes = int64_t{42949672960};  // A100-SXM4-40GB
  auto estimate = [&](Framework fw, bool frozen_grads) {
    j.framework = fw;
    j.fsdp_frozen_grads = frozen_grads;
    Result<MemoryEstimate> e = EstimateMemory(m, j, a100);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : MemoryEstimate{};
  };
  const MemoryEstimate blocks = estimate(Framework::kLitgpt, true);
  const MemoryEstimate adapters = estimate(Framework::kLitgpt, false);
  EXPECT_NEAR(static_cast<double>(blocks.allocated_peak_bytes), 22.18e9, 0.10 * 22.18e9);
  EXPECT_LT(static_cast<double>(adapters.allocated_peak_bytes), 0.5 * 22.18e9);
  // While a later micro-batch runs: the unsharded bf16 gradient of every block parameter (32
  // layers x 202,383,360: 4 x 4096^2 attention + 3 x 4096 x 11008 MLP + 2 x 4096 norms) and of
  // the adapters (32 x 2 x 8 x (4096 + 4096)), 2 bytes each.
  const double block_params = 32 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2 * 4096);
  const double adapter_params = 32 * 2 * 8.0 * (4096 + 4096);
  EXPECT_NEAR(static_cast<double>(blocks.breakdown.gradients), 2 * (block_params + adapter_params),
              1e6);
  // The low end rests on the reading without those gradients (litgpt 0.5.9 and later).
  EXPECT_EQ(blocks.low_bytes, adapters.low_bytes);
  // litgpt does not say which version runs: without the flag its bound covers the whole-block
  // reading; the HF Trainer wraps PEFT's adapters apart and its bound is its own prediction's.
  EXPECT_GE(adapters.bound_bytes, blocks.per_gpu_bytes);
  const MemoryEstimate hf = estimate(Framework::kHf, false);
  EXPECT_LT(hf.bound_bytes, blocks.per_gpu_bytes);
}

// litgpt's PEFT loops call the output layer on 128-position chunks (model(input_ids,
// lm_head_chunk_size=128), finetune/lora.py). Under autocast (bf16-mixed: fp32 weights) each call
// casts the frozen head weight to bf16 anew: torch.autocast caches only casts of leaves that
// require grad (autocast_mode.cpp cached_cast), and F.linear saves the cast for the chunk's input
// gradient. So at the end of the forward the head's 16-bit copy is alive once per chunk. For
// Llama-2-7b (head 32,000 x 4096) one more chunk (129 positions against 128) adds one copy,
// 2 x 131,072,000 bytes, beyond what one more position adds elsewhere (130 against 129, the same
// two chunks): the second difference of the forward-backward peak. With bf16 weights (bf16-true,
// no autocast) there is no cast, and full fine-tuning (full.py) runs the head on the whole logits.
TEST(MemoryStatesTest, LitgptPeftCastsTheFrozenHeadOncePerChunkUnderAutocast) {
  const ModelArch m = Llama2_7b();
  Checkpointing checkpointing = Checkpointing::kNone;
  const auto peak = [&](Precision precision, Method method, int64_t seq) {
    TrainingJob j = QvJob(Framework::kLitgpt, method, precision);
    j.activation_checkpointing = checkpointing;
    j.seq_len = seq;
    Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? static_cast<double>(PhaseAllocated(*e, "forward-backward")) : 0.0;
  };
  const auto second_difference = [&](Precision precision, Method method) {
    return (peak(precision, method, 129) - peak(precision, method, 128)) -
           (peak(precision, method, 130) - peak(precision, method, 129));
  };
  EXPECT_NEAR(second_difference(Precision::kAmpBf16, Method::kLora), 2 * 32000.0 * 4096, 1e3);
  EXPECT_NEAR(second_difference(Precision::kPureBf16, Method::kLora), 0, 1e3);
  EXPECT_NEAR(second_difference(Precision::kAmpBf16, Method::kFull), 0, 1e3);
  // The head runs outside the checkpointed blocks: the same under full recompute.
  checkpointing = Checkpointing::kFull;
  EXPECT_NEAR(second_difference(Precision::kAmpBf16, Method::kLora), 2 * 32000.0 * 4096, 1e3);
}

// LoRA on the output head (PEFT target_modules with lm_head) of Llama-2-7b (4096 -> 32,000) at r 8,
// HF Trainer under bf16 autocast, 1 x 512 tokens, no dropout. Derivation beside the test: the
// adapter's 8 x (4096 + 32,000) = 288,768 parameters are fp32 (PEFT's autocast_adapter_dtype) with
// an fp32 gradient and AdamW's two fp32 states: 16 bytes each. For its backward it keeps the
// 16-bit copy of its input that autocast's F.linear saves (PEFT first casts x to the fp32 adapter
// dtype, autocast casts it back) and lora_A's 16-bit r-wide output: 512 x (2 x 4096 + 2 x 8).
TEST(MemoryStatesTest, LoraOnTheHeadKeepsItsStatesAndItsInput) {
  const ModelArch m = Llama2_7b();
  const auto estimate = [&](std::vector<std::string> targets) {
    TrainingJob j = QvJob(Framework::kHf, Method::kLora, Precision::kAmpBf16);
    j.lora_dropout = 0;
    j.seq_len = 512;
    j.lora_targets = std::move(targets);
    Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? e->breakdown : MemoryBreakdown{};
  };
  const MemoryBreakdown without = estimate({"q_proj", "v_proj"});
  const MemoryBreakdown with = estimate({"q_proj", "v_proj", "lm_head"});
  EXPECT_EQ((with.weights + with.gradients + with.optimizer) -
                (without.weights + without.gradients + without.optimizer),
            16 * 288768);
  EXPECT_EQ(with.logits - without.logits, 512 * (2 * 4096 + 2 * 8));
}

// PEFT modules_to_save of Llama-2-7b's head (32,000 x 4096 = 131,072,000) beside LoRA r 8 on
// q_proj,v_proj, AdamW, 1 x 512 tokens, one GPU. Derivation beside the test: PEFT casts only its
// tuner layers to fp32, so the copy trains as full fine-tuning would in the job's precision. HF
// Trainer, weights loaded in bf16 (pure-bf16): copy, gradient and torch.optim's two states
// (zeros_like) in bf16, 2 + 2 + 2 x 2 bytes per parameter; loaded in fp32 (amp-bf16): 4 + 4 + 2 x
// 4, and autocast saves F.linear's 16-bit cast of the copy's weight (2 bytes per parameter) for the
// input gradient; DeepSpeed's bf16 engine (mixed-bf16): 2 + 2 and fp32 states and master copy,
// 2 x 4 + 4. The copy keeps its input, the 16-bit final-norm output, for its weight gradient:
// 512 x 4096 x 2.
TEST(MemoryStatesTest, ModulesToSaveTrainACopyAsFullFineTuningWould) {
  const ModelArch m = Llama2_7b();
  constexpr int64_t kHead = 32000LL * 4096;
  // LLaMA-Factory casts every trainable parameter to fp32 after PEFT (trainable_fp32): 4 + 4 + 2 x
  // 4 over a bf16-loaded model, and the HF Trainer's bf16 autocast saves the copy's 16-bit cast.
  const struct {
    Framework framework;
    Precision precision;
    bool trainable_fp32;
    int64_t weight, grad, optimizer, cast;  // bytes per parameter of the copy
  } kCases[] = {
      {Framework::kHf, Precision::kPureBf16, false, 2, 2, 4, 0},
      {Framework::kHf, Precision::kAmpBf16, false, 4, 4, 8, 2},
      {Framework::kDeepspeed, Precision::kMixedBf16, false, 2, 2, 12, 0},
      {Framework::kHf, Precision::kPureBf16, true, 4, 4, 8, 2},
  };
  for (const auto& c : kCases) {
    const auto estimate = [&](bool save_head) {
      TrainingJob j = QvJob(c.framework, Method::kLora, c.precision);
      j.seq_len = 512;
      j.save_head = save_head;
      j.trainable_fp32 = c.trainable_fp32;
      if (c.framework == Framework::kDeepspeed) j.sharding = Sharding::kZero2;
      Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
      EXPECT_TRUE(e.ok()) << e.status().ToString();
      return e.ok() ? e->breakdown : MemoryBreakdown{};
    };
    const MemoryBreakdown without = estimate(false), with = estimate(true);
    const std::string name =
        std::string(ToString(c.precision)) + (c.trainable_fp32 ? " trainable-fp32" : "");
    EXPECT_EQ(with.weights - without.weights, c.weight * kHead) << name;
    EXPECT_EQ(with.gradients - without.gradients, c.grad * kHead) << name;
    EXPECT_EQ(with.optimizer - without.optimizer, c.optimizer * kHead) << name;
    EXPECT_EQ(with.logits - without.logits, 512 * 4096 * 2 + c.cast * kHead) << name;
  }
}

}  // namespace
}  // namespace fmte
