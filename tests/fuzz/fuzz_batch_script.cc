// What slurmctld does with every submission: the batch script and the SPANK plugin's environment
// -> ParseJobRequest -> Decide -> the accounting record.
// Input: the script, then optionally '\x1e' and lines of the job's SPANK environment as
// spank_job_env holds them ("FMTE_MODEL=...", "FMTE_READ={...}", "FMTE_ARCH={...}"); lines
// "slurm.<fact>=value" set what Slurm knows (partition, time, nodes, ntasks, gres, gpus,
// exclusive).
#include <string>
#include <vector>

#include "fuzz_common.h"

namespace {

void SetFact(std::string_view name, std::string_view value, fmte::SlurmFacts* f) {
  const std::string v(value);
  auto number = [&] { return v.size() < 10 ? std::atoll(v.c_str()) : 0; };
  if (name == "partition") f->partition = v;
  if (name == "time") f->time_limit_min = number();
  if (name == "nodes") f->min_nodes = number();
  if (name == "ntasks") f->num_tasks = number();
  if (name == "ntasks_per_node") f->ntasks_per_node = number();
  if (name == "exclusive") f->exclusive = v == "1";
  if (name == "tres_per_node") f->tres_per_node = v;
  if (name == "tres_per_job") f->tres_per_job = v;
  if (name == "tres_per_task") f->tres_per_task = v;
  if (name == "tres_per_socket") f->tres_per_socket = v;
  if (name == "job_name") f->job_name = v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  const fuzz::World& world = fuzz::TheWorld();
  const auto [script, env_text] = fuzz::SplitAt(fuzz::AsText(data, size), '\x1e');

  SlurmFacts facts;
  facts.tres_per_node = "gres:gpu:4";
  std::vector<std::string> env;
  std::string_view rest = env_text;
  while (!rest.empty()) {
    auto [line, tail] = fuzz::SplitAt(rest, '\n');
    rest = tail;
    if (line.starts_with("slurm.")) {
      auto [name, value] = fuzz::SplitAt(line.substr(6), '=');
      SetFact(name, value, &facts);
    } else {
      env.emplace_back(line);
    }
  }
  std::vector<const char*> entries;
  for (const std::string& e : env) entries.push_back(e.c_str());
  entries.push_back(nullptr);  // spank_job_env may hold null entries; they are skipped

  const JobRequest request = ParseJobRequest(script, SpankValuesFromEnv(entries), facts);
  const Decision decision = Decide(request, world.config, world.estimator);
  fuzz::RequireRecordRoundTrip(request, decision);
  return 0;
}
