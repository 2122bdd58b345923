// FM Training Estimator data.csv import (learn/fm_csv.h). Reference values: the repository's own
// test CSVs (tests/data/fm/PROVENANCE.md) and the format definitions of its
// fm_training_estimator/data/manager.py; the training check learns a known rule written beside it.
#include "fmte/learn/fm_csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "fmte/learn/sacct_train.h"
#include "fmte/memory.h"

namespace fmte::learn {
namespace {

const std::string kDir = std::string(FMTE_SOURCE_DIR) + "/tests/data/fm/";

const Catalogs& TestCatalogs() {
  static const Catalogs* c = [] {
    Result<Catalogs> r = LoadCatalogs(std::string(FMTE_SOURCE_DIR) + "/etc");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return new Catalogs(std::move(r).value());
  }();
  return *c;
}

TEST(FmCsv, EachFormatParsesWithItsRowsAndFields) {
  struct Case {
    const char* file;
    FmCsvFormat format;
    size_t rows;
    std::vector<int64_t> malformed_lines;
  };
  const Case cases[] = {{"data2.csv", FmCsvFormat::kV1, 7, {}},
                        {"data3.csv", FmCsvFormat::kV2, 2, {}},
                        {"data_v3.csv", FmCsvFormat::kV3, 4, {5, 6}}};
  for (const Case& c : cases) {
    Result<FmCsvData> d = ReadFmCsvFile(kDir + c.file);
    ASSERT_TRUE(d.ok()) << c.file << ": " << d.status().ToString();
    EXPECT_EQ(d->format, c.format) << c.file;
    EXPECT_EQ(d->rows.size(), c.rows) << c.file;
    std::vector<int64_t> lines;
    for (const FmCsvLineError& e : d->malformed) lines.push_back(e.line);
    EXPECT_EQ(lines, c.malformed_lines) << c.file;
  }
  // data2.csv line 2: ibm-granite/granite-7b-base,2,4,512,500,20,10
  const FmCsvRow v1 = ReadFmCsvFile(kDir + "data2.csv")->rows[0];
  EXPECT_EQ(v1.line, 2);
  EXPECT_EQ(v1.model_name, "ibm-granite/granite-7b-base");
  EXPECT_EQ(v1.number_gpus, 2);
  EXPECT_EQ(v1.batch_size, 4);
  EXPECT_EQ(v1.seq_len, 512);
  EXPECT_DOUBLE_EQ(v1.tokens_per_second, 500);
  EXPECT_DOUBLE_EQ(v1.memory_bytes, 20);
  EXPECT_DOUBLE_EQ(v1.memory_act_bytes, 10);
  // data3.csv line 2: LlamaForCausalLM,2560,10240,32,32,32,4,16,1024,500,20,10
  const FmCsvRow v2 = ReadFmCsvFile(kDir + "data3.csv")->rows[0];
  EXPECT_EQ(v2.model_arch, "LlamaForCausalLM");
  EXPECT_EQ(v2.hidden_size, 2560);
  EXPECT_EQ(v2.intermediate_size, 10240);
  EXPECT_EQ(v2.num_heads, 32);
  EXPECT_EQ(v2.num_layers, 32);
  EXPECT_EQ(v2.num_kv_heads, 32);
  EXPECT_EQ(v2.number_gpus, 4);
  EXPECT_EQ(v2.batch_size, 16);
  const FmCsvRow v3 = ReadFmCsvFile(kDir + "data_v3.csv")->rows[1];
  EXPECT_EQ(v3.method, "lora");
  EXPECT_EQ(v3.gpu_model, "H100");
  EXPECT_EQ(v3.seq_len, 2048);
}

TEST(FmCsv, MalformedLinesSayWhyAndStrictStops) {
  Result<FmCsvData> d = ReadFmCsvFile(kDir + "data_v3.csv");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->malformed.size(), 2u);
  EXPECT_NE(d->malformed[0].reason.find("batch_size"), std::string::npos) << d->malformed[0].reason;
  EXPECT_NE(d->malformed[1].reason.find("expected 14 fields, got 13"), std::string::npos);
  FmCsvReadOptions strict;
  strict.strict = true;
  Result<FmCsvData> s = ReadFmCsvFile(kDir + "data_v3.csv", strict);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("data_v3.csv:5:"), std::string::npos) << s.status().message();
}

