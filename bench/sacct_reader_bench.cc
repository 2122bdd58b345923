// Speed of the sacct reader (target: 1 million rows in under 5 s on this machine).
// Rows are generated in memory in the shape of a real `sacct --parsable2` export of a GPU cluster
// (one allocation row with the plugin's fmte: record, then .batch, .extern and .0 steps with usage
// TRES), read once through SacctReader::Line (parsing only) and once from a file (with I/O).
// Reports rows_per_s; "1M rows" time = 1e6 / rows_per_s.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fmte/learn/sacct.h"

namespace {

constexpr int64_t kRows = 1000000;
constexpr const char* kHeader =
    "JobID|JobIDRaw|JobName|User|Account|Partition|State|ExitCode|Elapsed|Timelimit|Submit|Start|"
    "End|"
    "AllocTRES|ReqTRES|TRESUsageInMax|MaxRSS|NNodes|AllocCPUS|AdminComment";

std::vector<std::string> MakeRows(int64_t rows) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(rows) + 1);
  out.emplace_back(kHeader);
  const char* states[] = {"COMPLETED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED by 1001", "FAILED"};
  for (int64_t job = 1000; static_cast<int64_t>(out.size()) <= rows; ++job) {
    const std::string id = std::to_string(job);
    const std::string state = states[job % 5];
    const int gpus = 1 << (job % 4);
    const std::string tres =
        "billing=" + std::to_string(8 * gpus) + ",cpu=" + std::to_string(8 * gpus) +
        ",gres/gpu:a100=" + std::to_string(gpus) + ",gres/gpu=" + std::to_string(gpus) +
        ",mem=" + std::to_string(64 * gpus) + "G,node=1";
    const std::string record =
        "fmte:v1;model=meta-llama/Llama-3.1-8B;method=lora;gpus=" + std::to_string(gpus) +
        ";gpn=4;gpu=A100-SXM4-80GB;mb=2;seq=4096;ga=8;prec=amp-bf16;shard=fsdp-full;ac=full;"
        "pred_mem=61203283968;cap=85899345920;pred_time_s=5400;limit_s=8100;decision=accept";
    out.push_back(
        id + "|" + id + "|train-" + id + "|user" + std::to_string(job % 97) + "|acct|gpu|" + state +
        "|0:0|01:23:45|02:00:00|2024-03-01T10:00:00|2024-03-01T10:05:00|2024-03-01T11:28:45|" +
        tres + "|" + tres + "|||1|" + std::to_string(8 * gpus) + "|" + record);
    const std::string usage = "cpu=01:10:00,energy=0,fs/disk=350130624578,gres/gpumem=" +
                              std::to_string(30000 + job % 9000) +
                              "M,gres/gpuutil=97,mem=10372780K,pages=3465,vmem=10194376K";
    for (const char* step : {".batch", ".extern", ".0"}) {
      out.push_back(id + step + "|" + id + step + "|" + (step[1] == '0' ? "python" : step + 1) +
                    "|||gpu|" + (step[1] == 'e' ? "COMPLETED" : state) +
                    "|0:0|01:23:40||2024-03-01T10:05:00|2024-03-01T10:05:00|2024-03-01T11:28:40|" +
                    tres + "||" + usage + "|10372780K|1|" + std::to_string(8 * gpus) + "|");
    }
  }
  out.resize(static_cast<size_t>(rows) + 1);
  return out;
}

const std::vector<std::string>& Rows() {
  static const std::vector<std::string> rows = MakeRows(kRows);
  return rows;
}

void BM_SacctReaderParse(benchmark::State& state) {
  const auto& rows = Rows();
  int64_t jobs = 0;
  for (auto _ : state) {
    fmte::learn::SacctReader reader;
    reader.BeginSource("memory");
    for (const auto& line : rows) {
      if (!reader.Line(line).ok()) state.SkipWithError("reader error");
    }
    jobs = reader.job_count();
    if (reader.stats().malformed != 0) state.SkipWithError("malformed rows in generated data");
    benchmark::DoNotOptimize(reader.TakeJobs());
  }
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["jobs"] = static_cast<double>(jobs);
}
BENCHMARK(BM_SacctReaderParse)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_SacctReaderFile(benchmark::State& state) {
  char path[] = "/tmp/fmte_sacct_benchXXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    state.SkipWithError("mkstemp failed");
    return;
  }
  {
    std::ofstream out(path);
    for (const auto& line : Rows()) out << line << '\n';
  }
  for (auto _ : state) {
    fmte::learn::SacctReader reader;
    if (!reader.ReadFile(path).ok()) state.SkipWithError("read error");
    benchmark::DoNotOptimize(reader.TakeJobs());
  }
  std::remove(path);
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SacctReaderFile)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
