// SPANK plugin `fmte` (spank_fmte.so, listed in plugstack.conf): registers the --fmte-* options of
// sbatch/salloc/srun (also usable as `#SBATCH --fmte-...` lines), refuses bad values on the client
// before any RPC, and resolves --fmte-model on the client when the controller could not (a local
// config.json or model directory, or a Hugging Face id missing from the catalog): the architecture
// is forwarded as FMTE_ARCH (job_desc_adapter.h says how: from sbatch in the environment it sends,
// from salloc and srun in spank_job_env), so slurmctld never does file or network I/O per job.
// In sbatch it also reads the batch script as sbatch was given it (its options, arguments and
// the submitter's variables) with the files its launch line names (DeepSpeed JSON, accelerate and
// trainer YAML, torchtitan TOML: etc/launchers.json), and forwards what the launch line and files
// say as FMTE_READ (compact JSON), which job_submit uses in place of its own reading of the script.
// It then decides the job there too, with job_submit's own function and the same files, and
// forwards the decision as FMTE_DECISION: job_submit applies it when it was made with the files
// the controller has for the submission the controller reads (client_decision.h), so that the
// controller neither parses nor estimates the job.
//
// plugstack.conf arguments (all optional):
//   hub_url=URL       fetch config.json of ids missing from the catalog and the Hugging Face cache
//                     (https://huggingface.co; default: off)
//   cache_dir=DIR     fetched configs (default: $XDG_CACHE_HOME or ~/.cache, then /fmte/hub)
//   timeout_ms=N      whole hub transfer (default 5000)
//   catalog_dir=DIR   etc dir with models/ and launchers.json (default: CatalogDir= of fmte.conf,
//                     else the compiled-in etc dir)
//   read_files=no     do not read the batch script and its files in sbatch (default: yes)
//   decide=no         do not decide the job in sbatch (default: yes; the controller then decides)
// Thread-safety: SPANK calls plugins from one thread per process; the option values live in
// process-wide statics.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>  // program_invocation_short_name (GNU)
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <slurm/spank.h>  // not C++-safe on its own (docs/slurm.md §7.5)
}

#include "client_decision.h"
#include "decision_cache.h"
#include "fmte/config.h"
#include "fmte/model.h"
#include "fmte/model_files.h"
#include "fmte/request.h"
#include "fmte/script_files.h"
#include "fmte/submission.h"
#include "model_resolver.h"
#include "plugin_state.h"

#define FMTE_EXPORT __attribute__((visibility("default")))

extern "C" FMTE_EXPORT const char plugin_name[] = "fmte";
extern "C" FMTE_EXPORT const char plugin_type[] = "spank";
extern "C" FMTE_EXPORT const unsigned int plugin_version = SLURM_VERSION_NUMBER;
// The Slurm version built for, as text that fmte-advise doctor finds in the file (not exported).
extern "C" __attribute__((used)) const char fmte_build_info[] =
    "fmte-build-for-slurm=" FMTE_SLURM_VERSION ";";

