// The decision made in sbatch. The SPANK plugin reads the batch script in sbatch (the client's
// reading, FMTE_READ); it then also decides the job there, with the same function job_submit
// uses (DecideJob), on the same inputs the controller will see (the forwarded reading, the fmte
// options, the Slurm facts read from the sbatch options), and forwards the result as
// FMTE_DECISION. job_submit applies it instead of parsing and estimating again when
//   - it was made with the same files: FilesFingerprint (fmte's version, fmte.conf, the catalog
//     folder, the regressors) equals the controller's, and
//   - it was made for the same submission: DecisionCache::InputsHash of the controller's own
//     reading of the job (every field its ParseJobRequest reads) equals the forwarded one;
// otherwise (another fmte on the login node, a file changed on one side, an sbatch option the
// client read differently, a malformed value) the controller decides itself, as before.
// This moves ~85 us of job_submit's time per distinct LLM job (docs/hardening.md) to the
// submitting user's sbatch (12 ms there: 24 ms per sbatch against 12 with decide=no). Trust: the
// forwarded decision is worth what the forwarded reading is worth. A user who forges FMTE_DECISION
// could as well forge FMTE_READ (or write the script they want fmte to see): fmte is admission
// advice, not a security boundary, and Slurm checks the partition's limits after job_submit. What a
// forged decision could carry beyond that is bounded here: the record must look like one
// (kRecordPrefix, printable, at most kMaxRecordBytes) and no field but the user's message holds
// control characters, so nothing but an fmte record reaches AdminComment and no forged line reaches
// slurmctld's log. A site that wants every decision made on the controller sets ClientDecisions=no
// in fmte.conf.
#ifndef FMTE_SLURM_PLUGIN_CLIENT_DECISION_H_
#define FMTE_SLURM_PLUGIN_CLIENT_DECISION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "decision_cache.h"
#include "fmte/config.h"
#include "fmte/status.h"

namespace fmte::slurm {

// What a decision depends on besides the job, as a hex digest: fmte's version, and the bytes of
// the fmte.conf at `config_path` (none when missing), of every file under the catalog folder
// (CatalogDir, else the installed etc folder) and of the regressors the estimator reads (the
// top-level files of RegressorsDir or the shipped folder, and its vtrain/ folder), by path
// relative to their folder. Two hosts with the same install and files get the same digest.
std::string FilesFingerprint(const std::string& config_path, const Config& config);

struct ClientDecision {
  std::string files;    // FilesFingerprint of the files decided with
  uint64_t inputs = 0;  // DecisionCache::InputsHash of the submission decided on
  CachedDecision decision;
};

// Text form: a header line, then one "key=value" line per field, values %-escaped.
std::string EncodeClientDecision(const ClientDecision& d);
// Every field exactly once, each in its range; an error names the field.
Result<ClientDecision> DecodeClientDecision(std::string_view text);

}  // namespace fmte::slurm

#endif  // FMTE_SLURM_PLUGIN_CLIENT_DECISION_H_
