#include "job_desc_adapter.h"

#include <algorithm>
#include <cstring>

#include "fmte/text.h"
#include "slurm_xapi.h"

namespace fmte::slurm {
namespace {

std::string Str(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

// The value of an environment entry "<prefix><name>=value", or nullptr for another entry.
const char* EntryValue(const char* entry, std::string_view prefix, std::string_view name) {
  if (entry == nullptr || std::strncmp(entry, prefix.data(), prefix.size()) != 0) return nullptr;
  return EnvValue(entry + prefix.size(), name);
}

// sbatch --mem-per-gpu=N as job_desc carries it: mem_per_tres "gres:gpu:N" (megabytes), in the
// shape of a GPU tres entry; 0 when absent or unreadable.
int64_t MemPerGpuMb(std::string text) {
  std::replace(text.begin(), text.end(), ';', ',');
  auto t = ParseGpuTres(text);
  return t.ok() ? t->count : 0;
}

int64_t U32(uint32_t v) { return v == NO_VAL || v == INFINITE ? 0 : static_cast<int64_t>(v); }

char** TresField(job_desc_msg_t* desc, GpuTresField field) {
  switch (field) {
    case GpuTresField::kPerNode:
      return &desc->tres_per_node;
    case GpuTresField::kPerJob:
      return &desc->tres_per_job;
    case GpuTresField::kPerTask:
      return &desc->tres_per_task;
    case GpuTresField::kPerSocket:
      return &desc->tres_per_socket;
    case GpuTresField::kNone:
      break;
  }
  return nullptr;
}

// Every forwarded name starts with "FMTE_": one comparison rules out the job's other variables
// (about a hundred per job; with three comparisons each, the scan took 8 us of slurmctld's time per
// submission).
constexpr std::string_view kForwardedStem = "FMTE_";
static_assert(std::all_of(std::begin(kForwardedEnvNames), std::end(kForwardedEnvNames),
                          [](std::string_view n) { return n.starts_with(kForwardedStem); }));

bool IsForwarded(const char* entry, std::string_view prefix) {
  if (entry == nullptr || std::strncmp(entry, prefix.data(), prefix.size()) != 0 ||
      std::strncmp(entry + prefix.size(), kForwardedStem.data(), kForwardedStem.size()) != 0)
    return false;
  for (std::string_view name : kForwardedEnvNames)
    if (EntryValue(entry, prefix, name) != nullptr) return true;
  return false;
}

}  // namespace

SubmitInputs ReadJobDesc(const job_desc_msg_t& desc) {
  SubmitInputs in;
  if (desc.script != nullptr) in.script = desc.script;
  // The spank_job_env entries, and the forwarded values sbatch sent in the environment
  // (kEnvCopyPrefix) unless spank_job_env has them (then the environment's are its copies).
  std::vector<const char*> env;
  for (uint32_t i = 0; desc.spank_job_env != nullptr && i < desc.spank_job_env_size; ++i) {
    env.push_back(desc.spank_job_env[i]);
    in.spank_env_forwarded += IsForwarded(desc.spank_job_env[i], "");
  }
  if (in.spank_env_forwarded == 0) {
    in.env_forwarded = 0;
    // Each entry is a string of its own, cold in the controller's new RPC thread: asking for all
    // of them first lets their cache misses overlap instead of following one another (~100
    // entries a job).
    for (uint32_t i = 0; desc.environment != nullptr && i < desc.env_size; ++i)
      __builtin_prefetch(desc.environment[i]);
    for (uint32_t i = 0; desc.environment != nullptr && i < desc.env_size; ++i) {
      if (IsForwarded(desc.environment[i], kEnvCopyPrefix)) {
        env.push_back(desc.environment[i] + kEnvCopyPrefix.size());
        ++in.env_forwarded;
      }
    }
  }
  if (!env.empty()) {
    in.spank_values = SpankValuesFromEnv(env);
    for (const char* entry : env)
      if (const char* value = EntryValue(entry, "", kDecisionEnvName); value != nullptr)
        in.client_decision.assign(value, strnlen(value, kMaxDecisionBytes + 1));
  }
  SlurmFacts& f = in.facts;
  f.partition = Str(desc.partition);
  f.time_limit_min = U32(desc.time_limit);
  f.min_nodes = U32(desc.min_nodes);
  f.num_tasks = U32(desc.num_tasks);
  f.ntasks_per_node = desc.ntasks_per_node == NO_VAL16 ? 0 : desc.ntasks_per_node;
  f.exclusive = desc.shared == JOB_SHARED_NONE;  // sbatch --exclusive (not =user or =mcs)
  f.tres_per_node = Str(desc.tres_per_node);
  f.tres_per_job = Str(desc.tres_per_job);
  f.tres_per_task = Str(desc.tres_per_task);
  f.tres_per_socket = Str(desc.tres_per_socket);
  // Host memory: pn_min_memory is megabytes per node, or per CPU with the MEM_PER_CPU bit (0: all
  // of a node's, NO_VAL64: not given); --mem-per-gpu arrives as mem_per_tres "gres:gpu:<MB>".
  if (desc.pn_min_memory != NO_VAL64 && desc.pn_min_memory != 0) {
    if (desc.pn_min_memory & MEM_PER_CPU)
      f.mem_per_cpu_mb = static_cast<int64_t>(desc.pn_min_memory & ~MEM_PER_CPU);
    else
      f.mem_per_node_mb = static_cast<int64_t>(std::min<uint64_t>(desc.pn_min_memory, 1ULL << 40));
  }
  // (Most jobs give none: the tres parser's code is not run for them on the cold RPC thread.)
  f.mem_per_gpu_mb = desc.mem_per_tres != nullptr ? MemPerGpuMb(desc.mem_per_tres) : 0;
  f.cpus_per_task = desc.cpus_per_task == NO_VAL16 ? 0 : desc.cpus_per_task;
  f.job_name = Str(desc.name);
  // No getpwuid(): it may reach LDAP while slurmctld holds its locks. The uid is enough.
  if (desc.user_id != NO_VAL) f.user = std::to_string(desc.user_id);
  return in;
}

namespace {

// Removes the entries "<prefix><name>=" of kForwardedEnvNames from an xmalloc'd array of `*size`
// entries, keeping the others in order. `count`: how many there are (-1: not known); once that
// many are gone the rest are moved unread (each entry is a cache miss on the controller's RPC
// thread).
void DropEntries(char** array, uint32_t* size, std::string_view prefix, int32_t count) {
  if (array == nullptr || count == 0) return;
  uint32_t kept = 0;
  int32_t dropped = 0;
  for (uint32_t i = 0; i < *size; ++i) {
    char*& entry = array[i];
    if ((count < 0 || dropped < count) && IsForwarded(entry, prefix)) {
      slurm_xfree(reinterpret_cast<void**>(&entry));
      ++dropped;
      continue;
    }
    array[kept++] = entry;
  }
  // Slurm frees the first `*size` entries (and some paths walk to a NULL): the rest of the array
  // is cleared.
  for (uint32_t i = kept; i < *size; ++i) array[i] = nullptr;
  *size = kept;
}

}  // namespace

void DropForwardedReading(job_desc_msg_t* desc, const SubmitInputs* read) {
  DropEntries(desc->spank_job_env, &desc->spank_job_env_size, "",
              read != nullptr ? read->spank_env_forwarded : -1);
  // From the environment (kEnvCopyPrefix): slurmctld would write them into the job's environment
  // file in its state directory and the job would see them.
  DropEntries(desc->environment, &desc->env_size, kEnvCopyPrefix,
              read != nullptr ? read->env_forwarded : -1);
}

void OverlayModify(const job_desc_msg_t& desc, SlurmFacts* facts) {
  if (desc.time_limit != NO_VAL) facts->time_limit_min = U32(desc.time_limit);
  if (desc.min_nodes != NO_VAL) facts->min_nodes = U32(desc.min_nodes);
  if (desc.partition != nullptr) facts->partition = desc.partition;
  if (desc.tres_per_node != nullptr) facts->tres_per_node = desc.tres_per_node;
  if (desc.tres_per_job != nullptr) facts->tres_per_job = desc.tres_per_job;
  if (desc.tres_per_task != nullptr) facts->tres_per_task = desc.tres_per_task;
  if (desc.tres_per_socket != nullptr) facts->tres_per_socket = desc.tres_per_socket;
}

Outcome OutcomeOf(const Decision& d) {
  Outcome o;
  o.kind = d.kind;
  o.reject_reason = d.reject_reason;
  o.touched = d.touched;
  o.advise_only = d.advise_only;
  o.error = d.error;
  o.estimated = d.estimated;
  o.new_time_limit_min = d.new_time_limit_min;
  o.new_gpus = d.new_gpus;
  o.new_min_nodes = d.new_min_nodes;
  o.gpu_field = d.gpu_field;
  o.new_gpu_tres = d.new_gpu_tres;
  o.user_message = d.user_message;
  o.gpu = d.gpu;
  o.per_gpu_bytes = d.estimate.memory.per_gpu_bytes;
  o.usable_bytes = d.usable_bytes;
  return o;
}

int RejectCode(RejectReason reason) {
  switch (reason) {
    case RejectReason::kError:
      return ESLURM_ACCESS_DENIED;
    case RejectReason::kTimeLimit:
      return ESLURM_INVALID_TIME_LIMIT;
    case RejectReason::kMemory:
    case RejectReason::kNone:
      break;
  }
  return ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE;
}

int ApplyDecision(const Outcome& decision, const std::string& record, job_desc_msg_t* desc,
                  char** err_msg) {
  if (!decision.touched) return SLURM_SUCCESS;
  if (err_msg != nullptr && !decision.user_message.empty()) {
    ReplaceXstr(err_msg, decision.user_message.c_str());
  }
  if (decision.kind == DecisionKind::kReject) return RejectCode(decision.reject_reason);
  if (decision.kind == DecisionKind::kRewrite) {
    if (decision.new_time_limit_min > 0) {
      desc->time_limit = static_cast<uint32_t>(decision.new_time_limit_min);
    }
    if (char** field = TresField(desc, decision.gpu_field);
        field != nullptr && !decision.new_gpu_tres.empty()) {
      ReplaceXstr(field, decision.new_gpu_tres.c_str());
    }
    if (decision.new_min_nodes > 0) {
      desc->min_nodes = static_cast<uint32_t>(decision.new_min_nodes);
      if (desc->max_nodes != NO_VAL && desc->max_nodes < desc->min_nodes) {
        desc->max_nodes = desc->min_nodes;
      }
    }
  }
  if (!record.empty()) {
    // AdminComment is always stored in accounting, but an epilog may replace it at job end
    // (Princeton jobstats: sacctmgr ... set AdminComment=JS1:...); the job's Comment keeps a copy
    // (stored with AccountingStoreFlags=job_comment), after what the user wrote there.
    for (char** field : {&desc->admin_comment, &desc->comment}) {
      if (*field != nullptr && std::strstr(*field, "fmte:v") != nullptr) continue;  // re-decided
      if (*field != nullptr && (*field)[0] != '\0') slurm_xstrcat(field, " ");
      slurm_xstrcat(field, record.c_str());
    }
  }
  return SLURM_SUCCESS;
}

bool ApplyWarnSignal(const Outcome& decision, const PartitionConfig& partition,
                     job_desc_msg_t* desc, char** err_msg) {
  if (!decision.touched || decision.kind != DecisionKind::kRewrite ||
      decision.new_time_limit_min <= 0 || partition.warn_signal <= 0)
    return false;
  if (desc->warn_signal != 0 && desc->warn_signal != NO_VAL16) return false;  // the user's own
  desc->warn_signal = static_cast<uint16_t>(partition.warn_signal);
  desc->warn_time = static_cast<uint16_t>(partition.warn_time_s);
  const uint16_t flags = desc->warn_flags == NO_VAL16 ? 0 : desc->warn_flags;
  desc->warn_flags =
      static_cast<uint16_t>(flags | (partition.warn_batch_only ? KILL_JOB_BATCH : 0));
  if (err_msg != nullptr) {
    const std::string line =
        "fmte: Slurm will send signal " + std::to_string(partition.warn_signal) + " to the " +
        (partition.warn_batch_only ? "batch shell" : "job's steps") + " " +
        std::to_string(partition.warn_time_s) +
        " s before this time limit (fmte.conf WarnSignal): save a checkpoint on it.";
    if (*err_msg != nullptr && (*err_msg)[0] != '\0') slurm_xstrcat(err_msg, "\n");
    slurm_xstrcat(err_msg, line.c_str());
  }
  return true;
}

bool SlurmctldLogsVerbose(uint16_t slurmctld_debug, uint16_t slurmctld_syslog_debug) {
  constexpr uint16_t kVerbose = 4, kUnset = 10;  // LOG_LEVEL_VERBOSE, LOG_LEVEL_END
  return slurmctld_debug >= kVerbose ||
         (slurmctld_syslog_debug >= kVerbose && slurmctld_syslog_debug < kUnset);
}

}  // namespace fmte::slurm