namespace {

// spank_option has char* fields: keep the strings alive for the process.
struct OptionStorage {
  std::vector<std::string> names, arginfos, usages;
  std::vector<spank_option> options;
};

OptionStorage& Storage() {
  static OptionStorage storage;
  return storage;
}

std::string g_model;  // --fmte-model as given (client side)
fmte::slurm::ResolverOptions g_resolver;
std::string g_catalog_dir;  // etc dir (launchers.json); empty: the compiled-in one
bool g_read_files = true;   // plugstack.conf read_files=no turns the client-side reading off
bool g_decide = true;       // plugstack.conf decide=no: no decision in sbatch
// The --fmte-* values given (client side), as sbatch forwards them: the last value of each option.
std::vector<std::pair<std::string, std::string>> g_options;
// What the client's reading forwarded, for the decision made once FMTE_ARCH is known too.
struct Forwarded {
  std::string read;
  fmte::SlurmFacts facts;
};
Forwarded g_forwarded;

int OptionCallback(int val, const char* optarg, int remote) {
  try {
    if (remote) return 0;  // validated on the client already
    auto options = fmte::FmteOptions();
    if (val < 0 || static_cast<size_t>(val) >= options.size()) return 0;
    std::string_view key = options[static_cast<size_t>(val)].key;
    std::string value = optarg != nullptr ? optarg : "";
    fmte::Status st = fmte::ValidateOption(key, value);
    if (!st.ok()) {
      slurm_error("fmte: %s", st.message().c_str());
      return -1;
    }
    if (key == "model") {
      if (fmte::LooksLikeModelPath(value, ".")) {
        // A path must exist now: the controller cannot read the user's files.
        std::string path =
            value[0] == '~'
                ? std::string(std::getenv("HOME") ? std::getenv("HOME") : "") + value.substr(1)
                : value;
        if (access(path.c_str(), R_OK) != 0) {
          slurm_error(
              "fmte: --fmte-model: '%s': no such file or directory (expected a Hugging Face id, "
              "a config.json or a model directory)",
              value.c_str());
          return -1;
        }
      }
      g_model = value;
    }
    const auto same = [&](const auto& kv) { return kv.first == key; };
    if (auto it = std::find_if(g_options.begin(), g_options.end(), same); it != g_options.end())
      it->second = value;
    else
      g_options.emplace_back(std::string(key), value);
    return 0;
  } catch (const std::exception& e) {
    slurm_error("fmte: option check failed (%s); option accepted unchecked", e.what());
    return 0;  // never block a submission because of a bug here
  } catch (...) {
    slurm_error("fmte: option check failed (unknown exception); option accepted unchecked");
    return 0;
  }
}

void ParseArgs(int ac, char** av) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  g_resolver.cache_dir = xdg != nullptr && *xdg ? std::string(xdg) + "/fmte/hub"
                         : home != nullptr      ? std::string(home) + "/.cache/fmte/hub"
                                                : std::string();
  std::string catalog_dir;
  for (int i = 0; i < ac; ++i) {
    std::string arg = av[i] != nullptr ? av[i] : "";
    size_t eq = arg.find('=');
    std::string key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "hub_url") {
      while (!value.empty() && value.back() == '/') value.pop_back();
      g_resolver.hub_url = value;
    } else if (key == "cache_dir") {
      g_resolver.cache_dir = value;
    } else if (key == "timeout_ms") {
      g_resolver.timeout_ms = std::strtol(value.c_str(), nullptr, 10);
      if (g_resolver.timeout_ms <= 0) g_resolver.timeout_ms = 5000;
    } else if (key == "catalog_dir") {
      catalog_dir = value;
    } else if (key == "read_files") {
      g_read_files = value != "no" && value != "0" && value != "false";
    } else if (key == "decide") {
      g_decide = value != "no" && value != "0" && value != "false";
    } else {
      slurm_error(
          "fmte: plugstack.conf: unknown argument '%s' for spank_fmte.so (expected "
          "hub_url=, cache_dir=, timeout_ms=, catalog_dir=, read_files=, decide=)",
          arg.c_str());
    }
  }
  if (catalog_dir.empty()) {
    // CatalogDir= of the fmte.conf beside the slurm.conf in use, as the controller reads it.
    const char* conf = std::getenv("SLURM_CONF");
    auto config = fmte::LoadConfigFile(fmte::FindConfigPath(conf ? conf : "/etc/slurm/slurm.conf"));
    if (config.ok()) catalog_dir = config->catalog_dir;
  }
  g_resolver.models_dir =
      catalog_dir.empty() ? fmte::ModelCatalog::DefaultDir() : catalog_dir + "/models";
  g_catalog_dir = catalog_dir;
}

// The client this plugin runs in (sbatch, salloc, srun): argv[0]'s base name, as glibc keeps it.
std::string_view Program() { return program_invocation_short_name; }
bool InSbatch() { return Program() == "sbatch"; }

