// A model a job names on the submitting machine, read on the client side only (the SPANK plugin
// in sbatch, fmte-advise check and replay): a config.json file, a model directory holding one, or
// a Hugging Face id in the user's Hugging Face cache. The result is the compact config.json text
// that the client forwards to slurmctld (FMTE_READ's "arch", FMTE_ARCH), which itself reads no
// files. The hub itself (network) is the SPANK plugin's (slurm_plugin/model_resolver.h).
// Thread-safety: stateless functions.
#ifndef FMTE_MODEL_FILES_H_
#define FMTE_MODEL_FILES_H_

#include <span>
#include <string>
#include <string_view>

#include "fmte/status.h"

namespace fmte {

// Whether the value names a path rather than a Hugging Face id: it starts with / . or ~, ends with
// .json, or exists relative to `dir`.
bool LooksLikeModelPath(std::string_view model, const std::string& dir);

// config.json of a Hugging Face id in the Hugging Face cache that `environ_entries` ("NAME=value")
// point at ($HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub,
// $HOME/.cache/huggingface/hub: models--org--name/snapshots/<rev>/config.json, refs/main's revision
// first); empty when it is not there.
std::string HfCacheConfig(std::string_view id, std::span<const char* const> environ_entries);

// A config.json text checked with ParseModelConfig and minified (keys the estimator never reads
// dropped), at most kMaxArchJsonBytes. Errors name `origin`.
Result<std::string> CompactArchJson(std::string_view json_text, const std::string& origin);

// The compact config.json of `model` on this machine: a path (relative to `dir`, "~/" from $HOME
// in `environ_entries`) to a config.json or a directory holding one, else a Hugging Face id in the
// cache. NotFound when it names neither; errors name the file ("'x/config.json': no such file
// (expected a config.json or a model directory holding one)").
Result<std::string> LocalModelArch(std::string_view model, const std::string& dir,
                                   std::span<const char* const> environ_entries);

}  // namespace fmte

#endif  // FMTE_MODEL_FILES_H_
