// Activation memory per layer: Korthikanti et al. 2022 ("Reducing Activation Recomputation in
// Large Transformer Models", Table 2) in its own setting, and per-tensor derivations elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../../estimator/memory/src/memory_internal.h"  // white-box: PeftChainBytes
#include "fmte/memory.h"
#include "fmte/model.h"
#include "memory_test_util.h"

namespace fmte {
namespace {

using testing::BaseJob;
using testing::GptArch;
using testing::Gpu80;
using testing::Llama2_7b;

struct KorthikantiRow {
  const char* name;
  int64_t t;
  bool sp;
  Checkpointing ckpt;
};

// Table 2, activations per layer in bytes (s sequence, b micro-batch, h hidden, a heads, t TP):
//   no parallelism           s*b*h*(34 + 5*a*s/h)
//   tensor parallel          s*b*h*(10 + 24/t + 5*a*s/(h*t))
//   TP + sequence parallel   s*b*h*(34/t + 5*a*s/(h*t))
//   TP + selective recompute s*b*h*(10 + 24/t)
//   TP + SP + selective      s*b*h*34/t
//   full recompute           2*s*b*h
// Evaluated in integers (t divides 24 and 34*... only where the paper's terms are integral).
int64_t Table2(const KorthikantiRow& r, int64_t s, int64_t b, int64_t h, int64_t a) {
  const int64_t sbh = s * b * h, scores = 5 * a * s * s * b;
  const int64_t t = r.t;
  if (r.ckpt == Checkpointing::kFull) return 2 * sbh;
  if (t == 1 && r.ckpt == Checkpointing::kNone) return 34 * sbh + scores;
  if (r.sp && r.ckpt == Checkpointing::kSelective) return 34 * sbh / t;
  if (r.ckpt == Checkpointing::kSelective) return 10 * sbh + 24 * sbh / t;
  if (r.sp) return 34 * sbh / t + scores / t;
  return 10 * sbh + 24 * sbh / t + scores / t;
}

TEST(MemoryActivationsTest, KorthikantiTable2EveryRow) {
  // GPT-3 175B's shape (Korthikanti Table 3): h 12288, a 96, s 2048, b 1; t = 8 and t = 2.
  const int64_t h = 12288, a = 96, s = 2048, b = 1;
  const ModelArch gpt = GptArch(h, a, 96, 51200);
  const KorthikantiRow rows[] = {
      {"none", 1, false, Checkpointing::kNone},
      {"tp8", 8, false, Checkpointing::kNone},
      {"tp8+sp", 8, true, Checkpointing::kNone},
      {"tp8+selective", 8, false, Checkpointing::kSelective},
      {"tp8+sp+selective", 8, true, Checkpointing::kSelective},
      {"tp2", 2, false, Checkpointing::kNone},
      {"tp2+sp+selective", 2, true, Checkpointing::kSelective},
      {"full recompute", 8, false, Checkpointing::kFull},
      {"full recompute, no tp", 1, false, Checkpointing::kFull},
  };
  for (const KorthikantiRow& r : rows) {
    TrainingJob j = BaseJob();
    j.framework = Framework::kMegatron;
    j.precision = Precision::kMixedBf16;  // 16-bit activations
    j.attention = Attention::kEager;      // no fused attention kernel
    j.seq_len = s;
    j.micro_batch = b;
    j.tp = r.t;
    j.gpus = r.t;
    j.sequence_parallel = r.sp;
    j.activation_checkpointing = r.ckpt;
    ASSERT_TRUE(ValidateJob(j).ok()) << r.name;
    EXPECT_EQ(LayerActivationBytes(gpt, j, 0), Table2(r, s, b, h, a)) << r.name;
  }
}

TEST(MemoryActivationsTest, FusedAttentionDropsTheScoreTerm) {
  // Fused attention keeps no s x s tensor: the 5*a*s^2*b term becomes the fp32 log-sum-exp
  // 4*a*s*b; Q, K, V are already in the 24sbh/t, and the saved output is the projection's input
  // (2sbh, also already counted). Megatron, t = 1, GPT: 34sbh + 4*a*s*b.
  const int64_t h = 4096, a = 32, s = 4096, b = 2;
  const ModelArch gpt = GptArch(h, a, 4, 50304);
  TrainingJob j = BaseJob();
  j.framework = Framework::kMegatron;
  j.precision = Precision::kMixedBf16;
  j.attention = Attention::kFused;
  j.seq_len = s;
  j.micro_batch = b;
  EXPECT_EQ(LayerActivationBytes(gpt, j, 0), 34 * s * b * h + 4 * a * s * b);
}

// One 2048-token sequence of an HF Trainer job in amp-bf16 with `method` (LoRA rank `r`).
TrainingJob HfAmpJob(Method method, int64_t r) {
  TrainingJob j = BaseJob();
  j.precision = Precision::kAmpBf16;
  j.method = method;
  j.lora_r = r;
  j.seq_len = 2048;
  j.micro_batch = 1;
  return j;
}

struct LlamaRow {
  const char* name;
  Method method;
  int64_t expected_per_token;
};

TEST(MemoryActivationsTest, LlamaHfPerSavedTensor) {
  // Llama-2-7b in HF (transformers modeling_llama.py), amp-bf16, SDPA, per token per layer
  // (h 4096, a = g = 32, f 11008):
  // full: 2 RMSNorms x (fp32 input 4h + normed 16-bit 2h) = 12h; q/k/v input 2h; MLP input 2h;
  //   SDPA q 2h + repeat_kv k,v 4h + output 2h + fp32 lse 4a; o_proj input (contiguous copy) 2h;
  //   MLP gate out, silu out, up out 3*2f + down input 2f
  //   = 26h + 8f + 4a = 106496 + 88064 + 128 = 194688.
  // LoRA r=8 on q_proj,v_proj (PEFT default): norms 2 x 4h (frozen weight) = 8h; frozen linears
  //   save nothing; each adapter casts its input to the fp32 adapters' dtype and, under autocast,
  //   lora_A saves the 16-bit cast of that copy 2h + lora_A output 2r -> 4h + 4r;
  //   SDPA 2h + 4h + 2h + 4a; MLP 3*2f = 20h + 6f + 4r + 4a = 81920 + 66048 + 32 + 128 = 148128.
  // QLoRA: as LoRA plus bitsandbytes saving the 16-bit input of every quantised linear: attention
  //   input 2h, MLP input 2h, o_proj input 2h, down input 2f -> 148128 + 6h + 2f = 194720.
  const ModelArch llama = Llama2_7b();
  const LlamaRow rows[] = {{"full", Method::kFull, 194688},
                           {"lora", Method::kLora, 148128},
                           {"qlora", Method::kQlora, 194720}};
  for (const LlamaRow& r : rows) {
    const TrainingJob j = HfAmpJob(r.method, 8);
    EXPECT_EQ(LayerActivationBytes(llama, j, 0), 2048 * r.expected_per_token) << r.name;
  }
}

TEST(MemoryActivationsTest, PeftAdapterInputsByAutocastAndDropout) {
  // PEFT LoRA on Llama-2-7b's q_proj and v_proj (input h = 4096), r = 8, 2048 tokens
  // (peft/tuners/lora/layer.py Linear.forward): lora_dropout > 0 adds nn.Dropout's 1-byte mask of
  // each adapted module's input; without autocast (fp32 training) lora_A saves the fp32 input
  // (4 bytes) and its fp32 output (4r) instead of their 16-bit casts (2 bytes, 2r).
  const ModelArch llama = Llama2_7b();
  const TrainingJob j = HfAmpJob(Method::kLora, 8);
  const int64_t plain = LayerActivationBytes(llama, j, 0);
  TrainingJob d = j;
  d.lora_dropout = 0.05;
  EXPECT_EQ(LayerActivationBytes(llama, d, 0) - plain, 2048 * 2 * 4096);
  d.lora_dropout = 1.5;  // not a probability
  EXPECT_FALSE(ValidateJob(d).ok());
  // One adapter (v_proj's) under autocast: 2h + 2r per token; under FSDP mixed precision (no
  // torch.autocast) 4h + 4r.
  auto v_adapter = [&](TrainingJob k) {
    k.lora_targets = {"q_proj", "v_proj"};
    const int64_t both = LayerActivationBytes(llama, k, 0);
    k.lora_targets = {"q_proj"};
    return both - LayerActivationBytes(llama, k, 0);
  };
  EXPECT_EQ(v_adapter(j), 2048 * (2 * 4096 + 2 * 8));
  TrainingJob fsdp = j;
  fsdp.framework = Framework::kFsdp;
  fsdp.precision = Precision::kMixedBf16;
  EXPECT_EQ(v_adapter(fsdp), 2048 * (4 * 4096 + 4 * 8));
}

struct PeftChainRow {
  const char* name;
  double in_bytes, result_bytes;
  bool autocast, dropout;
  double fwd_in, fwd_out, bwd_in, bwd_out;  // bytes per input / output feature
};

TEST(MemoryActivationsTest, PeftChainBytesPerOp) {
  // PEFT's LoRA Linear.forward (peft/tuners/lora/layer.py, 0.7-0.21) over fp32 adapters
  // (get_peft_model's autocast_adapter_dtype=True), one kernel per op, each reading its inputs and
  // writing its output once; per input (in) and output (out) feature:
  // - HF Trainer bf16 over a bf16 model (autocast, 2-byte input and result): forward
  //   _cast_input_dtype to fp32 (read 2, write 4) and autocast's cast for lora_A (read 4, write 2):
  //   12/in; `* scaling` (read 2, write 2) and `result + lora` (read 2 + 2, write 2): 10/out.
  //   Backward: the scaling 4/out; the two casts back 6 + 6 and x's gradient added to the base
  //   layer's (read 2 + 2, write 2): 18/in.
  // - FSDP mixed precision without autocast (2-byte input and result): forward the cast to fp32
  //   6/in; fp32 scaling 8, sum promoted to fp32 (read 2 + 4, write 4) 10 and cast back to 16
  //   bits (read 4, write 2) 6: 24/out. Backward: the cast back's grad 6, the sum's grad cast to
  //   the 16-bit result 6, the scaling 8: 20/out; the cast of x 6 + accumulation 6: 12/in.
  // - fp32 training (4-byte input and result): no casts; scaling 8 + sum 12 = 20/out forward;
  //   scaling 8/out and the accumulation 12/in backward.
  // - lora_dropout > 0 on the fp32 copy of x: read 4, write 4 and a 1-byte mask, again in backward.
  const PeftChainRow rows[] = {
      {"hf bf16", 2, 2, true, false, 12, 10, 18, 4},
      {"hf bf16 dropout", 2, 2, true, true, 21, 10, 27, 4},
      {"fsdp mixed", 2, 2, false, false, 6, 24, 12, 20},
      {"fp32", 4, 4, false, false, 0, 20, 12, 8},
  };
  for (const PeftChainRow& r : rows) {
    const memory::PeftChain one_in =
        memory::PeftChainBytes(r.in_bytes, r.result_bytes, r.autocast, r.dropout, 1, 0);
    const memory::PeftChain one_out =
        memory::PeftChainBytes(r.in_bytes, r.result_bytes, r.autocast, r.dropout, 0, 1);
    EXPECT_DOUBLE_EQ(one_in.forward, r.fwd_in) << r.name;
    EXPECT_DOUBLE_EQ(one_out.forward, r.fwd_out) << r.name;
    EXPECT_DOUBLE_EQ(one_in.backward, r.bwd_in) << r.name;
    EXPECT_DOUBLE_EQ(one_out.backward, r.bwd_out) << r.name;
  }
}

TEST(MemoryActivationsTest, PeftAdaptersOwnPartOfALayer) {
  // Llama-2-7b, PEFT LoRA r = 8 on q_proj and v_proj (4096 -> 4096 each), HF Trainer amp-bf16
  // (autocast over fp32 weights: the normed input is fp32), 2048 tokens, per token: each adapter
  // saves 2h + 2r (PeftAdapterInputsByAutocastAndDropout) and moves, forward, autocast's cast of
  // x (read 4, write 2: 6h) + scaling 4h + sum 6h = 16h; backward scaling 4h + the cast back 6h +
  // the accumulation into the fp32 gradient (read 4 + 4, write 4: 12h) = 22h.
  const ModelArch llama = Llama2_7b();
  TrainingJob j = HfAmpJob(Method::kLora, 8);
  PeftAdapterBytes peft;
  const int64_t written = LayerWrittenActivationBytes(llama, j, 0, &peft);
  EXPECT_EQ(written, LayerWrittenActivationBytes(llama, j, 0));
  EXPECT_DOUBLE_EQ(peft.saved, 2048.0 * 2 * (2 * 4096 + 2 * 8));
  EXPECT_DOUBLE_EQ(peft.forward, 2048.0 * 2 * 16 * 4096);
  EXPECT_DOUBLE_EQ(peft.backward, 2048.0 * 2 * 22 * 4096);
  // Full fine-tuning and litgpt's own LoRA have none.
  j.method = Method::kFull;
  LayerWrittenActivationBytes(llama, j, 0, &peft);
  EXPECT_EQ(peft.saved + peft.forward + peft.backward, 0);
  j = HfAmpJob(Method::kLora, 8);
  j.framework = Framework::kLitgpt;
  LayerWrittenActivationBytes(llama, j, 0, &peft);
  EXPECT_EQ(peft.saved + peft.forward + peft.backward, 0);
}

TEST(MemoryActivationsTest, LitgptQloraUnderOldBitsandbytesKeepsTheLastStepsInputs) {
  // litgpt's finetune loop keeps `logits = model(...)` of the last step until the next forward
  // returns, and bitsandbytes before 0.43.2 keeps each 4-bit linear's input on the graph node
  // (MatMul4Bit ctx.tensors = (A, B); fixed by bitsandbytes PR #1270). So at the end of a forward
  // the previous step's quantised-linear inputs (what QLoRA saves beyond LoRA: the block's
  // activation bytes with and without quantisation) and its 16-bit logits sit beside the new
  // ones; the loss's own peak (16-bit logits, each 128-token chunk's saved log-softmax and one
  // chunk's gradient) comes after the old ones are freed. Llama-2-7b, 2 x 512 tokens, bf16-true,
  // no checkpointing, vocabulary 32000: the kept inputs per token and layer are the 16-bit inputs
  // of qkv (h), o (h), gate/up (one tensor, h) and down (f = 11008): 2 (3 x 4096 + 11008) = 46592
  // bytes, over 32 layers and 1024 tokens; the forward end holds them + 2 x 2 bytes x V x 1024, the
  // loss 2 x 2 bytes x V x 1024 + 2 x 2 bytes x V x 256, so the peak grows by kept - 4 V 256.
  const ModelArch llama = Llama2_7b();
  TrainingJob j = BaseJob();
  j.framework = Framework::kLitgpt;
  j.precision = Precision::kPureBf16;
  j.method = Method::kQlora;
  j.quant = Quant::kNf4;
  j.lora_r = 8;
  j.lora_targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  j.seq_len = 512;
  j.micro_batch = 2;
  const double kept = 46592.0 * 32 * 1024;
  TrainingJob old = j;
  old.bnb_ctx_inputs = true;
  auto now = EstimateMemory(llama, j, Gpu80());
  auto then = EstimateMemory(llama, old, Gpu80());
  ASSERT_TRUE(now.ok() && then.ok());
  const double grew = static_cast<double>(then->allocated_peak_bytes - now->allocated_peak_bytes);
  EXPECT_NEAR(grew, kept - 4.0 * 32000 * 256, 1e4);
  // Which bitsandbytes a job runs is not something it says: the bound covers the old reading.
  EXPECT_GE(now->bound_bytes, then->per_gpu_bytes);
  // Checkpointed layers, LoRA and the HF Trainer (whose steps drop their graph) do not change.
  for (auto change : {+[](TrainingJob& k) { k.activation_checkpointing = Checkpointing::kFull; },
                      +[](TrainingJob& k) { k.method = Method::kLora; },
                      +[](TrainingJob& k) { k.framework = Framework::kHf; }}) {
    TrainingJob a = j, b = old;
    change(a);
    change(b);
    auto ea = EstimateMemory(llama, a, Gpu80());
    auto eb = EstimateMemory(llama, b, Gpu80());
    ASSERT_TRUE(ea.ok() && eb.ok());
    EXPECT_EQ(ea->per_gpu_bytes, eb->per_gpu_bytes);
  }
}

TEST(MemoryActivationsTest, GeluNewSavesItsElementwiseChain) {
  // transformers' NewGELUActivation (gelu_new: GPT-2, GPT-J, Phi-2) is
  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3)))) in separate ops. Saved per
  // element of the MLP's f-wide hidden: pow's input, tanh's output, 0.5 * x and 1 + tanh. Under
  // autocast (HF Trainer bf16) pow runs in fp32: 4 + 4 + 2 + 4 = 14 bytes where a fused GeLU saves
  // its 2-byte input, 12 more; without autocast (FSDP pure bf16) 4 x 2 = 8, 6 more. torch.compile
  // fuses the chain. GPT shape h 2560, f = 4h = 10240, 2048 tokens.
  ModelArch gpt = testing::GptArch(2560, 32, 4, 51200);
  ModelArch gelu_new = gpt;
  gelu_new.gelu_new = true;
  const int64_t f = 4 * 2560, tokens = 2048;
  TrainingJob j = BaseJob();
  j.precision = Precision::kAmpBf16;
  j.seq_len = tokens;
  j.micro_batch = 1;
  EXPECT_EQ(LayerActivationBytes(gelu_new, j, 0) - LayerActivationBytes(gpt, j, 0),
            tokens * 12 * f);
  TrainingJob pure = j;
  pure.framework = Framework::kFsdp;
  pure.precision = Precision::kPureBf16;
  EXPECT_EQ(LayerActivationBytes(gelu_new, pure, 0) - LayerActivationBytes(gpt, pure, 0),
            tokens * 6 * f);
  TrainingJob compiled = j;
  compiled.compile = true;
  EXPECT_EQ(LayerActivationBytes(gelu_new, compiled, 0), LayerActivationBytes(gpt, compiled, 0));
}