// This process's command line as sbatch's words (after the program name): sbatch's own, or
// srun's when it asks for a new job (outside an allocation), its command as --wrap; empty
// otherwise (salloc, a step of a running job).
std::vector<std::string> SbatchCommandLine() {
  std::vector<std::string> words;
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return words;
  std::string text;
  char buf[4096];
  for (ssize_t n; text.size() < (size_t{1} << 20) && (n = read(fd, buf, sizeof(buf))) > 0;)
    text.append(buf, static_cast<size_t>(n));
  close(fd);
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\0', at), text.size());
    words.emplace_back(text, at, end - at);
    at = end + 1;
  }
  if (words.empty()) return words;
  words.erase(words.begin());  // the program, which Program() names
  if (InSbatch()) return words;
  if (Program() == "srun" && std::getenv("SLURM_JOB_ID") == nullptr)
    return fmte::SrunAsSbatch(words);
  return {};
}

// Forwards NAME=VALUE to job_submit (job_desc_adapter.h, kEnvCopyPrefix): from sbatch as an
// environment entry, which travels once in the request; from salloc and srun, which send no
// environment, in spank_job_env.
bool Forward(spank_t sp, std::string_view name, const std::string& value) {
  const std::string key(name);
  if (InSbatch())
    return setenv((std::string(fmte::slurm::kEnvCopyPrefix) + key).c_str(), value.c_str(), 1) == 0;
  return spank_job_control_setenv(sp, key.c_str(), value.c_str(), 1) == ESPANK_SUCCESS;
}

// Reads the batch script and the files it names, as sbatch was given them, and forwards what
// the launch line says. Nothing here refuses a submission: what cannot be read is left to the
// controller's own reading of the script.
void ForwardScriptReading(spank_t sp) {
  const std::vector<std::string> words = SbatchCommandLine();
  if (words.empty()) return;
  auto launchers = fmte::LoadLauncherTable(g_catalog_dir);
  if (!launchers.ok()) {
    slurm_info("fmte: warning: %s; the batch script's files are not read",
               launchers.status().message().c_str());
    return;
  }
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return;
  auto submission = fmte::ReadSubmission(words, cwd, &launchers.value(), fmte::ProcessEnviron());
  if (!submission.ok()) return;  // sbatch itself reports a script it cannot read
  const fmte::JobRequest& r = submission->request;
  const fmte::FieldSource* model = r.SourceOf("model");
  std::string arch;
  if (model != nullptr &&
      (model->source == fmte::Source::kLauncher || model->source == fmte::Source::kFmteLine)) {
    arch = r.arch_json;  // Megatron's flags, or a local model ReadSubmission read
    if (arch.empty()) {  // a local path, the Hugging Face cache, or an id missing from the catalog
      auto resolved = fmte::slurm::ResolveForController(r.job.model, g_resolver);
      if (resolved.ok())
        arch = *resolved;
      else
        slurm_info("fmte: warning: %s", resolved.status().message().c_str());
    }
  }
  const std::string read = fmte::EncodeClientReading(r, arch);
  if (read.empty()) return;
  if (!Forward(sp, fmte::kReadEnvName, read)) {
    slurm_error("fmte: cannot forward what the batch script's files say");
    return;
  }
  g_forwarded = Forwarded{read, submission->facts};
}

// Decides the job as job_submit would on what the controller will receive (the forwarded reading
// and architecture, the --fmte-* values, the Slurm facts of the sbatch options) and forwards the
// decision (client_decision.h). Nothing here refuses a submission: without a decision the
// controller decides.
void ForwardDecision(spank_t sp, const std::string& arch) {
  if (!g_decide || g_forwarded.read.empty()) return;
  std::vector<std::string> entries;
  entries.push_back(std::string(fmte::kReadEnvName) + "=" + g_forwarded.read);
  if (!arch.empty()) entries.push_back(std::string(fmte::kArchEnvName) + "=" + arch);
  for (const auto& [key, value] : g_options)
    entries.push_back(fmte::SpankEnvKey(key) + "=" + value);
  std::vector<const char*> env;
  for (const std::string& e : entries) env.push_back(e.c_str());
  fmte::slurm::SubmitInputs in;
  in.spank_values = fmte::SpankValuesFromEnv(env);
  in.facts = g_forwarded.facts;
  const fmte::JobRequest request = fmte::ParseJobRequest("", in.spank_values, in.facts);
  if (!request.is_llm_job || !request.forwarded_scan) return;
  fmte::slurm::PluginState state;
  state.OperatorSetsOnlyFor(request.partition);       // the one set this job's decision can use
  if (!state.Init("", /*watch=*/false).ok()) return;  // the controller reports its own load
  const fmte::slurm::Loaded* loaded = state.Current();
  if (loaded == nullptr || !loaded->config.client_decisions) return;
  const fmte::slurm::ClientDecision decision{
      loaded->files_fingerprint, fmte::slurm::DecisionCache::InputsHash(in),
      fmte::slurm::DecideJob(request, loaded->config, loaded->estimator)};
  const std::string text = fmte::slurm::EncodeClientDecision(decision);
  if (text.size() > fmte::slurm::kMaxDecisionBytes) return;
  if (!Forward(sp, fmte::slurm::kDecisionEnvName, text))
    slurm_error("fmte: cannot forward the decision made in sbatch; the controller decides");
}

}  // namespace

