// The policy's parsed-architecture cache (policy_arch_cache.cc): a decision must be the same
// whether the forwarded/derived architecture was parsed now or taken from the cache, a different
// text under the same model name must never hit another's entry, the cache stays bounded, failed
// parses are not kept, ClearPolicyCaches (what the plugin calls on reload) empties it, and
// concurrent decisions agree. Reference decisions are the ones computed with the cache switched off
// (the uncached code path). Also the policy's integer GiB formatting against printf.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../../estimator/policy/src/policy_internal.h"  // white-box: the cache switches
#include "fmte/policy.h"
#include "fmte/record.h"
#include "shipped_estimator.h"

namespace fmte {
namespace {

Config Conf() {
  auto c = ParseConfig("PartitionName=gpu Default=YES Gpu=H100-SXM5-80GB RaiseGpus=yes\n");
  EXPECT_TRUE(c.ok());
  return c.ok() ? *c : Config{};
}

std::string ReadScript(const std::string& name) {
  std::ifstream in(std::string(FMTE_SOURCE_DIR) + "/tests/data/scripts/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

JobRequest Request(const std::string& script, const std::string& tres_per_node, int64_t nodes,
                   const std::vector<std::pair<std::string, std::string>>& spank = {}) {
  SlurmFacts f;
  f.partition = "gpu";
  f.tres_per_node = tres_per_node;
  f.min_nodes = nodes;
  return ParseJobRequest(script, spank, f);
}

// Everything a decision shows or records.
std::string Fingerprint(const JobRequest& r, const Decision& d) {
  return std::string(ToString(d.kind)) + "|" + d.user_message + "|" + std::to_string(d.new_gpus) +
         "|" + std::to_string(d.new_time_limit_min) + "|" +
         std::to_string(d.estimate.memory.per_gpu_bytes) + "|" +
         std::to_string(d.estimate.wall_time_s) + "|" +
         (d.touched ? EncodeRecord(MakeRecord(r, d)) : "");
}

// A tiny Llama-style config.json (the keys ParseModelConfig reads for model_type llama).
std::string TinyLlama(int layers) {
  return "{\"model_type\":\"llama\",\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":4096,"
         "\"intermediate_size\":11008,\"num_attention_heads\":32,\"num_key_value_heads\":32,"
         "\"num_hidden_layers\":" +
         std::to_string(layers) +
         ",\"vocab_size\":32000,"
         "\"max_position_embeddings\":4096,\"rms_norm_eps\":1e-5,\"tie_word_embeddings\":false,"
         "\"torch_dtype\":\"bfloat16\"}";
}

class PolicyCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    internal::EnableArchCache(true);
    ClearPolicyCaches();
  }
  void TearDown() override {
    internal::EnableArchCache(true);
    ClearPolicyCaches();
  }
};

TEST_F(PolicyCacheTest, SameDecisionsWithAndWithoutTheCache) {
  struct Case {
    const char* script;
    const char* tres;
    int64_t nodes;
  };
  const Case kCases[] = {{"megatron_gpt_arrays.sh", "gres:gpu:8", 2},
                         {"megatron_llama_flat.sh", "gres:gpu:8", 1},
                         {"megatron_llama_flat.sh", "gres:gpu:2", 1}};  // too big: raise or reject
  const Config conf = Conf();
  for (const Case& c : kCases) {
    const JobRequest r = Request(ReadScript(c.script), c.tres, c.nodes);
    ASSERT_FALSE(r.arch_json.empty()) << c.script;  // a derived architecture: the cached path
    internal::EnableArchCache(false);
    const std::string uncached = Fingerprint(r, Decide(r, conf, ShippedEstimator()));
    EXPECT_EQ(internal::ArchCacheSize(), 0u);
    internal::EnableArchCache(true);
    const std::string cold =
        Fingerprint(r, Decide(r, conf, ShippedEstimator()));  // parses and stores
    EXPECT_EQ(internal::ArchCacheSize(), 1u) << c.script;
    const std::string warm = Fingerprint(r, Decide(r, conf, ShippedEstimator()));  // from the cache
    EXPECT_EQ(cold, uncached) << c.script;
    EXPECT_EQ(warm, uncached) << c.script;
    ClearPolicyCaches();
  }
}

TEST_F(PolicyCacheTest, ForwardedArchitecturesAreKeyedByTheirText) {
  // The same model name with two architectures (40 vs 20 layers): each decision uses its own.
  const std::string script = "#FMTE method=full micro-batch=1 seq-len=2048 sharding=ddp\n";
  const JobRequest big =
      Request(script, "gres:gpu:1", 1, {{"model", "site/custom"}, {"arch", TinyLlama(40)}});
  const JobRequest small =
      Request(script, "gres:gpu:1", 1, {{"model", "site/custom"}, {"arch", TinyLlama(20)}});
  const Config conf = Conf();
  const Decision d_big = Decide(big, conf, ShippedEstimator());
  const Decision d_small = Decide(small, conf, ShippedEstimator());
  ASSERT_TRUE(d_big.estimated) << d_big.user_message;
  ASSERT_TRUE(d_small.estimated) << d_small.user_message;
  EXPECT_EQ(internal::ArchCacheSize(), 2u);
  // Full fine-tuning keeps 16 B of model state per parameter (docs/formulas.md §2): twice the
  // layers, clearly more memory; a shared entry would give equal numbers.
  EXPECT_GT(d_big.estimate.memory.per_gpu_bytes, d_small.estimate.memory.per_gpu_bytes * 3 / 2);
  EXPECT_EQ(Fingerprint(big, Decide(big, conf, ShippedEstimator())), Fingerprint(big, d_big));
}

TEST_F(PolicyCacheTest, BoundedAndFailuresAreNotKept) {
  for (int layers = 1; layers <= static_cast<int>(internal::kArchCacheEntries) + 10; ++layers) {
    auto arch = internal::CachedModelConfig(TinyLlama(layers), "site/custom");
    ASSERT_TRUE(arch.ok()) << arch.status().ToString();
    EXPECT_EQ((*arch)->num_layers, layers);
    EXPECT_LE(internal::ArchCacheSize(), internal::kArchCacheEntries);
  }
  ClearPolicyCaches();
  EXPECT_EQ(internal::ArchCacheSize(), 0u);
  auto bad = internal::CachedModelConfig("{\"model_type\":", "site/broken");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(internal::ArchCacheSize(), 0u);
}

TEST_F(PolicyCacheTest, ConcurrentDecisionsAgree) {
  const JobRequest r = Request(ReadScript("megatron_llama_flat.sh"), "gres:gpu:8", 1);
  const Config conf = Conf();
  internal::EnableArchCache(false);
  const std::string want = Fingerprint(r, Decide(r, conf, ShippedEstimator()));
  internal::EnableArchCache(true);
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (t == 0 && i % 5 == 0) ClearPolicyCaches();  // a reload racing with decisions
        got[t] = Fingerprint(r, Decide(r, conf, ShippedEstimator()));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::string& g : got) EXPECT_EQ(g, want);
}

// Gib() formats in integer arithmetic for speed; printf's "%.1f" of the quotient is the reference.
TEST(PolicyGibTest, SameTextAsPrintf) {
  const int64_t kG = int64_t{1} << 30;
  const int64_t kBytes[] = {
      0,         1,          kG / 20 - 1, kG / 20,       kG / 20 + 1,   kG - 1,
      kG,        3 * kG / 2, 77309411328, 1778758710067, 1482164707328, int64_t{1} << 52,
      INT64_MAX, -1,         -kG};
  for (int64_t b : kBytes) {
    char want[64];
    std::snprintf(want, sizeof(want), "%.1f GiB",
                  static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0));
    EXPECT_EQ(internal::Gib(b), want) << b;
  }
  for (int64_t b = kG - 200000; b < kG + 200000; b += 997) {
    char want[64];
    std::snprintf(want, sizeof(want), "%.1f GiB",
                  static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0));
    ASSERT_EQ(internal::Gib(b), want) << b;
  }
}

}  // namespace
}  // namespace fmte
