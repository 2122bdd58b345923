// The streaming sacct reader on real exports (tests/data/sacct, see its SOURCES.txt). Expected
// counts were read off the files by hand; JS1 peaks by `base64 -d | gunzip` of the blobs.
#include "fmte/learn/sacct.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace fmte::learn {
namespace {

const std::string kDir = std::string(FMTE_SOURCE_DIR) + "/tests/data/sacct/";
// The --format of the XDMoD exports (their SOURCES: classes/OpenXdmod/Shredder/Slurm.php).
const std::vector<std::string> kXdmodFields = SplitFieldList(
    "jobid,jobidraw,cluster,partition,qos,account,group,gid,user,uid,submit,eligible,start,end,"
    "elapsed,exitcode,state,nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,"
    "jobname");

struct Read {
  ReadStats stats;
  std::vector<JobRecord> jobs;
  std::map<std::string, JobRecord> by_id;
};

Read ReadPath(const std::string& path, SacctReadOptions options = {}) {
  SacctReader reader(std::move(options));
  const Status s = reader.ReadFile(path);
  EXPECT_TRUE(s.ok()) << s.message();
  Read r{reader.stats(), reader.TakeJobs(), {}};
  for (const auto& j : r.jobs) r.by_id[j.job_id] = j;
  return r;
}

Read ReadText(const std::string& text, SacctReadOptions options = {}, Status* status = nullptr) {
  SacctReader reader(std::move(options));
  std::istringstream in(text);
  const Status s = reader.ReadStream(in, "text");
  if (status) {
    *status = s;
  } else {
    EXPECT_TRUE(s.ok()) << s.message();
  }
  Read r{reader.stats(), reader.TakeJobs(), {}};
  for (const auto& j : r.jobs) r.by_id[j.job_id] = j;
  return r;
}

TEST(SacctReaderTest, EveryRealSampleParsesWithoutError) {
  struct Case {
    const char* file;
    bool xdmod_fields;
    int64_t rows, jobs, steps;
  };
  const Case cases[] = {
      {"accounting-logs.log", true, 4, 4, 0},
      {"accounting-logs-with-job-arrays.log", true, 6, 6, 0},
      {"reportseff-princeton-fixture-rows.psv", false, 24, 9, 20},
      // 2 rows without JobID (TRESUsageInAve/Tot of step 1277.0) + 2 x (18194943 and 2 steps).
      {"gpu-tresusage-examples.txt", false, 8, 1, 4},
      // Our lab cluster with slurmdbd: 12 jobs, each an allocation row and a .batch row.
      {"fmte-lab-slurmdbd.psv", false, 24, 12, 12},
  };
  for (const Case& c : cases) {
    SacctReadOptions options;
    if (c.xdmod_fields) options.fields = kXdmodFields;
    options.strict = true;
    const Read r = ReadPath(kDir + c.file, options);
    EXPECT_EQ(r.stats.malformed, 0) << c.file;
    EXPECT_EQ(r.stats.rows, c.rows) << c.file;
    EXPECT_EQ(static_cast<int64_t>(r.jobs.size()), c.jobs) << c.file;
    EXPECT_EQ(r.stats.step_rows, c.steps) << c.file;
    EXPECT_EQ(r.stats.record_errors + r.stats.jobstats_errors, 0) << c.file;
  }
}

TEST(SacctReaderTest, XdmodAllocations) {
  SacctReadOptions options;
  options.fields = kXdmodFields;
  const Read r = ReadPath(kDir + "accounting-logs.log", options);
  const JobsSummary s = Summarise(r.jobs);
  EXPECT_EQ(s.states.at("TIMEOUT"), 1);
  EXPECT_EQ(s.states.at("CANCELLED"), 1);
  EXPECT_EQ(s.states.at("COMPLETED"), 2);
  const JobRecord& timeout = r.by_id.at("4103947");
  EXPECT_EQ(timeout.elapsed_s, 3 * 86400);
  EXPECT_EQ(timeout.time_limit_s, 3 * 86400);
  EXPECT_TRUE(TimeCensored(timeout));
  EXPECT_EQ(timeout.nodes, 32);
  EXPECT_EQ(timeout.cpus, 256);
  EXPECT_EQ(timeout.end_time, 1435719350);  // 2015-07-01T02:55:50
  EXPECT_EQ(r.by_id.at("4107166").cancelled_by_uid, 102216);
  EXPECT_EQ(r.by_id.at("4107219").time_limit_s, 14 * 3600 + 20 * 60);
  EXPECT_EQ(r.by_id.at("5692623").gpus, 2);  // ReqTRES gres/gpu=2, AllocTRES empty
}

TEST(SacctReaderTest, Arrays) {
  SacctReadOptions options;
  options.fields = kXdmodFields;
  const Read r = ReadPath(kDir + "accounting-logs-with-job-arrays.log", options);
  ASSERT_EQ(r.jobs.size(), 6u);
  for (const auto& j : r.jobs) {
    EXPECT_EQ(j.array_job, "4103947") << j.job_id;
    EXPECT_EQ(j.job_id_raw, "4103947") << j.job_id;
    EXPECT_EQ(j.state, JobState::kTimeout);
  }
  EXPECT_TRUE(r.by_id.count("4103947_100"));
  EXPECT_TRUE(r.by_id.count("4103947_[9-11,13,16-20]"));
  EXPECT_EQ(Summarise(r.jobs).arrays, 6);
}

TEST(SacctReaderTest, PrincetonStepsAndJobstats) {
  const Read r = ReadPath(kDir + "reportseff-princeton-fixture-rows.psv");
  EXPECT_EQ(r.stats.short_rows, 20);  // rows without the NTasks column
  const JobsSummary s = Summarise(r.jobs);
  EXPECT_EQ(s.states.at("COMPLETED"), 5);
  EXPECT_EQ(s.states.at("CANCELLED"), 2);
  EXPECT_EQ(s.states.at("FAILED"), 1);
  EXPECT_EQ(s.states.at("TIMEOUT"), 1);
  // Array task without its allocation row: state and elapsed from the steps, keyed by JobID.
  const JobRecord& task = r.by_id.at("39889258_1426");
  EXPECT_FALSE(task.has_allocation_row);
  EXPECT_EQ(task.array_job, "39889258");
  EXPECT_EQ(task.steps, 3);
  EXPECT_EQ(task.elapsed_s, 2 * 3600 + 14 * 60 + 11);
  EXPECT_EQ(task.max_rss_bytes, 3501608LL * 1024);
  EXPECT_EQ(task.state, JobState::kCompleted);
  // JS1 jobstats records: per-GPU peaks.
  const JobRecord& one = r.by_id.at("45352405");
  EXPECT_EQ(one.gpu_peak_bytes, 875364352);
  EXPECT_EQ(one.gpu_peak_source, GpuMemSource::kJobstats);
  EXPECT_EQ(one.cancelled_by_uid, 349394);
  const JobRecord& two = r.by_id.at("46044267");
  EXPECT_EQ(two.gpu_peak_bytes, 18230214656LL);
  EXPECT_TRUE(TimeCensored(two));
  EXPECT_EQ(two.time_limit_s, 23 * 3600);
  EXPECT_EQ(two.elapsed_s, 23 * 3600 + 5 * 60 + 24);
  EXPECT_EQ(r.by_id.at("6196869").time_limit_s, kNoTimeLimit);
  EXPECT_EQ(r.by_id.at("131042").main_step_elapsed_s, 53);
  EXPECT_EQ(r.stats.jobstats_records, 2);
}

TEST(SacctReaderTest, TranscriptWithGpuMemTres) {
  const Read r = ReadPath(kDir + "gpu-tresusage-examples.txt");
  const JobRecord& j = r.by_id.at("18194943");
  EXPECT_EQ(j.gpumem_tres_bytes, 40777023488LL);  // 38888M
  EXPECT_EQ(j.gpu_peak_bytes, 40777023488LL);     // no GPU count in the export: taken as one GPU
  EXPECT_EQ(j.gpu_peak_source, GpuMemSource::kTresUsage);
  EXPECT_EQ(r.stats.header_lines, 2);
}

TEST(SacctReaderTest, GpuMemTresSumIsSplitOverTheTaskGpus) {
  // One task per node on 2 nodes x 4 GPUs; Slurm 24.05+ sums gpumem over the task's 4 GPUs.
  const std::string text =
      "JobID|AllocTRES|NTasks|TRESUsageInMax|State\n"
      "7|cpu=8,gres/gpu=8,node=2||COMPLETED\n"
      "7.0|cpu=8,gres/gpu=8,node=2|2|cpu=00:01:00,gres/gpumem=160G,mem=1G|COMPLETED\n";
  EXPECT_EQ(ReadText(text).by_id.at("7").gpu_peak_bytes, 40LL << 30);
  SacctReadOptions per_gpu;
  per_gpu.gpumem_mode = GpuMemTresMode::kPerGpu;
  EXPECT_EQ(ReadText(text, per_gpu).by_id.at("7").gpu_peak_bytes, 160LL << 30);
}

TEST(SacctReaderTest, MalformedLinesAreCountedWithTheirNumbers) {
  const std::string text =
      "JobID|JobIDRaw|State|Elapsed|Timelimit|AllocTRES\n"           // 1
      "131042|131042|COMPLETED|00:00:53|00:01:00|cpu=8,node=1\n"     // 2 ok
      "131043|131043|COMPLETED|00:00:53|00:01:00|cpu=8|extra\n"      // 3 too many fields
      "abc|abc|COMPLETED|00:00:53|00:01:00|cpu=8\n"                  // 4 bad JobID
      "131044|131044|COMPLETED|12:xx|00:01:00|cpu=8\n"               // 5 bad Elapsed
      "\n"                                                           // 6 blank
      "131045|131045|TIMEOUT|00:01:00|00:01:00|cpu=8,gres/gpu=x\n"   // 7 bad TRES
      "131046|131046|TIMEOUT|00:01:00|00:01:00|cpu=8,gres/gpu=1\n";  // 8 ok
  const Read r = ReadText(text);
  EXPECT_EQ(r.stats.malformed, 4);
  std::vector<int64_t> lines;
  for (const auto& m : r.stats.malformed_lines) lines.push_back(m.line);
  EXPECT_EQ(lines, (std::vector<int64_t>{3, 4, 5, 7}));
  EXPECT_NE(r.stats.malformed_lines[2].reason.find("Elapsed"), std::string::npos);
  EXPECT_EQ(r.jobs.size(), 2u);  // malformed rows leave no job behind

  SacctReadOptions strict;
  strict.strict = true;
  Status s;
  ReadText(text, strict, &s);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("text:3:"), std::string::npos) << s.message();
}

