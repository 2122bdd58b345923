// The job_submit/fmte adapter's two mappings: job_desc_msg_t -> the core's inputs (script, SPANK
// values, SlurmFacts), and a Decision (its Outcome) -> job_desc_msg_t fields, *err_msg and the
// Slurm return code. Every string handed to Slurm is xmalloc'ed (slurm_xstrdup); replaced fields
// are slurm_xfree'd. Thread-safety: no state; the caller serialises access to one job_desc.
#ifndef FMTE_SLURM_PLUGIN_JOB_DESC_ADAPTER_H_
#define FMTE_SLURM_PLUGIN_JOB_DESC_ADAPTER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "fmte/policy.h"
#include "fmte/request.h"

namespace fmte::slurm {

// The decision the SPANK plugin made in sbatch (client_decision.h), forwarded as below.
inline constexpr std::string_view kDecisionEnvName = "FMTE_DECISION";
inline constexpr size_t kMaxDecisionBytes = 16 << 10;  // longer ones are not read
// What the SPANK plugin forwards (FMTE_READ, FMTE_ARCH, FMTE_DECISION) arrives in the job's
// spank_job_env (salloc, srun) or, from sbatch, as environment entries with this prefix: the name
// sbatch itself gives the copies of SPANK job control variables it puts in the job's environment
// (setenvfs("SLURM_SPANK_%s") in 22.05's sbatch.c). sbatch sends its SLURM_* environment in every
// --export mode, so the SPANK plugin sets its values there once instead of in both places
// (spank_job_control_setenv: the request carried every value twice, 7698 against 4064 bytes).
inline constexpr std::string_view kEnvCopyPrefix = "SLURM_SPANK_";
// Every name the SPANK plugin forwards for job_submit alone.
inline constexpr std::string_view kForwardedEnvNames[] = {kReadEnvName, kArchEnvName,
                                                          kDecisionEnvName};

struct SubmitInputs {
  std::string_view script;  // points into job_desc->script (empty for srun/salloc)
  std::vector<std::pair<std::string, std::string>> spank_values;
  SlurmFacts facts;
  std::string client_decision;  // FMTE_DECISION's value (not a SPANK value: no key reads it)
  // How many forwarded entries the reading found in spank_job_env and in the environment (-1:
  // the environment was not scanned), so that DropForwardedReading need not look at every entry
  // again.
  int32_t spank_env_forwarded = 0, env_forwarded = -1;
};

// Reads what the core needs. NO_VAL/INFINITE sentinels become 0, NULL strings empty.
SubmitInputs ReadJobDesc(const job_desc_msg_t& desc);

// Removes what the SPANK plugin forwarded for job_submit alone (FMTE_READ, FMTE_ARCH,
// FMTE_DECISION) from the job once read: from its spank_job_env (otherwise slurmctld keeps them
// with the job, in memory and in every save of its job state, and hands them to every prolog) and
// the kEnvCopyPrefix entries of its environment (otherwise written to the job's environment file
// in the state directory, ~2 KB a job, and seen by the job). The fmte options
// (_SLURM_SPANK_OPTION_fmte_*) stay: the SPANK plugin's remote side receives them. With `read`,
// ReadJobDesc's reading of this very `desc`: an array without forwarded entries is left alone,
// and the entries after the last forwarded one are moved without being read.
void DropForwardedReading(job_desc_msg_t* desc, const SubmitInputs* read = nullptr);

// Overlays the fields a job_modify request changes (time limit, tres_per_*, nodes, partition) on
// the facts recorded at submission.
void OverlayModify(const job_desc_msg_t& desc, SlurmFacts* facts);

// Of a decision, what job_submit writes back (ApplyDecision) and logs (its decision line): the
// outcome, the rewrites, the user's message, the GPU and the memory figures. Small (the estimate's
// breakdown, the reasons and the alternatives are left out), so that the DecisionCache keeps it
// cheaply.
struct Outcome {
  DecisionKind kind = DecisionKind::kAccept;
  RejectReason reject_reason = RejectReason::kNone;
  bool touched = false, advise_only = false, error = false, estimated = false;
  int64_t new_time_limit_min = 0, new_gpus = 0, new_min_nodes = 0;
  GpuTresField gpu_field = GpuTresField::kNone;
  std::string new_gpu_tres, user_message, gpu;
  int64_t per_gpu_bytes = 0, usable_bytes = 0;  // valid when estimated
};
Outcome OutcomeOf(const Decision& d);

// The Slurm error code of a rejection: ESLURM_INVALID_TIME_LIMIT for a time-limit rejection,
// ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE when the job does not fit its GPUs,
// ESLURM_ACCESS_DENIED when the estimate failed and OnError=reject.
int RejectCode(RejectReason reason);

// Writes the decision into `desc` (time_limit, tres_per_*, min_nodes), sets *err_msg to the user
// message (when err_msg is non-null and there is one), appends `record` (if not empty) to
// admin_comment, and returns SLURM_SUCCESS or the rejection code.
int ApplyDecision(const Outcome& decision, const std::string& record, job_desc_msg_t* desc,
                  char** err_msg);
inline int ApplyDecision(const Decision& decision, const std::string& record, job_desc_msg_t* desc,
                         char** err_msg) {
  return ApplyDecision(OutcomeOf(decision), record, desc, err_msg);
}

// fmte.conf WarnSignal (config.h): when `decision` sets or raises the time limit and the partition
// asks for a warning signal, sets desc->warn_signal/warn_time/warn_flags as sbatch --signal would,
// unless the job already has a signal of its own (sbatch sends 0 for none), and adds one line to
// *err_msg saying so. Returns whether it set one.
bool ApplyWarnSignal(const Outcome& decision, const PartitionConfig& partition,
                     job_desc_msg_t* desc, char** err_msg);

// Whether slurmctld writes a verbose line anywhere, from its slurm_conf's SlurmctldDebug and
// SlurmctldSyslogDebug (levels of 22.05's src/common/log.h: quiet 0, fatal, error, info 3,
// verbose 4, debug 5 .. debug5 9, LOG_LEVEL_END 10). An unset SlurmctldSyslogDebug is
// LOG_LEVEL_END ("(null)" in `scontrol show config`), and slurmctld's update_logging() then logs
// to syslog at quiet, fatal or SlurmctldDebug's level: never above SlurmctldDebug.
bool SlurmctldLogsVerbose(uint16_t slurmctld_debug, uint16_t slurmctld_syslog_debug);

}  // namespace fmte::slurm

#endif  // FMTE_SLURM_PLUGIN_JOB_DESC_ADAPTER_H_