TEST(MemoryActivationsTest, ContextParallelKeepsTheRanksShareOfEachSequence) {
  // Context parallelism: a rank keeps the activations of seq/cp tokens (its queries, keys, values
  // and output under ring attention), so per layer the Llama-2-7b HF full-tuning derivation above
  // (194688 bytes per token) applies to 8192 / 4 = 2048 tokens.
  const ModelArch llama = Llama2_7b();
  TrainingJob j = BaseJob();
  j.precision = Precision::kAmpBf16;
  j.gpus = 4;
  j.cp = 4;
  j.seq_len = 8192;
  EXPECT_EQ(LayerActivationBytes(llama, j, 0), 2048 * 194688);
  // The whole estimate of 8 GPUs as tp 2 x cp 2 x dp 2 on 8192 tokens equals tp 2 x dp 4 on
  // 4096: the same tokens per rank, and Megatron's distributed optimizer shards over dp x cp = 4
  // ranks in both.
  TrainingJob a = BaseJob();
  a.framework = Framework::kMegatron;
  a.precision = Precision::kMixedBf16;
  a.sharding = Sharding::kZero1;
  a.gpus = 8;
  a.gpus_per_node = 8;
  a.tp = 2;
  a.sequence_parallel = true;
  a.activation_checkpointing = Checkpointing::kSelective;
  TrainingJob c = a;
  a.seq_len = 4096;
  c.seq_len = 8192;
  c.cp = 2;
  Result<MemoryEstimate> ea = EstimateMemory(llama, a, Gpu80());
  Result<MemoryEstimate> ec = EstimateMemory(llama, c, Gpu80());
  ASSERT_TRUE(ea.ok() && ec.ok()) << ea.status().ToString() << ec.status().ToString();
  ASSERT_EQ(ec->phases.size(), ea->phases.size());
  for (size_t i = 0; i < ea->phases.size(); ++i)
    EXPECT_EQ(ec->phases[i].per_gpu_bytes, ea->phases[i].per_gpu_bytes) << ea->phases[i].name;
  EXPECT_EQ(ec->breakdown.optimizer, ea->breakdown.optimizer);
  EXPECT_EQ(ec->per_gpu_bytes, ea->per_gpu_bytes);
  // Without context parallelism the 8192-token sequence doubles what a rank keeps per layer.
  c.cp = 1;
  EXPECT_EQ(LayerActivationBytes(llama, c, 0), 2 * LayerActivationBytes(llama, a, 0));
  // cp must divide the GPUs left by tp x pp and the sequence.
  c.cp = 3;
  EXPECT_FALSE(ValidateJob(c).ok());
  c.cp = 2;
  c.seq_len = 8191;
  EXPECT_FALSE(ValidateJob(c).ok());
  c.seq_len = 8192;
  c.cp = 8;
  EXPECT_FALSE(ValidateJob(c).ok());  // tp 2 x cp 8 > 8 GPUs
}