TEST(FmCsv, UnknownHeaderNamesTheExpectedColumns) {
  // data1.csv is the repository's lookup test file; manager.py's lookup_format_version gives
  // "undefined" for its header (no memory columns, a gpu_model column).
  Result<FmCsvData> d = ReadFmCsvFile(kDir + "data1.csv");
  ASSERT_FALSE(d.ok());
  const std::string m = d.status().message();
  for (const char* needle :
       {"data1.csv:1",
        "v1 (model_name,number_gpus,batch_size,seq_len,tokens_per_second,memory,memory_act)",
        "v3 (model_arch,", "method,gpu_model", "closest is v1", "missing memory,memory_act",
        "unexpected gpu_model"}) {
    EXPECT_NE(m.find(needle), std::string::npos) << needle << " in " << m;
  }
  EXPECT_FALSE(ParseFmCsv("", "empty.csv").ok());
  // Reordered columns, CRLF and a BOM are still v1.
  Result<FmCsvData> r = ParseFmCsv(
      "\xEF\xBB\xBFnumber_gpus,model_name,batch_size,seq_len,memory,memory_act,tokens_per_"
      "second\r\n"
      "2,meta-llama/Llama-2-7b-hf,4,512,3e10,1e10,900\r\n",
      "r.csv");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->format, FmCsvFormat::kV1);
  EXPECT_EQ(r->rows.at(0).model_name, "meta-llama/Llama-2-7b-hf");
  EXPECT_DOUBLE_EQ(r->rows[0].memory_bytes, 3e10);
}

TEST(FmCsv, UnknownModelNameSaysWhichFieldAndSuggests) {
  Result<FmCsvData> d = ReadFmCsvFile(kDir + "data2.csv");
  ASSERT_TRUE(d.ok());
  FmJobOptions o;
  o.gpu = "A100-SXM4-80GB";
  Result<FmJob> j = MapFmRow(d->rows[0], d->format, TestCatalogs(), o);
  ASSERT_FALSE(j.ok());
  const std::string m = j.status().message();
  EXPECT_NE(m.find("model_name: 'ibm-granite/granite-7b-base'"), std::string::npos) << m;
  // The same architecture is in the catalog under InstructLab's name.
  EXPECT_NE(m.find("instructlab/granite-7b-lab"), std::string::npos) << m;
  // v1 rows carry no GPU.
  FmCsvRow known = d->rows[0];
  known.model_name = "meta-llama/Llama-2-7b-hf";
  Result<FmJob> no_gpu = MapFmRow(known, d->format, TestCatalogs(), {});
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_NE(no_gpu.status().message().find("--gpu"), std::string::npos);
}

