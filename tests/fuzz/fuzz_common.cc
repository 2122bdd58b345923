#include "fuzz_common.h"

#include <cstdio>
#include <cstdlib>

#include "fmte/record.h"
#include "fmte/script_files.h"
#include "fmte/text.h"

namespace fmte::fuzz {
namespace {

template <typename T>
T OrDie(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "fuzz: cannot load %s: %s\n", what, r.status().ToString().c_str());
    std::abort();
  }
  return std::move(r).value();
}

}  // namespace

const World& TheWorld() {
  static const World* world = [] {
    auto* w = new World;
    w->config = OrDie(LoadConfigFile(EtcDir() + "/fmte.conf"), "etc/fmte.conf");
    w->estimator = OrDie(Estimator::Load(), "the catalogs and regressors");
    w->launchers = OrDie(LoadLauncherTable(), "etc/launchers.json");
    return w;
  }();
  return *world;
}

std::pair<std::string_view, std::string_view> SplitAt(std::string_view text, char sep) {
  const size_t at = text.find(sep);
  if (at == std::string_view::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + 1)};
}

void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: invariant broken: %s\n", what);
  std::abort();
}

void RequireEncodedRecordRoundTrips(const std::string& encoded) {
  Require(encoded.size() <= kMaxRecordBytes, "the record is at most kMaxRecordBytes");
  Result<AccountingRecord> decoded = DecodeRecord(encoded);
  if (!decoded.ok()) {
    std::fprintf(stderr, "fuzz: %s\n  does not decode: %s\n", encoded.c_str(),
                 decoded.status().ToString().c_str());
    std::abort();
  }
  const std::string again = EncodeRecord(*decoded);
  if (again != encoded) {
    std::fprintf(stderr, "fuzz: record round trip differs:\n  %s\n  %s\n", encoded.c_str(),
                 again.c_str());
    std::abort();
  }
}

void RequireRecordRoundTrip(const JobRequest& request, const Decision& decision) {
  if (decision.touched) RequireEncodedRecordRoundTrips(EncodeRecord(MakeRecord(request, decision)));
}

}  // namespace fmte::fuzz
