// DecisionCache (slurm_plugin/decision_cache.h): what its key holds, and its bounds. The key must
// change with everything ParseJobRequest reads and with nothing else; a field of SlurmFacts left
// out of the key would let one job's decision be given to another, so every field is varied here.
#include "decision_cache.h"

#include <gtest/gtest.h>

extern "C" {
#include <slurm/slurm.h>
}

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/policy.h"
#include "fmte/record.h"
#include "fmte/request.h"
#include "slurm_xapi.h"

namespace fmte::slurm {
namespace {

const char kScript[] =
    "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=2048 micro-batch=2\n"
    "torchrun --nproc_per_node=4 train.py\n";

SubmitInputs Base() {
  SubmitInputs in;
  in.script = kScript;
  in.spank_values = {{"grad-accum", "8"}};
  in.facts.partition = "gpu";
  in.facts.time_limit_min = 480;
  in.facts.min_nodes = 1;
  in.facts.num_tasks = 4;
  in.facts.ntasks_per_node = 4;
  in.facts.tres_per_node = "gres:gpu:a100:4";
  in.facts.job_name = "sweep-lr-1e-4";
  in.facts.user = "1000";
  return in;
}

TEST(CacheKeyTest, EveryInputTheRequestReadsChangesTheKey) {
  const std::string base = DecisionCache::Key(Base(), true);
  ASSERT_FALSE(base.empty());
  const std::string other_script = std::string(kScript) + "echo done\n";
  const std::vector<std::pair<const char*, std::function<void(SubmitInputs*)>>> changes = {
      {"script", [&](SubmitInputs* in) { in->script = other_script; }},
      {"partition", [](SubmitInputs* in) { in->facts.partition = "gpu2"; }},
      {"time_limit_min", [](SubmitInputs* in) { in->facts.time_limit_min = 481; }},
      {"min_nodes", [](SubmitInputs* in) { in->facts.min_nodes = 2; }},
      {"num_tasks", [](SubmitInputs* in) { in->facts.num_tasks = 8; }},
      {"ntasks_per_node", [](SubmitInputs* in) { in->facts.ntasks_per_node = 8; }},
      {"exclusive", [](SubmitInputs* in) { in->facts.exclusive = true; }},
      {"tres_per_node", [](SubmitInputs* in) { in->facts.tres_per_node = "gres:gpu:a100:8"; }},
      {"tres_per_job", [](SubmitInputs* in) { in->facts.tres_per_job = "gres:gpu:4"; }},
      {"tres_per_task", [](SubmitInputs* in) { in->facts.tres_per_task = "gres:gpu:1"; }},
      {"tres_per_socket", [](SubmitInputs* in) { in->facts.tres_per_socket = "gres:gpu:2"; }},
      {"mem_per_node_mb", [](SubmitInputs* in) { in->facts.mem_per_node_mb = 256000; }},
      {"mem_per_cpu_mb", [](SubmitInputs* in) { in->facts.mem_per_cpu_mb = 4000; }},
      {"mem_per_gpu_mb", [](SubmitInputs* in) { in->facts.mem_per_gpu_mb = 64000; }},
      {"cpus_per_task", [](SubmitInputs* in) { in->facts.cpus_per_task = 16; }},
      {"a SPANK value", [](SubmitInputs* in) { in->spank_values[0].second = "16"; }},
      {"a SPANK key", [](SubmitInputs* in) { in->spank_values[0].first = "micro-batch"; }},
      {"one more SPANK value",
       [](SubmitInputs* in) { in->spank_values.emplace_back("lora-r", "8"); }},
      {"the forwarded reading",
       [](SubmitInputs* in) { in->spank_values.emplace_back(std::string(kReadKey), "{\"v\":1}"); }},
      // Length-prefixed: moving bytes from one field to the next is another key.
      {"bytes moved between fields",
       [](SubmitInputs* in) {
         in->facts.tres_per_node = "gres:gpu:a100:";
         in->facts.tres_per_job = "4";
       }},
  };
  const uint64_t base_hash = DecisionCache::ProbeFor(Base(), true).hash;
  EXPECT_EQ(DecisionCache::ProbeFor(Base(), true).hash, base_hash);
  for (const auto& [name, change] : changes) {
    SubmitInputs in = Base();
    change(&in);
    EXPECT_NE(DecisionCache::Key(in, true), base) << name;
    EXPECT_NE(DecisionCache::ProbeFor(in, true).hash, base_hash) << name;
  }
  // Without the script (a forwarded scan), the script's text is not part of the key.
  SubmitInputs in = Base();
  in.script = other_script;
  EXPECT_EQ(DecisionCache::Key(in, false), DecisionCache::Key(Base(), false));
}

// The job's name and its user are left out of the key (a sweep names every job differently):
// the decision must not depend on them.
TEST(CacheKeyTest, NameAndUserAreNotReadByTheDecision) {
  auto config = ParseConfig("GresTypeGpu=a100:A100-SXM4-80GB\nRaiseGpus=yes\n");
  auto estimator = Estimator::Load();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_TRUE(estimator.ok()) << estimator.status().ToString();
  const auto decide = [&](const SubmitInputs& in) {
    const JobRequest r = ParseJobRequest(in.script, in.spank_values, in.facts);
    EXPECT_TRUE(r.is_llm_job);
    const Decision d = Decide(r, *config, *estimator);
    EXPECT_TRUE(d.estimated);
    return d.user_message + "\n" + EncodeRecord(MakeRecord(r, d));
  };
  SubmitInputs other = Base();
  other.facts.job_name = "sweep-lr-3e-4";
  other.facts.user = "2000";
  EXPECT_EQ(DecisionCache::Key(other, true), DecisionCache::Key(Base(), true));
  EXPECT_EQ(DecisionCache::ProbeFor(other, true).hash, DecisionCache::ProbeFor(Base(), true).hash);
  EXPECT_EQ(decide(other), decide(Base()));
}

TEST(StableHasherTest, FramedDeterministicAndSensitiveToEveryByte) {
  const auto hash = [](std::initializer_list<std::string_view> texts) {
    StableHasher h;
    for (std::string_view t : texts) h.Add(t);
    return h.value();
  };
  // Fields are framed by their length: the same bytes cut differently are different inputs.
  EXPECT_NE(hash({"ab", "c"}), hash({"a", "bc"}));
  EXPECT_NE(hash({"", "abc"}), hash({"abc", ""}));
  EXPECT_NE(hash({"abc"}), hash({"abc", ""}));
  // The same input, the same value, wherever its bytes lie in memory (words read byte by byte).
  const std::string text = "xfmte:v1;decision=accept;model=meta-llama/Llama-3.1-8B;gpus=4";
  const std::string copy = "yy" + text;
  EXPECT_EQ(hash({std::string_view(text).substr(1)}), hash({std::string_view(copy).substr(3)}));
  // Every length from 0 to 40 (whole words and every tail) and every single-bit change of a
  // 40-byte text gives a value of its own.
  std::set<uint64_t> seen;
  const std::string base(40, 'a');
  for (size_t n = 0; n <= base.size(); ++n)
    seen.insert(hash({std::string_view(base).substr(0, n)}));
  for (size_t i = 0; i < base.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = base;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      seen.insert(hash({flipped}));
    }
  }
  EXPECT_EQ(seen.size(), base.size() + 1 + base.size() * 8);
}

TEST(DecisionCacheTest, FindsOnlyTheSameSubmissionAndStaysBounded) {
  DecisionCache cache;
  std::vector<SubmitInputs> inputs(DecisionCache::kMaxEntries + 1, Base());
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i].facts.time_limit_min = 60 + i;
  const auto entry = [](size_t i) {
    CachedDecision c;
    c.is_llm_job = true;
    c.model = "m" + std::to_string(i);
    return c;
  };
  const auto probe = [&](size_t i) { return DecisionCache::ProbeFor(inputs[i], true); };
  CachedDecision scratch;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const CachedDecision* kept = cache.Put(probe(i), entry(i), &scratch);
    ASSERT_NE(kept, &scratch);
    EXPECT_EQ(kept->model, "m" + std::to_string(i));
  }
  EXPECT_EQ(cache.size(), DecisionCache::kMaxEntries);
  EXPECT_EQ(cache.Find(probe(0)), nullptr);  // the oldest was replaced
  for (size_t i = 1; i < inputs.size(); ++i) {
    const CachedDecision* c = cache.Find(probe(i));
    ASSERT_NE(c, nullptr) << i;
    EXPECT_EQ(c->model, "m" + std::to_string(i));
  }
  // Equal hashes are confirmed on the whole key: another submission under a kept one's hash is
  // not found.
  SubmitInputs other = Base();
  other.facts.partition = "elsewhere";
  DecisionCache::Probe forged = DecisionCache::ProbeFor(other, true);
  forged.hash = probe(5).hash;
  EXPECT_EQ(cache.Find(forged), nullptr);
  // A submission too large to keep gets its value back in scratch and is never found.
  SubmitInputs big = Base();
  const std::string script(DecisionCache::kMaxKeyBytes, '#');
  big.script = script;
  EXPECT_EQ(cache.Put(DecisionCache::ProbeFor(big, true), entry(7), &scratch), &scratch);
  EXPECT_EQ(scratch.model, "m7");
  EXPECT_EQ(cache.Find(DecisionCache::ProbeFor(big, true)), nullptr);
  cache.Clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Find(probe(5)), nullptr);
}

TEST(DecisionCacheTest, ALongScriptWithoutAForwardedReadingIsNotKept) {
  SubmitInputs in = Base();
  const std::string big(DecisionCache::kMaxKeyBytes, '#');
  in.script = big;
  EXPECT_TRUE(DecisionCache::Key(in, true).empty());
  EXPECT_FALSE(DecisionCache::Key(in, false).empty());  // the script is not in this key
  EXPECT_FALSE(DecisionCache::MayOmitScript(in));
  in.spank_values.emplace_back(std::string(kReadKey), "{}");
  EXPECT_TRUE(DecisionCache::MayOmitScript(in));
}

}  // namespace
}  // namespace fmte::slurm