TEST(MemoryActivationsTest, CompileAndCheckpointingShrinkActivations) {
  const ModelArch llama = Llama2_7b();
  TrainingJob j = BaseJob();
  j.seq_len = 4096;
  const int64_t eager = LayerActivationBytes(llama, j, 0);
  j.compile = true;
  // inductor: norms save their 16-bit input (2 x 2h instead of 2 x 6h) and silu*up is recomputed
  // (one f-wide tensor fewer): 194688 - 8h - 2f = 194688 - 32768 - 22016 = 139904 per token.
  EXPECT_EQ(LayerActivationBytes(llama, j, 0), 4096 * 139904);
  EXPECT_LT(LayerActivationBytes(llama, j, 0), eager);
  j.compile = false;
  j.activation_checkpointing = Checkpointing::kFull;
  EXPECT_EQ(LayerActivationBytes(llama, j, 0), 4096 * 2 * 4096);  // the 16-bit layer input
}

TEST(MemoryActivationsTest, TorchtitanOpLevelSacPerSavedTensor) {
  // torchtitan op-level SAC (torchtitan/distributed/activation_checkpoint.py _apply_op_sac: save
  // SDPA and every other aten.mm, recompute the rest), Llama-2-7b shape (h 4096, a = g = 32,
  // f 11008), bf16, per token per layer: block input 2h; mm #1 wq 2h, #3 wv 2h, #5 w1 2f, #7 w2 2h
  // (#2 wk, #4 wo, #6 w3 recomputed); SDPA output 2h + fp32 log-sum-exp 4a
  // = 10h + 2f + 4a = 40960 + 22016 + 128 = 63104.
  const ModelArch llama = Llama2_7b();
  TrainingJob j = BaseJob();
  j.framework = Framework::kFsdp;
  j.precision = Precision::kMixedBf16;
  j.activation_checkpointing = Checkpointing::kSelective;
  j.seq_len = 8192;
  EXPECT_EQ(LayerActivationBytes(llama, j, 0), 8192 * 63104);
  // Megatron's selective recompute (attention core only) keeps more; full recompute keeps less.
  j.framework = Framework::kMegatron;
  EXPECT_GT(LayerActivationBytes(llama, j, 0), 8192 * 63104);
  j.framework = Framework::kFsdp;
  j.activation_checkpointing = Checkpointing::kFull;
  EXPECT_LT(LayerActivationBytes(llama, j, 0), 8192 * 63104);
}

