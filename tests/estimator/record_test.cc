// The `fmte:` accounting record: round trip, tolerance of unknown keys and of other text in
// AdminComment (a Princeton jobstats "JS1:" blob, sacct's '|' delimiter), bounded length, errors
// naming the key.
#include "fmte/record.h"

#include <gtest/gtest.h>

#include "fmte/config.h"
#include "fmte/policy.h"
#include "fmte/request.h"
#include "fmte/site_correction.h"
#include "shipped_estimator.h"

namespace fmte {
namespace {

// Encodes `r`, decodes the text and checks that it re-encodes to the same text; `decoded` gets the
// decoded record.
::testing::AssertionResult RoundTrips(const AccountingRecord& r, AccountingRecord* decoded) {
  const std::string encoded = EncodeRecord(r);
  auto d = DecodeRecord(encoded);
  if (!d.ok()) return ::testing::AssertionFailure() << d.status().ToString() << "\n" << encoded;
  if (EncodeRecord(*d) != encoded)
    return ::testing::AssertionFailure() << "re-encodes differently:\n"
                                         << encoded << "\n"
                                         << EncodeRecord(*d);
  *decoded = std::move(d).value();
  return ::testing::AssertionSuccess();
}

AccountingRecord Sample() {
  AccountingRecord r;
  TrainingJob& j = r.job;
  j.model = "meta-llama/Llama-3.1-8B";
  j.method = Method::kQlora;
  j.quant = Quant::kNf4;
  j.lora_r = 64;
  j.lora_dropout = 0.05;
  j.save_head = true;  // PEFT modules_to_save: the head only ("mts=h")
  j.trainable_fp32 = true;
  j.attention_given = true;  // --attention fused, named: a config's pinned default must not win
  j.gpus = 16;
  j.gpus_per_node = 8;
  j.gpu = "A100-SXM4-80GB";
  j.tp = 2;
  j.pp = 2;
  j.vpp = 2;
  j.cp = 2;
  j.sequence_parallel = true;
  j.fp8 = Fp8::kTensorwise;
  j.fp8_params = true;
  j.moe_dispatcher = MoeDispatcher::kFlex;
  j.grad_reduce_bf16 = true;
  j.optimizer_states_bf16 = true;
  j.kbit_upcast = false;
  j.quantize_experts = true;
  j.micro_batch = 2;
  j.seq_len = 8192;
  j.grad_accum = 4;
  j.global_batch = 64;
  j.precision = Precision::kMixedBf16;
  j.optimizer = Optimizer::kAdamW8bit;
  j.sharding = Sharding::kZero1;
  j.offload_optimizer = true;
  j.activation_checkpointing = Checkpointing::kSelective;
  j.recompute_modules = *ParseRecomputeModules("moe,layernorm");
  j.attention = Attention::kEager;
  j.optimizer_impl = OptimizerImpl::kForeach;
  j.framework = Framework::kMegatron;
  j.tokens = 2000000000;
  j.epochs = 1.5;
  j.steps = 1200;
  j.save_every = {Every::Unit::kPerEpoch, 4};
  j.eval_every = {Every::Unit::kFraction, 0.125};
  j.eval_samples = 0.05;
  r.partition = "gpu";
  r.pred_mem_bytes = 61203283968;
  r.cap_bytes = 85899345920;
  r.pred_time_s = 5400;
  r.limit_s = 8100;
  r.decision = "rewrite";
  r.sources = "spank+launcher";
  return r;
}

TEST(RecordTest, RoundTrip) {
  const AccountingRecord r = Sample();
  const std::string text = EncodeRecord(r);
  EXPECT_TRUE(text.starts_with("fmte:v1;")) << text;
  EXPECT_EQ(text.find_first_of(" |,\n"), std::string::npos) << text;
  auto d = DecodeRecord(text);
  ASSERT_TRUE(d.ok()) << d.status().message();
  const TrainingJob& a = r.job;
  const TrainingJob& b = d->job;
  EXPECT_EQ(b.model, a.model);
  EXPECT_EQ(b.method, a.method);
  EXPECT_EQ(b.quant, a.quant);
  EXPECT_EQ(b.lora_r, a.lora_r);
  EXPECT_DOUBLE_EQ(b.lora_dropout, a.lora_dropout);
  EXPECT_EQ(b.optimizer_impl, a.optimizer_impl);
  EXPECT_EQ(b.attention, a.attention);
  EXPECT_EQ(b.attention_given, a.attention_given);
  EXPECT_EQ(b.gpus, a.gpus);
  EXPECT_EQ(b.gpus_per_node, a.gpus_per_node);
  EXPECT_EQ(b.gpu, a.gpu);
  EXPECT_EQ(b.tp, a.tp);
  EXPECT_EQ(b.pp, a.pp);
  EXPECT_EQ(b.vpp, a.vpp);
  EXPECT_EQ(b.cp, a.cp);
  EXPECT_EQ(b.fp8, a.fp8);
  EXPECT_EQ(b.fp8_params, a.fp8_params);
  EXPECT_EQ(b.moe_dispatcher, a.moe_dispatcher);
  EXPECT_EQ(b.grad_reduce_bf16, a.grad_reduce_bf16);
  EXPECT_EQ(b.optimizer_states_bf16, a.optimizer_states_bf16);
  EXPECT_EQ(b.kbit_upcast, a.kbit_upcast);
  EXPECT_EQ(b.quantize_experts, a.quantize_experts);
  EXPECT_EQ(b.save_embedding, a.save_embedding);
  EXPECT_EQ(b.save_head, a.save_head);
  EXPECT_EQ(b.trainable_fp32, a.trainable_fp32);
  EXPECT_EQ(b.recompute_modules, a.recompute_modules);
  EXPECT_EQ(b.sequence_parallel, a.sequence_parallel);
  EXPECT_EQ(b.micro_batch, a.micro_batch);
  EXPECT_EQ(b.seq_len, a.seq_len);
  EXPECT_EQ(b.grad_accum, a.grad_accum);
  EXPECT_EQ(b.global_batch, a.global_batch);
  EXPECT_EQ(b.precision, a.precision);
  EXPECT_EQ(b.optimizer, a.optimizer);
  EXPECT_EQ(b.sharding, a.sharding);
  EXPECT_EQ(b.offload_optimizer, a.offload_optimizer);
  EXPECT_EQ(b.activation_checkpointing, a.activation_checkpointing);
  EXPECT_EQ(b.attention, a.attention);
  EXPECT_EQ(b.framework, a.framework);
  EXPECT_EQ(b.tokens, a.tokens);
  EXPECT_DOUBLE_EQ(b.epochs, a.epochs);
  EXPECT_EQ(b.steps, a.steps);
  EXPECT_EQ(b.save_every, a.save_every);
  EXPECT_EQ(b.eval_every, a.eval_every);
  EXPECT_DOUBLE_EQ(b.eval_samples, a.eval_samples);
  EXPECT_EQ(d->partition, r.partition);
  EXPECT_EQ(d->pred_mem_bytes, r.pred_mem_bytes);
  EXPECT_EQ(d->cap_bytes, r.cap_bytes);
  EXPECT_DOUBLE_EQ(d->pred_time_s, r.pred_time_s);
  EXPECT_EQ(d->limit_s, r.limit_s);
  EXPECT_EQ(d->decision, r.decision);
  EXPECT_EQ(d->sources, r.sources);
  EXPECT_EQ(EncodeRecord(*d), text);  // stable
}

TEST(RecordTest, SurvivesTextAroundIt) {
  const std::string rec = EncodeRecord(Sample());
  const std::string kCases[] = {
      rec + " JS1:H4sIAAAAAAAAA+2ZW2/bNhTHv4vgZ8mRKF+i",  // jobstats appended after a space
      "site note; " + rec,                                // text before it
      rec + "|COMPLETED|00:10:00",                        // a sacct --parsable2 row
      "JS1:abc," + rec + ",JS1:def",
  };
  for (const std::string& text : kCases) {
    auto d = DecodeRecord(text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.status().message();
    EXPECT_EQ(d->job.model, "meta-llama/Llama-3.1-8B") << text;
    EXPECT_EQ(d->decision, "rewrite") << text;
  }
  EXPECT_EQ(DecodeRecord("JS1:only jobstats").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(DecodeRecord("").status().code(), Status::Code::kNotFound);
}

TEST(RecordTest, UnknownKeysKeptAndErrorsNameTheKey) {
  auto d = DecodeRecord("fmte:v2;decision=accept;future_key=42;gpus=4;x%20y=1");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->version, 2);
  ASSERT_EQ(d->extra.size(), 2u);
  EXPECT_EQ(d->extra[0], (std::pair<std::string, std::string>{"future_key", "42"}));
  struct Case {
    const char* text;
    const char* key;
  };
  const Case kCases[] = {{"fmte:v1;gpus=many", "gpus"},
                         {"fmte:v1;method=magic", "method"},
                         {"fmte:v1;seq=1180591620717411303424", "seq"},
                         {"fmte:v1;model=a%2", "model"},
                         {"fmte:vX;gpus=1", "version"}};
  for (const Case& c : kCases) {
    auto e = DecodeRecord(c.text);
    ASSERT_FALSE(e.ok()) << c.text;
    EXPECT_NE(e.status().message().find(c.key), std::string::npos) << e.status().message();
  }
}

TEST(RecordTest, EscapesAndBoundedLength) {
  AccountingRecord r = Sample();
  r.job.model = "/home/user/my models;v2|x,y/config.json";
  const std::string text = EncodeRecord(r);
  EXPECT_EQ(text.find_first_of(" |,"), std::string::npos) << text;
  auto d = DecodeRecord(text + " tail");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->job.model, r.job.model);
  r.job.model = std::string(5000, 'm');
  for (int i = 0; i < 100; ++i) r.extra.emplace_back("k" + std::to_string(i), std::string(50, 'v'));
  const std::string big = EncodeRecord(r);
  EXPECT_LE(big.size(), kMaxRecordBytes);
  auto db = DecodeRecord(big);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(db->decision, "rewrite");  // the prediction and decision come first and survive the cap
  EXPECT_EQ(db->pred_mem_bytes, r.pred_mem_bytes);
  // Found by fuzz_record: unknown keys filling the cap shortened the model to nothing ("model="),
  // and the record no longer encoded to itself after a decode. The model keeps its room (up to 256
  // encoded bytes), the unknown keys give way, and decode(encode(r)) encodes to the same text.
  EXPECT_GE(db->job.model.size(), 200u);
  EXPECT_EQ(db->job.model.find_first_not_of('m'), std::string::npos);
  EXPECT_LT(db->extra.size(), r.extra.size());
  EXPECT_EQ(EncodeRecord(*db), big);
}

// Bug found by fuzz_fmte_lines (6.2 M inputs in): a job predicted to run longer than the record's
// reader accepts (70B LoRA over 4000T tokens on 4 GPUs: ~1e13 s) got a record with that
// pred_time_s, which DecodeRecord then refused ("expected a number in [0, 1e12]"), so
// fmte-retrain and replay would have lost the job. The record now holds at most
// kMaxRecordedTimeS, and every record the policy writes decodes to itself.
TEST(RecordTest, AbsurdlyLongPredictionsStayReadable) {
  auto config = ParseConfig("PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB\n");
  ASSERT_TRUE(config.ok());
  for (const char* tokens : {"2T", "4000T"}) {
    SCOPED_TRACE(tokens);
    SlurmFacts facts;
    facts.tres_per_node = "gres:gpu:a100:4";
    const JobRequest request = ParseJobRequest(
        std::string("#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-70B method=lora framework=fsdp "
                    "activation-checkpointing=full tokens=") +
            tokens + "\ntorchrun --nproc_per_node 4 train.py\n",
        {}, facts);
    const Decision d = Decide(request, *config, ShippedEstimator());
    ASSERT_TRUE(d.touched);
    ASSERT_TRUE(d.estimate.has_time);
    AccountingRecord decoded;
    ASSERT_TRUE(RoundTrips(MakeRecord(request, d), &decoded));
    EXPECT_GT(decoded.pred_time_s, 0);
    EXPECT_LE(decoded.pred_time_s, kMaxRecordedTimeS);
  }
}

// Bug 14, found by fuzz_fmte_lines: micro-batch 84096 x 5.5 M tokens of a 70B model saturates the
// memory prediction at INT64_MAX, which the record's reader refused (pred_mem above 2^62).
TEST(RecordTest, AbsurdlyLargeMemoryPredictionsStayReadable) {
  auto config = ParseConfig("PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB\n");
  ASSERT_TRUE(config.ok());
  SlurmFacts facts;
  facts.tres_per_node = "gres:gpu:a100:4";
  const JobRequest request = ParseJobRequest(
      "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-70B method=full sharding=fsdp-full "
      "micro-batch=84096 seq-len=5555555\ntorchrun --nproc_per_node 4 train.py\n",
      {}, facts);
  const Decision d = Decide(request, *config, ShippedEstimator());
  ASSERT_TRUE(d.estimated);
  AccountingRecord decoded;
  ASSERT_TRUE(RoundTrips(MakeRecord(request, d), &decoded));
  EXPECT_GT(decoded.pred_mem_bytes, decoded.cap_bytes);
  EXPECT_LE(decoded.pred_mem_bytes, kMaxRecordedBytes);
}

// Found by fuzz_batch_script: a launcher starting 1440 processes on one node (no GPU request) made
// the record say gpn=1440, which its reader refuses (at most 1024). Each integer is now written
// within the range its reader accepts.
TEST(RecordTest, AbsurdLayoutsStayReadable) {
  auto config = ParseConfig("PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB\n");
  ASSERT_TRUE(config.ok());
  const JobRequest request = ParseJobRequest(
      "#!/bin/bash\ntorchrun --nproc_per_node 1440 train.py --model_name_or_path "
      "Qwen/Qwen2.5-7B-Instruct\n",
      {}, SlurmFacts{});
  ASSERT_EQ(request.job.gpus_per_node, 1440);
  const Decision d = Decide(request, *config, ShippedEstimator());
  ASSERT_TRUE(d.touched);
  AccountingRecord decoded;
  ASSERT_TRUE(RoundTrips(MakeRecord(request, d), &decoded));
  EXPECT_EQ(decoded.job.gpus, 1440);
  EXPECT_EQ(decoded.job.gpus_per_node, 1024);  // the most a record holds
  // The same for the other degrees: whatever the job says, the record reads back.
  AccountingRecord r = MakeRecord(request, d);
  r.job.vpp = 5000;
  r.job.ep = 1 << 21;
  r.job.cp = 4096;
  r.job.etp = 9999;
  r.job.lora_r = 1 << 20;
  r.job.method = Method::kLora;
  AccountingRecord back;
  EXPECT_TRUE(RoundTrips(r, &back));
}

}  // namespace
}  // namespace fmte
