// What the SPANK plugin does in sbatch and slurmctld then does with it: the batch script's #SBATCH
// lines, the files its launch line names (read with the real JSON/YAML/TOML parsers), the client's
// reading forwarded as FMTE_READ, and the controller's decision on it.
// Input: the script, then files, each after a '\x1c': "path\ncontent" (path as the script names
// it).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fmte/script_files.h"
#include "fmte/submission.h"
#include "fuzz_common.h"

namespace {

class MemoryFiles final : public fmte::FileSource {
 public:
  std::map<std::string, std::string, std::less<>> files;
  fmte::Result<std::string> ReadText(std::string_view path) const override {
    auto it = files.find(path);
    if (it == files.end()) return fmte::Status::NotFound(std::string(path) + ": no such file");
    return it->second;
  }
  fmte::Result<nlohmann::json> ParseConfig(std::string_view path, std::string_view text,
                                           std::string_view syntax) const override {
    return fmte::ParseConfigText(path, text, syntax);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  const fuzz::World& world = fuzz::TheWorld();
  auto [script, rest] = fuzz::SplitAt(fuzz::AsText(data, size), '\x1c');
  MemoryFiles files;
  while (!rest.empty()) {
    auto [file, tail] = fuzz::SplitAt(rest, '\x1c');
    rest = tail;
    auto [path, content] = fuzz::SplitAt(file, '\n');
    files.files.emplace(std::string(path), std::string(content));
  }

  SbatchOptions options;
  ReadSbatchLines(script, &options);
  DropInvalidSbatchValues(&options);
  Result<SlurmFacts> facts = FactsFrom(options);
  const SlurmFacts f = facts.ok() ? *facts : SlurmFacts{};

  ScriptContext context;
  context.args = {"arg1", "8"};
  context.env = SubmissionEnv(options, f, "/submit", script);
  context.files = &files;
  context.launchers = &world.launchers;
  const JobRequest client = ParseJobRequest(script, {}, f, context);
  const std::string read = EncodeClientReading(client, client.arch_json);
  fuzz::Require(read.size() <= kMaxReadJsonBytes, "FMTE_READ stays within its bound");

  std::vector<std::pair<std::string, std::string>> spank;
  if (!read.empty()) spank.emplace_back(std::string(kReadKey), read);
  const JobRequest request = ParseJobRequest(script, spank, f);
  const Decision decision = Decide(request, world.config, world.estimator);
  fuzz::RequireRecordRoundTrip(request, decision);
  return 0;
}