TEST(FmCsv, RowsMapToTheJobsTheFmEstimatorAssumes) {
  Result<FmCsvData> d = ReadFmCsvFile(kDir + "data_v3.csv");
  ASSERT_TRUE(d.ok());
  std::vector<FmJob> jobs;
  for (const FmCsvRow& r : d->rows) {
    Result<FmJob> j = MapFmRow(r, d->format, TestCatalogs(), {});
    ASSERT_TRUE(j.ok()) << r.line << ": " << j.status().ToString();
    jobs.push_back(*j);
  }
  // Line 2: Llama-2-7B shape, full, 4x A100: FSDP full_shard (memory/hybrid/hybrid.py), HF Trainer.
  EXPECT_EQ(jobs[0].arch.vocab_size, 32000);
  EXPECT_NE(jobs[0].arch_source.find("catalog"), std::string::npos) << jobs[0].arch_source;
  EXPECT_EQ(jobs[0].job.sharding, Sharding::kFsdpFull);
  EXPECT_EQ(jobs[0].job.method, Method::kFull);
  EXPECT_EQ(jobs[0].job.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(jobs[0].job.gpus, 4);
  EXPECT_EQ(jobs[0].job.micro_batch, 4);
  EXPECT_EQ(jobs[0].job.precision, Precision::kFp32);  // FMArguments.torch_dtype default
  // time = total_tokens / tps (ui/core.py): a step of 4 GPUs x 4 x 1024 tokens at 9200 tokens/s.
  EXPECT_NEAR(jobs[0].step_time_s, 4.0 * 4 * 1024 / 9200, 1e-12);
  EXPECT_NEAR(jobs[0].tokens_per_s_per_gpu, 2300, 1e-9);
  // Line 3: LoRA on one H100: no sharding.
  EXPECT_EQ(jobs[1].job.method, Method::kLora);
  EXPECT_EQ(jobs[1].job.sharding, Sharding::kNone);
  EXPECT_EQ(jobs[1].job.gpu, "H100-SXM5-80GB");
  // Line 4: TinyLlama's shape (GQA 32/4) is the catalog model.
  EXPECT_NE(jobs[2].arch_source.find("TinyLlama"), std::string::npos) << jobs[2].arch_source;
  // Line 7: QLoRA quantises to NF4.
  EXPECT_EQ(jobs[3].job.method, Method::kQlora);
  EXPECT_EQ(jobs[3].job.quant, Quant::kNf4);
  // A shape no catalog model has is built from the columns with transformers' LlamaConfig vocab.
  Result<FmCsvData> v2 = ReadFmCsvFile(kDir + "data3.csv");
  FmJobOptions o;
  o.gpu = "A100";
  Result<FmJob> j = MapFmRow(v2->rows[0], v2->format, TestCatalogs(), o);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_NE(j->arch_source.find("columns (vocab 32000"), std::string::npos) << j->arch_source;
  EXPECT_EQ(j->arch.hidden_size, 2560);
  // Unsupported values name their column.
  FmCsvRow bad = d->rows[0];
  bad.method = "speculators";
  EXPECT_NE(MapFmRow(bad, d->format, TestCatalogs(), {}).status().message().find("method:"),
            std::string::npos);
  bad = d->rows[0];
  bad.model_arch = "MambaForCausalLM";
  EXPECT_NE(MapFmRow(bad, d->format, TestCatalogs(), {}).status().message().find("model_arch:"),
            std::string::npos);
}

// A site whose jobs take 1.25x the core's memory and 1.3x the analytic step time (the rule this
// test writes into the CSV): the corrections learn it on held-out groups.
TEST(FmCsv, TrainingRecoversAKnownRuleOnHeldOutGroups) {
  const Catalogs& cat = TestCatalogs();
  Result<TimeModel> base = TimeModel::LoadDir(std::string(FMTE_SOURCE_DIR) + "/regressors/vtrain");
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  const struct {
    int64_t h, i, heads, layers, kv;
  } shapes[] = {{4096, 11008, 32, 32, 32},
                {2048, 5632, 32, 22, 4},
                {4096, 14336, 32, 32, 8},
                {2048, 8192, 32, 16, 8}};
  const char* archs[] = {"LlamaForCausalLM", "LlamaForCausalLM", "MistralForCausalLM",
                         "LlamaForCausalLM"};
  std::ostringstream csv;
  csv << "model_arch,model_hidden_size,model_intermediate_size,model_num_attn_heads,model_num_"
         "hidden_layers,"
         "model_num_key_value_heads,method,gpu_model,number_gpus,batch_size,seq_len,tokens_per_"
         "second,memory,"
         "memory_act\n";
  for (int s = 0; s < 4; ++s) {
    for (int64_t gpus : {2, 4, 8}) {
      for (int64_t batch : {1, 2}) {
        for (int64_t seq : {512, 1024}) {
          FmCsvRow r;
          r.model_arch = archs[s];
          r.hidden_size = shapes[s].h, r.intermediate_size = shapes[s].i,
          r.num_heads = shapes[s].heads;
          r.num_layers = shapes[s].layers, r.num_kv_heads = shapes[s].kv;
          r.method = "full", r.gpu_model = "A100", r.number_gpus = gpus, r.batch_size = batch,
          r.seq_len = seq;
          r.tokens_per_second = 1;
          Result<FmJob> j = MapFmRow(r, FmCsvFormat::kV3, cat, {});
          ASSERT_TRUE(j.ok()) << j.status().ToString();
          Result<MemoryEstimate> mem = EstimateMemory(j->arch, j->job, *j->gpu);
          ASSERT_TRUE(mem.ok()) << mem.status().ToString();
          Result<TimeEstimate> t = EstimateStepTimeAnalytic(
              j->arch, j->job, *j->gpu, FmPodCluster(j->job), base->For(*j->gpu));
          ASSERT_TRUE(t.ok()) << t.status().ToString();
          const double tps = static_cast<double>(gpus * batch * seq) / (1.3 * t->step_time_s);
          csv << r.model_arch << "," << r.hidden_size << "," << r.intermediate_size << ","
              << r.num_heads << "," << r.num_layers << "," << r.num_kv_heads << ",full,A100,"
              << gpus << "," << batch << "," << seq << "," << tps << ","
              << 1.25 * static_cast<double>(mem->per_gpu_bytes) << ",0\n";
        }
      }
    }
  }
  Result<FmCsvData> d = ParseFmCsv(csv.str(), "rule.csv");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->rows.size(), 48u);
  FmSamples s = BuildFmSamples({*d}, cat, {});
  EXPECT_EQ(s.mapped, 48);
  ASSERT_EQ(s.memory.memory.x.rows, 48);

  Result<SacctTrainOutcome> mem = TrainSacct(s.memory, {});
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  const TargetOutcome& m = mem->targets[1];
  ASSERT_TRUE(m.trained) << m.skipped_reason;
  EXPECT_NEAR(m.comparison.plugin, 0.2, 1e-6);  // |1 - 1.25| / 1.25
  EXPECT_LT(m.cv.mean_abs_rel_error, 0.02);
  EXPECT_FALSE(mem->targets[0].trained);  // no wall times in FM rows

  Result<StepCorrectionOutcome> st = TrainStepTimeCorrection(s.steps, *base, &*base, {});
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_TRUE(st->trained) << st->skipped_reason;
  EXPECT_EQ(st->groups, 12);          // 4 shapes x 3 GPU counts
  EXPECT_GT(st->analytic_mape, 0.2);  // 1 - 1/1.3 = 0.23
  EXPECT_LT(st->new_mape, 0.05);
  EXPECT_GE(st->installed_mape, 0);
  EXPECT_EQ(st->heldout_log_residuals.size(), 48u);
}

}  // namespace
}  // namespace fmte::learn
