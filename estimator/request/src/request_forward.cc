// The client's reading of the launch line, forwarded to slurmctld as FMTE_READ (fmte/request.h):
// encoded by the SPANK plugin in sbatch, decoded by ParseJobRequest in place of its own reading.
#include <nlohmann/json.hpp>

#include "request_internal.h"

namespace fmte {

namespace {
constexpr int kReadVersion = 1;
constexpr size_t kMaxForwardedItems = 256;
}  // namespace

std::string EncodeClientReading(const JobRequest& r, std::string_view arch_json) {
  using nlohmann::json;
  json values = json::array();
  for (const FieldSource& s : r.sources)
    if (s.source == Source::kLauncher && s.key != "gpus" && values.size() < kMaxForwardedItems)
      values.push_back({s.key, s.value, Shown(s.origin, 160)});
  if (values.empty() && r.unread.empty() && r.launcher.empty()) return {};
  json unread = json::array();
  for (const UnreadSetting& u : r.unread)
    if (unread.size() < kMaxForwardedItems) unread.push_back({u.key, Shown(u.origin, 160)});
  json files = json::array();
  for (const std::string& f : r.files_read)
    if (files.size() < 64) files.push_back(Shown(f, 200));
  json j = {{"v", kReadVersion},
            {"launcher", r.launcher},
            {"procs", r.launcher_procs_per_node},
            {"nodes", r.launcher_nodes},
            {"values", std::move(values)},
            {"unread", std::move(unread)},
            {"files", std::move(files)}};
  if (!arch_json.empty() && arch_json.size() <= kMaxArchJsonBytes) j["arch"] = arch_json;
  std::string out = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (out.size() > kMaxReadJsonBytes) {  // never cut JSON: drop the architecture, then files
    j.erase("arch");
    j["files"] = json::array();
    out = j.dump(-1, ' ', false, json::error_handler_t::replace);
    if (out.size() > kMaxReadJsonBytes) return {};
  }
  return out;
}

namespace internal {

Result<LauncherFindings> DecodeClientReading(std::string_view text) {
  using nlohmann::json;
  const std::string shown(kReadEnvName);
  if (text.size() > kMaxReadJsonBytes)
    return Status::InvalidArgument(shown + ": longer than " + std::to_string(kMaxReadJsonBytes) +
                                   " bytes");
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Status::ParseError(shown + ": expected a JSON object");
  const auto str = [&](const json& v) -> const std::string* {
    return v.is_string() ? v.get_ptr<const std::string*>() : nullptr;
  };
  if (!j.contains("v") || !j["v"].is_number_integer() || j["v"].get<int64_t>() != kReadVersion)
    return Status::InvalidArgument(
        shown + ": expected version " + std::to_string(kReadVersion) +
        " (spank_fmte.so and job_submit_fmte.so of different releases?)");
  LauncherFindings f;
  if (auto it = j.find("launcher"); it != j.end() && str(*it) != nullptr)
    f.launcher = Shown(*str(*it), 32);
  for (auto [key, field] : {std::pair{"procs", &f.procs_per_node}, std::pair{"nodes", &f.nodes}}) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > (1 << 20))
      return Status::InvalidArgument(shown + ": " + key + ": expected an integer in 0..1048576");
    *field = it->get<int64_t>();
  }
  const auto rows = [&](const char* key, size_t width) -> Result<const json*> {
    auto it = j.find(key);
    if (it == j.end()) return static_cast<const json*>(nullptr);
    if (!it->is_array() || it->size() > kMaxForwardedItems)
      return Status::InvalidArgument(shown + ": " + key + ": expected an array of at most " +
                                     std::to_string(kMaxForwardedItems) + " entries");
    for (const json& row : *it) {
      bool ok = width == 0 ? row.is_string() : row.is_array() && row.size() == width;
      if (ok && width > 0)
        for (const json& cell : row) ok = ok && cell.is_string();
      if (!ok)
        return Status::InvalidArgument(shown + ": " + key + ": expected " +
                                       (width == 0
                                            ? std::string("strings")
                                            : "rows of " + std::to_string(width) + " strings"));
    }
    return &*it;
  };
  auto values = rows("values", 3);
  if (!values.ok()) return values.status();
  auto unread = rows("unread", 2);
  if (!unread.ok()) return unread.status();
  auto files = rows("files", 0);
  if (!files.ok()) return files.status();
  if (*values != nullptr)
    for (const json& row : **values)
      f.values.push_back(Assignment{row[0].get<std::string>(),
                                    Shown(row[1].get<std::string>(), kMaxValueBytes),
                                    Shown(row[2].get<std::string>(), 160)});
  if (*unread != nullptr)
    for (const json& row : **unread)
      f.unread.push_back(
          UnreadSetting{row[0].get<std::string>(), Shown(row[1].get<std::string>(), 160)});
  if (*files != nullptr)
    for (const json& row : **files) f.files_read.push_back(Shown(row.get<std::string>(), 200));
  if (auto it = j.find("arch"); it != j.end()) {
    if (str(*it) == nullptr || str(*it)->size() > kMaxArchJsonBytes)
      return Status::InvalidArgument(shown + ": arch: expected a config.json text of at most " +
                                     std::to_string(kMaxArchJsonBytes) + " bytes");
    f.arch_json = *str(*it);
  }
  return f;
}

}  // namespace internal
}  // namespace fmte
