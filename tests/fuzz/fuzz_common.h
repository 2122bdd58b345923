// What the fuzz targets share: the project's shipped catalogs, regressors, launcher table and
// etc/fmte.conf, loaded once per process (as the plugin holds them), and small input helpers.
// A target that finds its world broken aborts at start: a fuzz run must never test nothing.
#ifndef FMTE_TESTS_FUZZ_FUZZ_COMMON_H_
#define FMTE_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/launchers.h"
#include "fmte/policy.h"
#include "fmte/request.h"

namespace fmte::fuzz {

struct World {
  Config config;  // etc/fmte.conf
  Estimator estimator{Catalogs{}};
  LauncherTable launchers;  // etc/launchers.json
};
const World& TheWorld();

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// `text` split at the first `sep`: (before, after); no `sep`: (text, "").
std::pair<std::string_view, std::string_view> SplitAt(std::string_view text, char sep);

// The property every target checks beyond "no crash": an invariant that must hold. Aborts (so
// libFuzzer saves the input) with `what` on stderr.
void Require(bool ok, const char* what);

// An encoded record is at most kMaxRecordBytes, decodes, and encodes again to the same text.
void RequireEncodedRecordRoundTrips(const std::string& encoded);

// The record of a decision encodes, decodes and encodes again to the same text (what fmte-retrain
// reads back from sacct is what the plugin wrote).
void RequireRecordRoundTrip(const JobRequest& request, const Decision& decision);

}  // namespace fmte::fuzz

#endif  // FMTE_TESTS_FUZZ_FUZZ_COMMON_H_
