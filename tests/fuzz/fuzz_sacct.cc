// sacct --parsable2 / --parsable exports as sysadmins hand them to fmte-retrain: with or without a
// header (the usual --format is preset for headerless rows), steps, arrays, pasted transcripts,
// AdminComment records; then the training sets fmte-retrain builds from the jobs.
#include "fmte/learn/sacct.h"
#include "fmte/learn/training_set.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  learn::SacctReadOptions options;
  options.fields = learn::SplitFieldList(
      "JobID,JobIDRaw,JobName,Partition,State,ExitCode,Elapsed,Timelimit,Submit,Start,End,"
      "AllocTRES,TRESUsageInMax,AdminComment");
  options.max_malformed_lines_kept = 16;
  learn::SacctReader reader(options);
  reader.BeginSource("fuzz.txt");
  std::string_view rest = fuzz::AsText(data, size);
  while (!rest.empty()) {
    auto [line, tail] = fuzz::SplitAt(rest, '\n');
    rest = tail;
    (void)reader.Line(line);
  }
  const int64_t count = reader.job_count();
  const std::vector<learn::JobRecord> jobs = reader.TakeJobs();
  fuzz::Require(static_cast<int64_t>(jobs.size()) == count, "TakeJobs returns job_count jobs");
  const learn::JobsSummary summary = learn::Summarise(jobs);
  fuzz::Require(summary.jobs == count, "the summary counts every job");
  (void)learn::BuildSacctTrainingSets(jobs);
  return 0;
}
