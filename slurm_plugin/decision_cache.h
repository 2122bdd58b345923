// DecisionCache: the decisions of recent submissions, so that a burst of the same job (a sweep
// that changes only a learning rate or a seed, a chain of restarts, a loop of sbatch calls: the
// bursts that load slurmctld most) is parsed and estimated once. The key is everything
// ParseJobRequest reads from the submission: the SPANK values (the forwarded reading FMTE_READ and
// FMTE_ARCH among them), the Slurm facts except the job's name and user (which no decision reads;
// CacheKeyTest checks that), and the script's text unless the client's reading carries its scan
// (then the controller never reads the script: JobRequest::forwarded_scan). Decide is a pure
// function of the request and the loaded files, so a hit gives what a fresh decision would; the
// plugin clears the cache whenever it reloads its files. Bounded: kMaxEntries, oldest replaced
// first; a submission whose key would exceed kMaxKeyBytes (a long script without a forwarded
// reading) is not kept, so the cache holds at most kMaxEntries x kMaxKeyBytes of keys.
// Thread-safety: not synchronised. REQUIRES: the caller holds the plugin's mutex.
#ifndef FMTE_SLURM_PLUGIN_DECISION_CACHE_H_
#define FMTE_SLURM_PLUGIN_DECISION_CACHE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/request.h"
#include "job_desc_adapter.h"

namespace fmte::slurm {

// What job_submit needs of one submission's decision, once made.
struct CachedDecision {
  bool is_llm_job = false;
  Outcome outcome;     // valid when is_llm_job
  std::string record;  // the AdminComment record ("" when none is written)
  std::string model;   // for the decision line
  int64_t slurm_gpus = 0;
  // The script's text was read (no forwarded scan): job_modify's re-decision needs it too.
  bool script_read = true;
};

// A 64-bit hash over fields, each text preceded by its length (so "ab"+"c" differs from "a"+"bc"):
// the same value in every process, build and host of one fmte version (its words are read in
// little-endian order, whatever the CPU). Binds a decision made in sbatch to the submission
// (DecisionCache::InputsHash) and to the files it was made with (FilesFingerprint). Eight bytes per
// step, multiply and xor-shift, then MurmurHash3's finaliser: InputsHash of a forwarded submission
// takes 0.35 us against 0.98 with byte-wise FNV-1a, which this replaced (job_submit_bench
// BM_ClientDecisionPath, warm). Not a MAC: client_decision.h says what a forged value can do.
class StableHasher {
 public:
  void Add(std::string_view text) {
    Add(static_cast<int64_t>(text.size()));
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    size_t n = text.size();
    for (; n >= 8; p += 8, n -= 8) Word(Load(p, 8));
    if (n > 0) Word(Load(p, n));
  }
  void Add(int64_t v) { Word(static_cast<uint64_t>(v)); }
  uint64_t value() const {
    uint64_t h = h_;  // MurmurHash3 fmix64
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
  }

 private:
  // Up to 8 bytes as a little-endian word (one load on little-endian CPUs).
  static uint64_t Load(const unsigned char* p, size_t n) {
    uint64_t w = 0;
    for (size_t i = 0; i < n; ++i) w |= static_cast<uint64_t>(p[i]) << (8 * i);
    return w;
  }
  void Word(uint64_t w) {
    h_ = (h_ ^ w) * 0x9e3779b97f4a7c15ULL;
    h_ ^= h_ >> 32;
  }
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

// The decision of one parsed submission, as job_submit writes and keeps it: the one function both
// job_submit (on the controller) and the SPANK plugin (in sbatch, client_decision.h) decide with.
CachedDecision DecideJob(const JobRequest& request, const Config& config,
                         const Estimator& estimator);

class DecisionCache {
 public:
  static constexpr size_t kMaxEntries = 128;
  static constexpr size_t kMaxKeyBytes = size_t{64} << 10;  // larger submissions are not cached

  // A submission as looked up: its inputs and the hash of its key, computed from the inputs
  // without building the key (no copy of the script for the jobs that are not found).
  struct Probe {
    const SubmitInputs* in = nullptr;
    bool with_script = true;
    uint64_t hash = 0;
  };
  // `with_script`: the script's text is part of the key (false only when the caller will keep the
  // result of a request with forwarded_scan).
  static Probe ProbeFor(const SubmitInputs& in, bool with_script);
  // The key itself (built to confirm a matching hash and to keep an entry); empty beyond
  // kMaxKeyBytes: such a submission is never found nor kept.
  static std::string Key(const SubmitInputs& in, bool with_script);
  // Whether the script can be left out of the key: a forwarded reading is present. Its result may
  // be kept only if the request then came from the forwarded scan (JobRequest::forwarded_scan).
  static bool MayOmitScript(const SubmitInputs& in);
  // The key without the script, hashed by StableHasher: binds a decision made in sbatch to the
  // submission the controller reads (client_decision.h).
  static uint64_t InputsHash(const SubmitInputs& in);

  // The entry of the same submission, or nullptr. Valid until the next Put or Clear.
  const CachedDecision* Find(const Probe& probe) const;
  // Keeps `value` for the probed submission and returns it (valid until the next Put or Clear); a
  // submission too large to keep gets its value back in `scratch`.
  const CachedDecision* Put(const Probe& probe, CachedDecision value, CachedDecision* scratch);
  void Clear();

  size_t size() const { return keys_.size(); }

 private:
  std::array<uint64_t, kMaxEntries> hashes_{};  // compared first: one cache line per 8 entries
  std::vector<std::string> keys_;
  std::vector<CachedDecision> values_;
  size_t next_ = 0;  // the slot Put replaces once full
};

}  // namespace fmte::slurm

#endif  // FMTE_SLURM_PLUGIN_DECISION_CACHE_H_