TEST(MemoryActivationsTest, TransformerEngineFp8SavesLinearInputsInOneByte) {
  // Megatron with Transformer Engine FP8 (te/pytorch/module/linear.py, layernorm_linear.py,
  // layernorm_mlp.py save the FP8-cast input for the weight-gradient GEMM), Llama-2-7b shape
  // (h 4096, q_dim 4096, f 11008), selective recompute, tp 1: the attention input, the MLP
  // input, the output projection's input and the down projection's input each take 1 byte per
  // element instead of 2: 3h + f = 12288 + 11008 = 23296 bytes less per token per layer.
  const ModelArch llama = Llama2_7b();
  TrainingJob j = BaseJob();
  j.framework = Framework::kMegatron;
  j.precision = Precision::kMixedBf16;
  j.activation_checkpointing = Checkpointing::kSelective;
  j.seq_len = 4096;
  const int64_t bf16 = LayerActivationBytes(llama, j, 0);
  j.fp8 = Fp8::kTensorwise;
  EXPECT_EQ(bf16 - LayerActivationBytes(llama, j, 0), int64_t{4096} * 23296);
  // torchao's Float8Linear (torchtitan: framework fsdp) saves the 16-bit input: no change.
  j.framework = Framework::kFsdp;
  const int64_t torchao = LayerActivationBytes(llama, j, 0);
  j.fp8 = Fp8::kNone;
  EXPECT_EQ(LayerActivationBytes(llama, j, 0), torchao);

  // TE's FP8 weight and transpose caches: 2 bytes per linear parameter of the 32 layers
  // (4 x 4096^2 + 3 x 4096 x 11008 = 202,375,168 each), the output layer excluded. At the end of
  // backward no activation is left, so the whole difference is the caches (at the peak the layer
  // full recompute reruns saves its FP8 inputs too).
  j.framework = Framework::kMegatron;
  j.activation_checkpointing = Checkpointing::kFull;
  Result<MemoryEstimate> plain = EstimateMemory(llama, j, Gpu80());
  j.fp8 = Fp8::kDelayed;
  Result<MemoryEstimate> fp8 = EstimateMemory(llama, j, Gpu80());
  ASSERT_TRUE(plain.ok() && fp8.ok());
  const auto end_of_backward = [](const MemoryEstimate& e) {
    for (const MemoryPhase& p : e.phases)
      if (std::string_view(p.name) == "end-of-backward") return p.allocated_bytes;
    ADD_FAILURE() << "no end-of-backward phase";
    return int64_t{0};
  };
  EXPECT_EQ(end_of_backward(*fp8) - end_of_backward(*plain), 2 * 32 * 202375168LL);
  EXPECT_GT(fp8->allocated_peak_bytes, plain->allocated_peak_bytes);
}