TEST(SacctReaderTest, NoHeaderNoFieldsSaysWhatToPass) {
  Status s;
  ReadText("4107219|4107219|COMPLETED\n", {}, &s);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("--fields"), std::string::npos) << s.message();
}

TEST(SacctReaderTest, FieldOrderAndParsableTrailingBarDoNotMatter) {
  const std::string a =
      "JobID|State|Elapsed|AllocTRES\n"
      "5|COMPLETED|01:00:00|cpu=2,gres/gpu:h100=4,node=1\n"
      "5.batch|COMPLETED|01:00:00|cpu=2,gres/gpu:h100=4,node=1\n";
  const std::string b =  // --parsable: trailing '|', columns reordered
      "AllocTRES|Elapsed|JobID|State|\n"
      "cpu=2,gres/gpu:h100=4,node=1|01:00:00|5|COMPLETED|\n"
      "cpu=2,gres/gpu:h100=4,node=1|01:00:00|5.batch|COMPLETED|\n";
  for (const std::string& text : {a, b}) {
    const Read r = ReadText(text);
    ASSERT_EQ(r.jobs.size(), 1u);
    EXPECT_EQ(r.stats.malformed, 0);
    EXPECT_EQ(r.jobs[0].gpus, 4);
    EXPECT_EQ(r.jobs[0].gpu_type, "h100");
    EXPECT_EQ(r.jobs[0].elapsed_s, 3600);
    EXPECT_EQ(r.jobs[0].steps, 1);
  }
}

