// Site corrections (site_correction.h) in the core: the feature row, loading a regressors directory
// (absent = no correction; mismatches refused naming the file), the guards, and the facade/policy/
// record path. The models here are XGBoost JSON files with hand-derived outputs (format as in
// tree_model_test.cc); agreement with models trained by libxgboost through fmte-retrain's own
// library is tested in tests/learn/site_correction_test.cc.
#include "fmte/site_correction.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <vector>

#include "fmte/estimator.h"
#include "fmte/policy.h"
#include "fmte/record.h"

namespace fmte {
namespace {

namespace fs = std::filesystem;

// One tree: log2_gpus (feature 0) < 1.5 (missing: left) -> `one_gpu`, else `more_gpus`.
std::string SplitModel(double one_gpu, double more_gpus) {
  return R"({"learner":{"learner_model_param":{"base_score":"0","num_feature":"26","num_class":"0"},)"
         R"("objective":{"name":"reg:squarederror"},"gradient_booster":{"name":"gbtree","model":{"trees":[)"
         R"({"left_children":[1,-1,-1],"right_children":[2,-1,-1],"split_indices":[0,0,0],)"
         R"("default_left":[1,0,0],"split_conditions":[1.5,)" +
         std::to_string(one_gpu) + "," + std::to_string(more_gpus) + "]}]}}}}";
}

class Dir {
 public:
  Dir()
      : path_(fs::temp_directory_path() /
              ("fmte_site_" + std::to_string(::getpid()) + "_" + std::to_string(n_++))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Dir() { fs::remove_all(path_); }
  std::string str() const { return path_.string(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }
  // A manifest as fmte-retrain train writes it (retrain_train.cc EntryJson).
  void Install(const std::string& key, const std::string& model_json, double p95,
               std::vector<std::string> features = SiteFeatureNames()) const {
    Write(key + ".json", model_json);
    nlohmann::json m;
    if (fs::exists(path_ / "manifest.json"))
      m = nlohmann::json::parse(std::ifstream(path_ / "manifest.json"));
    m["regressors"].push_back(
        {{"key", key},
         {"model", key + ".json"},
         {"features", features},
         {"rows", 40},
         {"groups", 9},
         {"log_residual_quantiles", {{"p50", 0.0}, {"p90", p95 / 2}, {"p95", p95}}},
         {"data", {{"first_end", "2026-11-01T00:00:00"}, {"last_end", "2026-11-20T00:00:00"}}}});
    Write("manifest.json", m.dump());
  }

 private:
  static inline int n_ = 0;
  fs::path path_;
};

TrainingJob Lora8b(int64_t gpus) {
  TrainingJob j;
  j.model = "meta-llama/Llama-3.1-8B";
  j.method = Method::kLora;
  j.gpus = gpus;
  j.micro_batch = 2;
  j.seq_len = 2048;
  j.grad_accum = 8;
  j.activation_checkpointing = Checkpointing::kFull;
  j.epochs = 1.23456789;  // printed as 1.23457 by the record
  j.steps = 1000;
  return j;
}

// Values derived by hand: 8 GPUs on one node -> log2 3, dp 8 -> 3, micro-batch 2 -> 1, seq 2048 ->
// 11, ga 8 -> 3, lora_r 16 (TrainingJob default), steps 1000 -> log2(1000), 3600 s -> log2(3600),
// 32 GiB (2^35 bytes) of 64 GiB -> 0.5.
TEST(SiteFeaturesTest, RowFromTheJobAndThePrediction) {
  ASSERT_EQ(SiteFeatureNames().size(), kSiteFeatureCount);
  TrainingJob j = Lora8b(8);
  j.gpus_per_node = 8;
  const SiteFeatureRow r = SiteFeatures(j, 3600.2, int64_t{32} << 30, int64_t{64} << 30);
  const auto at = [&](const std::string& name) {
    const auto& n = SiteFeatureNames();
    return r[static_cast<size_t>(std::find(n.begin(), n.end(), name) - n.begin())];
  };
  EXPECT_FLOAT_EQ(at("log2_gpus"), 3);
  EXPECT_FLOAT_EQ(at("gpus_per_node"), 8);
  EXPECT_FLOAT_EQ(at("log2_nodes"), 0);
  EXPECT_FLOAT_EQ(at("log2_dp"), 3);
  EXPECT_FLOAT_EQ(at("log2_micro_batch"), 1);
  EXPECT_FLOAT_EQ(at("log2_seq_len"), 11);
  EXPECT_FLOAT_EQ(at("log2_grad_accum"), 3);
  EXPECT_FLOAT_EQ(at("lora_r"), 16);
  EXPECT_FLOAT_EQ(at("log2_steps"), static_cast<float>(std::log2(1000.0)));
  EXPECT_FLOAT_EQ(at("epochs"), 1.23457f);
  EXPECT_FLOAT_EQ(at("log2_pred_time_s"),
                  static_cast<float>(std::log2(3600.0)));  // rounded as recorded
  EXPECT_FLOAT_EQ(at("log2_pred_mem_bytes"), 35);
  EXPECT_FLOAT_EQ(at("pred_mem_over_cap"), 0.5);
  EXPECT_TRUE(std::isnan(at("log2_tokens")));
  // Nothing predicted: NaN, as a record without pred_time_s / pred_mem gives.
  const SiteFeatureRow none = SiteFeatures(j, 0, 0, int64_t{80} << 30);
  EXPECT_TRUE(std::isnan(none[22]) && std::isnan(none[23]) && std::isnan(none[25]));
}

TEST(SiteFeaturesTest, RecordedTimeIsWhatTheRecordStores) {
  for (double s : {0.4, 59.5, 3600.2, 1234567.89, 9.87654321e9}) {
    AccountingRecord r;
    r.pred_time_s = RecordedTimeS(s);
    auto back = DecodeRecord(EncodeRecord(r));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->pred_time_s, r.pred_time_s) << s;
    EXPECT_EQ(RecordedTimeS(r.pred_time_s), r.pred_time_s) << s;  // idempotent
  }
}

TEST(SiteCorrectionsTest, AbsentMeansNoCorrection) {
  auto none = SiteCorrections::LoadDir("/nonexistent/fmte-regressors");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  Dir d;
  d.Write("manifest.json",
          R"({"cluster":"x","regressors":[{"key":"matmul_fwd","model":"m.json"}]})");
  auto other = SiteCorrections::LoadDir(d.str());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_TRUE(other->empty());
}

TEST(SiteCorrectionsTest, RefusesWhatItCannotApplyNamingTheFile) {
  struct Case {
    const char* what;
    std::function<void(const Dir&)> make;
    std::string needle;
  };
  std::vector<std::string> renamed = SiteFeatureNames();
  renamed[3] = "tensor_parallel";
  std::vector<std::string> shorter(SiteFeatureNames().begin(), SiteFeatureNames().end() - 1);
  const Case cases[] = {
      {"feature renamed",
       [&](const Dir& d) { d.Install("sacct_time_correction", SplitModel(0, 0), 0.1, renamed); },
       "feature #3 is 'tensor_parallel', expected 'tp'"},
      {"feature missing",
       [&](const Dir& d) { d.Install("sacct_memory_correction", SplitModel(0, 0), 0.1, shorter); },
       "25 features listed, 26 expected"},
      {"model file missing",
       [](const Dir& d) {
         d.Install("sacct_time_correction", SplitModel(0, 0), 0.1);
         fs::remove(d.str() + "/sacct_time_correction.json");
       },
       "sacct_time_correction.json"},
      {"manifest not JSON", [](const Dir& d) { d.Write("manifest.json", "{oops"); },
       "manifest.json: not a JSON object"},
  };
  for (const Case& c : cases) {
    Dir d;
    c.make(d);
    auto s = SiteCorrections::LoadDir(d.str());
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_NE(s.status().message().find(d.str()), std::string::npos)
        << c.what << ": " << s.status().message();
    EXPECT_NE(s.status().message().find(c.needle), std::string::npos)
        << c.what << ": " << s.status().message();
  }
}

// Guards: raise by the model (at most x4); lower only to exp(f + p95), never below 0.9; time within
// [0.01, 100]. Leaves are log factors: log(1.5), log(10); log(0.5) with p95 0.1 -> exp(-0.593) =
// 0.553 -> 0.9; log(0.95) with p95 0.02 -> 0.95 x e^0.02 = 0.969.
TEST(SiteCorrectionsTest, Guards) {
  struct Case {
    double leaf, p95;
    bool memory;
    double want;
    bool clamped;
  } cases[] = {
      {std::log(1.5), 0.1, true, 1.5, false},
      {std::log(10.0), 0.1, true, 4.0, true},
      {std::log(0.5), 0.1, true, 0.9, true},
      {std::log(0.95), 0.02, true, 0.95 * std::exp(0.02), true},
      {std::log(0.95), -0.5, true, 0.95, false},
      {std::log(0.3), 0.1, false, 0.3, false},
      {std::log(1e-4), 0.1, false, 0.01, true},
      {std::log(1e3), 0.1, false, 100, true},
  };
  for (const Case& c : cases) {
    Dir d;
    d.Install(c.memory ? "sacct_memory_correction" : "sacct_time_correction", SplitModel(c.leaf, 0),
              c.p95);
    auto s = SiteCorrections::LoadDir(d.str());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    const SiteFeatureRow row = SiteFeatures(Lora8b(1), 600, int64_t{20} << 30, int64_t{80} << 30);
    const AppliedCorrection a =
        c.memory ? MemoryCorrection(*s->memory, row) : TimeCorrection(*s->time, row);
    EXPECT_TRUE(a.applied);
    EXPECT_NEAR(a.factor, c.want, 1e-5) << c.leaf;
    EXPECT_EQ(a.clamped, c.clamped) << c.leaf;
  }
}

Catalogs Load(const std::string& regressors) {
  auto c = LoadCatalogs(std::string(FMTE_SOURCE_DIR) + "/etc", regressors);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : Catalogs{};
}

// A batch script with one #FMTE line, submitted to partition gpu with --gres=gpu:a100:N.
Result<JobRequest> A100Request(int gpus, const std::string& fmte_line) {
  SlurmFacts facts;
  facts.partition = "gpu";
  facts.tres_per_node = "gres:gpu:a100:" + std::to_string(gpus);
  return ParseJobRequest("#!/bin/bash\n#FMTE " + fmte_line + "\n", {}, facts);
}

// The facade applies the factors (1 GPU: memory x1.25, time x0.5; 8 GPUs: x1 / x1), keeps the
// models' own predictions, and the policy's record keeps those as pred_* with the corrected ones
// as corr_*; the training row from the decoded record equals the applying row.
TEST(SiteCorrectionsTest, FacadePolicyAndRecord) {
  Dir d;
  d.Install("sacct_memory_correction", SplitModel(std::log(1.25), 0), 0.05);
  d.Install("sacct_time_correction", SplitModel(std::log(0.5), 0), 0.2);
  const Catalogs plain = Load("");
  const Catalogs site = Load(d.str());
  ASSERT_TRUE(site.corrections.time && site.corrections.memory);
  auto arch = plain.models.Find("meta-llama/Llama-3.1-8B");
  auto gpu = plain.gpus.Find("A100-SXM4-80GB");
  ASSERT_TRUE(arch.ok() && gpu.ok());
  TrainingJob job = Lora8b(1);
  job.gpu = (*gpu)->name;
  auto base = Estimate(plain, **arch, job, **gpu);
  auto corrected = Estimate(site, **arch, job, **gpu);
  ASSERT_TRUE(base.ok() && corrected.ok());
  EXPECT_FALSE(base->correction.any());
  ASSERT_TRUE(corrected->correction.memory.applied);
  EXPECT_EQ(ModelPerGpuBytes(*corrected), base->memory.per_gpu_bytes);
  EXPECT_NEAR(static_cast<double>(corrected->memory.per_gpu_bytes),
              1.25 * base->memory.per_gpu_bytes, 1e-6 * base->memory.per_gpu_bytes);
  if (!plain.has_time_model) GTEST_SKIP() << "no time model shipped: time correction not testable";
  ASSERT_TRUE(base->has_time && corrected->correction.time.applied);
  EXPECT_DOUBLE_EQ(ModelWallTimeS(*corrected), base->wall_time_s);
  EXPECT_NEAR(corrected->wall_time_s, 0.5 * base->wall_time_s, 1e-6 * base->wall_time_s);
  EXPECT_NEAR(corrected->wall_time_bound_s, corrected->wall_time_s * std::exp(0.2),
              1e-6 * base->wall_time_s);

  // Through the policy and the record.
  const Estimator est(Load(d.str()));
  auto config =
      ParseConfig("PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB MaxTime=2-00:00:00\n");
  ASSERT_TRUE(config.ok());
  auto request = A100Request(1,
                             "model=meta-llama/Llama-3.1-8B method=lora micro-batch=2 seq-len=2048 "
                             "grad-accum=8 activation-checkpointing=full steps=1000");
  ASSERT_TRUE(request.ok());
  const Decision dec = Decide(*request, *config, est);
  ASSERT_TRUE(dec.estimated && dec.estimate.correction.time.applied);
  auto rec = DecodeRecord(EncodeRecord(MakeRecord(*request, dec)));
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->pred_mem_bytes, ModelPerGpuBytes(dec.estimate));
  EXPECT_EQ(rec->corr_mem_bytes, dec.estimate.memory.per_gpu_bytes);
  EXPECT_EQ(rec->pred_time_s, RecordedTimeS(ModelWallTimeS(dec.estimate)));
  EXPECT_NEAR(rec->corr_time_s, dec.estimate.wall_time_s, 0.5);
  const SiteFeatureRow trained =
      SiteFeatures(rec->job, rec->pred_time_s, rec->pred_mem_bytes, rec->cap_bytes);
  const SiteFeatureRow applied = SiteFeatures(dec.job, ModelWallTimeS(dec.estimate),
                                              ModelPerGpuBytes(dec.estimate), (*gpu)->memory_bytes);
  for (size_t i = 0; i < kSiteFeatureCount; ++i) {
    if (std::isnan(applied[i]))
      EXPECT_TRUE(std::isnan(trained[i])) << SiteFeatureNames()[i];
    else
      EXPECT_EQ(trained[i], applied[i]) << SiteFeatureNames()[i];
  }
}

// With a site memory correction installed, the GPU-count search judges layouts by the corrected
// memory, as the decision does: the raised job's own (corrected) estimate must fit the GPU.
TEST(SiteCorrectionsTest, GpuSearchUsesTheCorrectedMemory) {
  Dir d;
  d.Install("sacct_memory_correction", SplitModel(std::log(2.0), std::log(2.0)),
            0.05);  // x2 everywhere
  auto config = ParseConfig(
      "PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB RaiseGpus=yes MaxTime=2-00:00:00\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto request =
      A100Request(2,
                  "model=meta-llama/Llama-3.1-8B method=full sharding=fsdp-full micro-batch=1 "
                  "seq-len=2048 activation-checkpointing=full precision=mixed-bf16");
  ASSERT_TRUE(request.ok());
  const Estimator plain(Load(""));
  const Estimator site(Load(d.str()));
  const Decision p = Decide(*request, *config, plain);
  const Decision s = Decide(*request, *config, site);
  ASSERT_EQ(s.kind, DecisionKind::kRewrite) << s.user_message;
  EXPECT_LE(s.estimate.memory.per_gpu_bytes, s.usable_bytes) << s.user_message;
  EXPECT_GT(s.job.gpus, p.kind == DecisionKind::kRewrite ? p.job.gpus : request->job.gpus);
}

// The record prints times with printf's "%.6g" and sacct gives them back as printed: RecordedTimeS
// must equal that round trip. The reference here is printf/strtod itself; the values cover the
// integer shortcut (six digits and fewer, larger values rounded to six significant digits, exact
// ties that printf rounds to even) and non-integers. Times beyond kMaxRecordedTimeS (what the
// record's reader accepts) are recorded as that bound.
TEST(RecordedTimeTest, EqualsThePrintfRoundTrip) {
  const auto printed = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", std::round(std::min(v, kMaxRecordedTimeS)));
    return std::strtod(buf, nullptr);
  };
  std::vector<double> values = {1,
                                59,
                                999999,
                                1000000,
                                1000005,
                                1000015,
                                1234565,
                                1234575,
                                9999994,
                                9999995,
                                12345650000,
                                123456500000001,
                                9007199254740991.0,
                                1e17,
                                3.6e6 + 0.4,
                                86399.5,
                                0.4};
  uint64_t x = 88172645463325252u;  // xorshift64: integers of every magnitude
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    values.push_back(static_cast<double>(x >> (x % 60)));
  }
  for (double v : values) EXPECT_EQ(RecordedTimeS(v), printed(v)) << std::setprecision(17) << v;
}

}  // namespace
}  // namespace fmte