// litgpt's own model, counted (tests/data/memory-measured/litgpt-saved-bytes.csv: lit-gpt 8641822's
// model and LoRA code on CPU with saved_tensors_hooks, flash attention and native_dropout replaced
// by functions that save what the CUDA kernels save; README.md there). Per layer after the first,
// LoRA r 8 on query and value, 128 tokens, bf16: the fused qkv output kept alive by v (multi-head
// models), one lora_A input per fused linear, zero_pad's saved source and the MLP's saved tensors.
TEST(MemoryActivationsTest, LitgptSavedBytesPerLayer) {
  Result<ModelCatalog> catalog =
      ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  ASSERT_TRUE(catalog.ok());
  std::ifstream in(std::string(FMTE_SOURCE_DIR) +
                   "/tests/data/memory-measured/litgpt-saved-bytes.csv");
  ASSERT_TRUE(in.good());
  // litgpt's config names -> the catalog's Hugging Face ids.
  const std::pair<const char*, const char*> ids[] = {
      {"phi-1_5", "microsoft/phi-1_5"},
      {"phi-2", "microsoft/phi-2"},
      {"Phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct"},
      {"stablelm-base-alpha-3b", "stabilityai/stablelm-base-alpha-3b"},
      {"tiny-llama-1.1b", "TinyLlama/TinyLlama-1.1B-Chat-v1.0"},
      {"Gemma-2b", "google/gemma-2b"},
      {"Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"},
      {"Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.1"},
      {"Mistral-7B-v0.2", "unsloth/Mistral-7B-v0.2"}};
  // litgpt's lora_query ... lora_mlp -> fmte's target names (lora_head adapts no layer).
  const std::pair<const char*, std::vector<std::string>> parts[] = {
      {"q", {"q"}}, {"k", {"k"}}, {"v", {"v"}}, {"o", {"o"}}, {"mlp", {"gate", "up", "down"}}};
  std::string line;
  std::getline(in, line);  // header
  int rows = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 9u) << line;
    std::string id;
    for (const auto& [name, hf] : ids)
      if (f[0] == name) id = hf;
    ASSERT_FALSE(id.empty()) << f[0];
    Result<const ModelArch*> m = catalog->Find(id);
    ASSERT_TRUE(m.ok()) << id;
    TrainingJob j = BaseJob();
    j.framework = Framework::kLitgpt;
    j.method = f[8] == "nf4" ? Method::kQlora : Method::kLora;
    j.precision = Precision::kPureBf16;  // litgpt bf16-true: no autocast
    j.lora_r = 8;
    j.lora_targets.clear();
    std::stringstream targets(f[7]);
    for (std::string t; targets >> t;)
      for (const auto& [name, ours] : parts)
        if (t == name) j.lora_targets.insert(j.lora_targets.end(), ours.begin(), ours.end());
    j.lora_dropout = std::stod(f[4]);
    j.seq_len = std::stoi(f[3]);
    j.micro_batch = 1;
    j.activation_checkpointing = Checkpointing::kNone;
    ASSERT_TRUE(ValidateJob(j).ok()) << line;
    const double per_token_h = static_cast<double>(LayerActivationBytes(**m, j, 1)) /
                               (static_cast<double>(j.seq_len) * (*m)->hidden_size);
    // litgpt's RMSNorm computes in fp32 since 6178c7c ("Half precision fixes", 2023-10-24:
    // x.float(), whose copy x * x and x * rsqrt keep), which fmte counts; lit-gpt 8641822's kept
    // its 16-bit input instead: 2 bytes less per hidden unit in each of a block's two norms.
    const double counted =
        std::stod(f[5]) + (f[1] == "8641822" && (*m)->norm == NormKind::kRms ? 2 * 2 : 0);
    // Within 2%: what fmte leaves out is the per-token norm statistics and the r-wide products.
    EXPECT_NEAR(per_token_h, counted, 0.02 * counted) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 16);
}