TEST(SacctReaderTest, PluginRecordInAdminComment) {
  // The record text is the example of estimator/record/include/fmte/record.h (format v1).
  const std::string rec =
      "fmte:v1;model=meta-llama/Llama-3.1-8B;method=lora;gpus=4;gpn=4;gpu=A100-SXM4-80GB;tp=1;pp=1;"
      "mb=2;seq=4096;ga=8;prec=amp-bf16;opt=adamw;shard=fsdp-full;ac=full;fw=hf;lora_r=16;"
      "pred_mem=61203283968;cap=85899345920;pred_time_s=5400;limit_s=8100;decision=accept";
  const std::string text =
      "JobID|State|Elapsed|AdminComment\n"
      "9|COMPLETED|01:00:00|" +
      rec +
      "\n"
      "9.0|COMPLETED|00:59:00|\n"
      "10|FAILED|00:00:01|fmte:v1;gpus=notanumber\n";
  const Read r = ReadText(text);
  const JobRecord& j = r.by_id.at("9");
  ASSERT_TRUE(j.record.has_value());
  EXPECT_EQ(j.record->job.gpus, 4);
  EXPECT_EQ(j.record->job.seq_len, 4096);
  EXPECT_EQ(j.record->pred_time_s, 5400);
  EXPECT_EQ(j.main_step_elapsed_s, 59 * 60);
  EXPECT_FALSE(r.by_id.at("10").record.has_value());
  EXPECT_EQ(r.stats.record_errors, 1);
  EXPECT_EQ(Summarise(r.jobs).fmte_records, 1);
}

