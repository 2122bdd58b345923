// Client-side model resolution for the SPANK plugin: turns what a user gave as --fmte-model (a
// local config.json, a model directory, or a Hugging Face id missing from the catalog) into the
// compact architecture JSON forwarded to slurmctld as FMTE_ARCH, so that the controller never does
// file or network I/O per job. Hub downloads use libcurl with a short timeout and an on-disk cache.
// Local files and the user's Hugging Face cache are read by estimator/files (fmte/model_files.h),
// as fmte-advise check reads them. Thread-safety: stateless functions; the cache is written
// atomically (temp file + rename).
#ifndef FMTE_SLURM_PLUGIN_MODEL_RESOLVER_H_
#define FMTE_SLURM_PLUGIN_MODEL_RESOLVER_H_

#include <string>
#include <string_view>

#include "fmte/status.h"

namespace fmte::slurm {

struct ResolverOptions {
  std::string models_dir;  // the catalog's models/ directory (<etc>/models)
  std::string hub_url;     // e.g. "https://huggingface.co"; empty: never fetch
  std::string cache_dir;   // fetched configs: <cache_dir>/<org>/<name>/config.json
  long timeout_ms = 5000;  // whole transfer, connect included
};

// The JSON to forward, or "" when the catalog knows the id (the controller resolves it itself).
// Looked up in order: a path, the catalog, the Hugging Face cache, cache_dir, the hub.
// Errors name the option and what was wrong ("--fmte-model: /x/config.json: no such file").
Result<std::string> ResolveForController(std::string_view model, const ResolverOptions& options);

// GET url with libcurl (timeout, size bound of `max_bytes`, optional HF_TOKEN bearer header).
Result<std::string> HttpGet(const std::string& url, long timeout_ms, size_t max_bytes);

}  // namespace fmte::slurm

#endif  // FMTE_SLURM_PLUGIN_MODEL_RESOLVER_H_