// What is alive at the peak of a real HF Trainer step on an H100, grouped from the allocator's own
// trace (scripts/device/peak_snapshot.py, peak_summary.py; tests/data/memory-measured/
// peak-snapshot-h100-hf.csv): where the peak falls at the loss backward, the logits part (three
// fp32 copies, a softcapped model's tanh output) within 2%; the layers' activations within 3%
// with full checkpointing (the checkpoints alone: the layer a recompute rebuilds is not yet
// there at the loss backward) and without checkpointing or autocast (no weight casts; Phi-3's
// fused qkv kept whole by v and SDPA's converted sliding-window mask).
TEST(MemoryActivationsTest, HfPeakPartsMatchH100Snapshot) {
  Result<ModelCatalog> catalog =
      ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  ASSERT_TRUE(catalog.ok());
  std::ifstream in(std::string(FMTE_SOURCE_DIR) +
                   "/tests/data/memory-measured/peak-snapshot-h100-hf.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);  // header
  int logits_rows = 0, activation_rows = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 16u) << line;
    Result<const ModelArch*> m = catalog->Find(f[1]);
    ASSERT_TRUE(m.ok()) << f[1];
    TrainingJob j = BaseJob();
    j.framework = Framework::kHf;
    j.method = f[2] == "lora" ? Method::kLora : Method::kFull;
    j.precision = f[3] == "pure-bf16" ? Precision::kPureBf16 : Precision::kAmpBf16;
    j.seq_len = std::stoi(f[4]);
    j.micro_batch = std::stoi(f[5]);
    j.activation_checkpointing = f[6] == "1" ? Checkpointing::kFull : Checkpointing::kNone;
    if (j.method == Method::kLora) {
      j.lora_r = 16;
      j.lora_targets = {f[7]};
    }
    j.optimizer_impl = OptimizerImpl::kFused;
    ASSERT_TRUE(ValidateJob(j).ok()) << line;
    Result<MemoryEstimate> e = EstimateMemory(**m, j, Gpu80());
    ASSERT_TRUE(e.ok()) << line;
    const double logits = std::stod(f[13]), activations = std::stod(f[14]);
    if (logits > 0) {
      EXPECT_NEAR(static_cast<double>(e->breakdown.logits), logits, 0.02 * logits) << line;
      ++logits_rows;
    }
    if (j.activation_checkpointing == Checkpointing::kFull || f[3] == "pure-bf16") {
      EXPECT_NEAR(static_cast<double>(e->breakdown.activations), activations, 0.03 * activations)
          << line;
      ++activation_rows;
    }
  }
  EXPECT_GE(logits_rows, 5);
  EXPECT_GE(activation_rows, 5);
}