TEST(SacctReaderTest, PluginRecordInCommentSurvivesAnEpilogThatReplacedAdminComment) {
  // Princeton jobstats' slurmctld epilog replaces AdminComment with its JS1 summary (here "Short",
  // its value for short jobs); the plugin's copy of the record in Comment, after the user's text,
  // is read instead. A record in AdminComment comes first.
  const std::string rec = "fmte:v1;method=lora;gpus=2;seq=2048;decision=accept";
  const std::string text =
      "JobID|State|Elapsed|AdminComment|Comment\n"
      "21|COMPLETED|00:10:00|JS1:Short|my run " +
      rec +
      "\n"
      "22|COMPLETED|00:10:00|fmte:v1;gpus=4|fmte:v1;gpus=8\n"
      "23|COMPLETED|00:10:00|js1:h4siaaaa|just a note\n";
  const Read r = ReadText(text);
  ASSERT_TRUE(r.by_id.at("21").record.has_value());
  EXPECT_EQ(r.by_id.at("21").record->job.gpus, 2);
  EXPECT_EQ(r.by_id.at("21").record->job.seq_len, 2048);
  ASSERT_TRUE(r.by_id.at("22").record.has_value());
  EXPECT_EQ(r.by_id.at("22").record->job.gpus, 4);
  EXPECT_FALSE(r.by_id.at("23").record.has_value());
  EXPECT_EQ(r.stats.jobstats_records, 1);  // JS1:Short
  EXPECT_EQ(r.stats.jobstats_errors, 1);   // lowercased by sacctmgr: cannot decode
}

TEST(SacctReaderTest, LabExportCarriesThePluginsRecords) {
  const Read r = ReadPath(kDir + "fmte-lab-slurmdbd.psv");
  const JobsSummary s = Summarise(r.jobs);
  EXPECT_EQ(s.fmte_records, 12);
  EXPECT_EQ(s.states.at("COMPLETED"), 12);
  EXPECT_EQ(r.stats.record_errors, 0);
  for (const JobRecord& j : r.jobs) {
    ASSERT_TRUE(j.record.has_value()) << j.job_id;
    EXPECT_EQ(j.record->job.model, "meta-llama/Llama-3.1-8B");
    EXPECT_EQ(j.gpus, 1);
    EXPECT_EQ(j.gpu_type, "a100");
    EXPECT_EQ(j.time_limit_s, 300);  // 00:05:00
    EXPECT_GT(j.record->pred_mem_bytes, 0);
    EXPECT_GE(j.elapsed_s, 1);
  }
}

TEST(SacctReaderTest, JobstatsSpecialValues) {
  EXPECT_EQ(*JobstatsGpuPeakBytes("JS1:Short"), kUnknownValue);
  EXPECT_EQ(*JobstatsGpuPeakBytes("JS1:None"), kUnknownValue);
  EXPECT_FALSE(JobstatsGpuPeakBytes("JS1:!!!!").ok());
  EXPECT_FALSE(JobstatsGpuPeakBytes("JS1:aGVsbG8=").ok());  // base64 of "hello": not gzip
}

}  // namespace
}  // namespace fmte::learn