extern "C" FMTE_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE) return 0;
    OptionStorage& s = Storage();
    if (s.options.empty()) {
      auto specs = fmte::FmteOptions();
      s.names.reserve(specs.size());
      s.arginfos.reserve(specs.size());
      s.usages.reserve(specs.size());
      for (const fmte::OptionSpec& spec : specs) {
        s.names.push_back("fmte-" + std::string(spec.key));
        s.arginfos.emplace_back(spec.arginfo);
        s.usages.push_back("fmte: " + std::string(spec.usage));
      }
      for (size_t i = 0; i < specs.size(); ++i) {
        s.options.push_back(spank_option{s.names[i].data(), s.arginfos[i].data(),
                                         s.usages[i].data(), 1, static_cast<int>(i),
                                         OptionCallback});
      }
    }
    for (spank_option& opt : s.options) {
      if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
        slurm_error("fmte: cannot register --%s", opt.name);
      }
    }
    if (ctx != S_CTX_REMOTE) ParseArgs(ac, av);
    return 0;
  } catch (const std::exception& e) {
    slurm_error("fmte: slurm_spank_init failed (%s); the --fmte-* options may be missing",
                e.what());
    return 0;
  } catch (...) {
    slurm_error(
        "fmte: slurm_spank_init failed (unknown exception); the --fmte-* options may be missing");
    return 0;
  }
}

// After option parsing, on the client: resolve the model if the controller could not.
extern "C" FMTE_EXPORT int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char** /*av*/) {
  try {
    spank_context_t ctx = spank_context();
    // Nothing in sbatch's environment passes for what this plugin forwards (a submission from a
    // shell that has such a variable): only what it sets below.
    if (InSbatch())
      for (std::string_view name : fmte::slurm::kForwardedEnvNames)
        unsetenv((std::string(fmte::slurm::kEnvCopyPrefix) + std::string(name)).c_str());
    // sbatch (allocator) and srun asking for a new job (local): the job's launch line.
    if ((ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL) && g_read_files) ForwardScriptReading(sp);
    if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL) return 0;
    if (g_model.empty()) {
      ForwardDecision(sp, "");
      return 0;
    }
    fmte::Result<std::string> arch = fmte::slurm::ResolveForController(g_model, g_resolver);
    if (!arch.ok()) {
      if (fmte::LooksLikeModelPath(g_model, ".")) {  // the user's own file is wrong: refuse now
        slurm_error("fmte: %s", arch.status().message().c_str());
        return -1;
      }
      // An id we could not fetch: the controller reports it as an unknown model.
      slurm_info("fmte: warning: %s", arch.status().message().c_str());
      ForwardDecision(sp, "");
      return 0;
    }
    if (!arch->empty()) {
      if (!Forward(sp, fmte::kArchEnvName, *arch)) {
        slurm_error("fmte: cannot forward the architecture of '%s'", g_model.c_str());
        return 0;  // the controller decides without it
      }
    }
    ForwardDecision(sp, *arch);
    return 0;
  } catch (const std::exception& e) {
    slurm_error("fmte: model resolution failed (%s); the controller decides without it", e.what());
    return 0;
  } catch (...) {
    slurm_error(
        "fmte: model resolution failed (unknown exception); the controller decides without it");
    return 0;
  }
}