// Nemotron 3 Nano (nemotron_h, pattern MEMEM*E...): each layer is one mixer behind one RMSNorm.
// Per token under Megatron (bf16, full fine-tuning, no recompute, tp 1), h = 2688:
// - Mamba-2 (layer 0): the norm's input 2h and its output (in_proj's input) 2h; the fused
//   mamba_split_conv1d_scan_combined saves zxbcdt, 2 x (2 x 4096 + 2 x 8 x 128 + 64) = 2 x 10,304,
//   its pre-norm output 2 x 4096 and an fp32 rstd per group 4 x 8; out_proj saves its input
//   2 x 4096. No attention core.
// - MoE (layer 1): 2h + 2h as above; the tokens copied to their 6 experts 6 x 2h; fp32 router
//   probabilities 4 x 128; relu2's input and down_proj's input for 6 x 1856 routed + 3712 shared
//   channels, 2 x 2 x 14,848. No attention core.
// - Attention (layer 5): 2h + 2h; TE's flash attention keeps q 2 x 4096, k and v 2 x 2 x 256 (2 KV
//   heads, native GQA), its output 2 x 4096 and the log-sum-exp 4 x 32 heads.
// Nemotron 3 Nano from the catalog, and its Megatron job (bf16, full fine-tuning, tp 1, 8192
// tokens).
const ModelArch* NemotronNano() {
  static const Result<ModelCatalog> catalog =
      ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  if (!catalog.ok()) return nullptr;
  Result<const ModelArch*> m = catalog->Find("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
  return m.ok() ? *m : nullptr;
}
TrainingJob NemotronJob() {
  TrainingJob j = BaseJob();
  j.framework = Framework::kMegatron;
  j.precision = Precision::kMixedBf16;
  j.seq_len = 8192;
  return j;
}

TEST(MemoryActivationsTest, NemotronHLayersSaveTheirOwnMixer) {
  const ModelArch* m = NemotronNano();
  ASSERT_NE(m, nullptr);
  TrainingJob j = NemotronJob();
  ASSERT_TRUE(ValidateJob(j).ok());
  const double h = 2688, tokens = 8192;
  const struct {
    int64_t layer;
    double per_token;
  } rows[] = {
      {0, 4 * h + 2 * 10304 + 2 * 4096 + 4 * 8 + 2 * 4096},
      {1, 4 * h + 6 * 2 * h + 4 * 128 + 2 * 2 * 14848.0},
      {5, 4 * h + 2 * 4096 + 2 * 2 * 256 + 2 * 4096 + 4 * 32},
  };
  for (const auto& r : rows) {
    EXPECT_NEAR(static_cast<double>(LayerActivationBytes(*m, j, r.layer)), tokens * r.per_token,
                1e-9 * tokens * r.per_token)
        << "layer " << r.layer;
  }
}

// Megatron's selective recompute modules (transformer_layer.py, moe/experts.py,
// --recompute-modules) on Nemotron 3 Nano's MoE layer 1 (as in NemotronHLayersSaveTheirOwnMixer:
// per token the norm's input 2h, the MLP input 2h, the 6 routed copies 6 x 2h, the router's fp32
// probabilities 4 x 128, and relu2's input and down_proj's input over 6 x 1856 routed + 3712 shared
// channels):
// - moe: the layer is checkpointed on its input: the norm's input and the MLP input stay;
// - moe_act: the routed experts' activation output (down_proj's input, 2 x 6 x 1856) is rebuilt;
// - shared_experts: the shared expert's two intermediates (2 x 2 x 3712) go;
// - layernorm: the separate pre_mlp_layernorm's output (the MLP input, 2h) is recomputed;
// - core_attn alone: nothing here (the layer has no attention).
// On Llama-2-7B's dense layers, mlp drops SwiGLU's saved input 2 x 2 x 11008 and down_proj's input
// 2 x 11008 (Megatron's fused bias_swiglu).
TEST(MemoryActivationsTest, MegatronRecomputeModulesDropWhatTheyRerun) {
  const ModelArch* m = NemotronNano();
  ASSERT_NE(m, nullptr);
  TrainingJob j = NemotronJob();
  const double h = 2688, tokens = 8192;
  const double all = 4 * h + 6 * 2 * h + 4 * 128 + 2 * 2 * 14848.0;
  const struct {
    const char* modules;
    double per_token;
  } rows[] = {
      {"core_attn", all},
      {"moe", 4 * h},
      {"moe_act", all - 2 * 6 * 1856},
      {"shared_experts", all - 2 * 2 * 3712},
      {"layernorm", all - 2 * h},
      {"moe,layernorm", 2 * h},
  };
  for (const auto& r : rows) {
    j.activation_checkpointing = Checkpointing::kSelective;
    Result<uint32_t> mods = ParseRecomputeModules(r.modules);
    ASSERT_TRUE(mods.ok());
    j.recompute_modules = *mods;
    ASSERT_TRUE(ValidateJob(j).ok());
    EXPECT_NEAR(static_cast<double>(LayerActivationBytes(*m, j, 1)), tokens * r.per_token,
                1e-9 * tokens * r.per_token)
        << r.modules;
  }
  const ModelArch llama = Llama2_7b();
  TrainingJob dense = BaseJob();
  dense.framework = Framework::kMegatron;
  dense.precision = Precision::kMixedBf16;
  dense.seq_len = 4096;
  dense.activation_checkpointing = Checkpointing::kSelective;
  const double core = static_cast<double>(LayerActivationBytes(llama, dense, 0));
  dense.recompute_modules = *ParseRecomputeModules("core_attn,mlp");
  EXPECT_NEAR(core - static_cast<double>(LayerActivationBytes(llama, dense, 0)),
              4096.0 * (2 * 2 * 11008 + 2 * 11008), 1e-3);
}

// Gemma-2-27B's published config.json pins "_attn_implementation": "eager", and transformers
// honours it: this project's HF Trainer runs of it recorded eager attention without asking for any
// (tests/data/memory-measured/measured-h100-hf.jsonl, cases 43 and 90; Gemma-2-9B, whose config
// pins nothing, ran SDPA). So an HF job that does not name its attention runs eager there, with
// eager's saved scores; a job that names one keeps it, and other frameworks their own kernels.
TEST(MemoryActivationsTest, AConfigThatPinsEagerAttentionIsHonouredUnderHf) {
  Result<ModelCatalog> catalog =
      ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  ASSERT_TRUE(catalog.ok());
  Result<const ModelArch*> pinned = catalog->Find("google/gemma-2-27b");
  Result<const ModelArch*> plain = catalog->Find("google/gemma-2-9b");
  ASSERT_TRUE(pinned.ok() && plain.ok());
  EXPECT_TRUE((*pinned)->config_eager_attention);
  EXPECT_FALSE((*plain)->config_eager_attention);
  TrainingJob j = BaseJob();
  j.framework = Framework::kHf;
  j.precision = Precision::kPureBf16;
  j.seq_len = 2048;
  ASSERT_TRUE(ValidateJob(j).ok());
  EXPECT_EQ(AttentionUsed(**pinned, j), Attention::kEager);
  EXPECT_EQ(AttentionUsed(**plain, j), Attention::kFused);
  TrainingJob eager = j;
  eager.attention = Attention::kEager;
  eager.attention_given = true;
  EXPECT_EQ(LayerActivationBytes(**pinned, j, 1), LayerActivationBytes(**pinned, eager, 1));
  TrainingJob fused = j;
  fused.attention_given = true;  // --attention fused
  EXPECT_EQ(AttentionUsed(**pinned, fused), Attention::kFused);
  EXPECT_LT(LayerActivationBytes(**pinned, fused, 1), LayerActivationBytes(**pinned, j, 1));
  TrainingJob megatron = j;
  megatron.framework = Framework::kMegatron;
  EXPECT_EQ(AttentionUsed(**pinned, megatron), Attention::kFused);
}

// Gemma-2's capped attention scores (attn_logit_softcapping) are computed by litgpt itself, not by
// SDPA (litgpt/model.py scaled_dot_product_attention): tanh saves its 16-bit output, softmax its
// fp32 output, scores @ v the 16-bit copy, 8 bytes per head per query per key in bf16.
TEST(MemoryActivationsTest, LitgptSoftcappedScoresArePerHeadSquared) {
  ModelArch m = testing::LlamaArch(2048, 8, 4, 8192, 4, 32000);
  TrainingJob j = BaseJob();
  j.framework = Framework::kLitgpt;
  j.precision = Precision::kPureBf16;
  j.seq_len = 1024;
  j.micro_batch = 2;
  ASSERT_TRUE(ValidateJob(j).ok());
  const int64_t sdpa = LayerActivationBytes(m, j, 1);
  m.attn_logit_softcapping = 50;
  const int64_t capped = LayerActivationBytes(m, j, 1);
  // The output the SDPA kernel saved (2 bytes x 2048 per token) and its fp32 log-sum-exp (4 bytes
  // x 8 heads per token) are gone; the scores come in.
  const int64_t tokens = 2048, s = 1024, b = 2, heads = 8;
  EXPECT_EQ(capped - sdpa, 8 * heads * s * s * b - tokens * (2 * 2048 + 4 * heads));
}

// Full recompute of some layers only (TrainingJob::recompute_method). With L layers whose
// uncheckpointed activations are F and whose kept input is I each, one micro-batch in flight:
//   uniform 1 (every layer):     L*I + F (one layer rebuilt in its backward)
//   uniform N (groups of N):     (L/N)*I + N*F   (N above L: one group, I + L*F)
//   block N (the first N):       N*I + (L-N)*F + F
//   interval N (every Nth):      ceil(L/N)*I + (L-ceil(L/N))*F + F
// (Megatron transformer_block.py _checkpointed_forward; torchtitan activation_checkpoint.py.)
TEST(MemoryActivationsTest, RecomputeMethodsKeepInputsOfTheirLayersOnly) {
  const ModelArch llama = Llama2_7b();  // 32 layers
  TrainingJob j = BaseJob();
  j.framework = Framework::kMegatron;
  j.precision = Precision::kMixedBf16;
  j.seq_len = 4096;
  j.activation_checkpointing = Checkpointing::kFull;
  ASSERT_TRUE(ValidateJob(j).ok());
  const double input = static_cast<double>(LayerActivationBytes(llama, j, 0));
  TrainingJob plain = j;
  plain.activation_checkpointing = Checkpointing::kNone;
  const double full = static_cast<double>(LayerActivationBytes(llama, plain, 0));
  // What a method changes is the saved activations, alive in the forward-backward phase.
  const auto forward_backward = [&](const TrainingJob& job) {
    Result<MemoryEstimate> m = EstimateMemory(llama, job, Gpu80());
    EXPECT_TRUE(m.ok());
    for (const MemoryPhase& p : m->phases)
      if (std::string(p.name) == "forward-backward") return static_cast<double>(p.allocated_bytes);
    ADD_FAILURE() << "no forward-backward phase";
    return 0.0;
  };
  // The logits of the last stage: Megatron's fp32 vocab-parallel softmax and the 16-bit gradient,
  // 4 + 2 bytes per token per vocabulary entry (32,000 is a multiple of 128). They peak in the
  // loss backward, before any layer is rebuilt, so the phase holds the larger of the two.
  const double logits = 4096.0 * 32000 * (4 + 2);
  ASSERT_GT(logits, full);  // one rebuilt layer hides under the logits
  const double base = forward_backward(j) - (32 * input + logits);
  struct Row {
    RecomputeMethod method;
    int64_t n;
    double kept;     // checkpoints and layers not recomputed, alive through the step
    double rebuilt;  // the group rebuilt while its backward runs
  };
  const Row rows[] = {
      {RecomputeMethod::kUniform, 4, 8 * input, 4 * full},
      {RecomputeMethod::kUniform, 64, 1 * input, 32 * full},  // one group: the whole stage
      {RecomputeMethod::kBlock, 4, 4 * input + 28 * full, full},
      {RecomputeMethod::kBlock, 40, 32 * input, full},  // more than the stage has: all of them
      {RecomputeMethod::kInterval, 2, 16 * input + 16 * full, full},
      {RecomputeMethod::kInterval, 3, 11 * input + 21 * full, full},
  };
  for (const Row& r : rows) {
    j.recompute_method = r.method;
    j.recompute_num_layers = r.n;
    const double expected = r.kept + std::max(logits, r.rebuilt);
    EXPECT_NEAR(forward_backward(j) - base, expected, 1e-6 * expected)
        << ToString(r.method) << " " << r.n;
  }
}

}  // namespace
}  // namespace fmte
