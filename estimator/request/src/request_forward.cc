// The client's reading of the launch line, forwarded to slurmctld as FMTE_READ (fmte/request.h):
// encoded by the SPANK plugin in sbatch, decoded by ParseJobRequest in place of its own reading.
#include <nlohmann/json.hpp>

#include "request_internal.h"

namespace fmte {

namespace {
constexpr int kReadVersion = 1;
constexpr size_t kMaxForwardedItems = 256;
constexpr size_t kMaxForwardedLineBytes = 4096;  // an #FMTE line or a scan warning

// Well-formed UTF-8 (what JSON carries unchanged): anything else would reach the controller
// altered, so a script with such an #FMTE line or warning is scanned there instead.
bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    if (n == 2 && c < 0xC2) return false;  // overlong
    i += n;
  }
  return true;
}

// The client's scan (#FMTE lines and its warnings) as "fmte" and "notes", or false when it cannot
// travel unchanged (then the controller scans the script itself).
bool AddScan(const JobRequest& r, nlohmann::json* j) {
  using nlohmann::json;
  if (!r.client_scan || r.script_fmte_lines.size() > kMaxForwardedItems ||
      r.script_warnings.size() > kMaxForwardedItems)
    return false;
  json lines = json::array();
  for (const auto& [line, text] : r.script_fmte_lines) {
    if (text.size() > kMaxForwardedLineBytes || !IsUtf8(text)) return false;
    lines.push_back({std::to_string(line), text});
  }
  json notes = json::array();
  for (const std::string& w : r.script_warnings) {
    if (w.size() > kMaxForwardedLineBytes || !IsUtf8(w)) return false;
    notes.push_back(w);
  }
  (*j)["fmte"] = std::move(lines);
  (*j)["notes"] = std::move(notes);
  return true;
}
}  // namespace

std::string EncodeClientReading(const JobRequest& r, std::string_view arch_json) {
  using nlohmann::json;
  json values = json::array();
  for (const FieldSource& s : r.sources)
    if (s.source == Source::kLauncher && s.key != "gpus" && values.size() < kMaxForwardedItems)
      values.push_back({s.key, s.value, Shown(s.origin, 160)});
  // Nothing read that the controller would not read itself; an architecture (of a model the
  // controller cannot read, named by the launch line or an #FMTE line) is always forwarded, and so
  // is the client's scan of the script (the controller then does not scan it).
  if (values.empty() && r.unread.empty() && r.launcher.empty() && arch_json.empty() &&
      !r.client_scan)
    return {};
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
  if (!r.launcher_procs_origin.empty()) j["porigin"] = Shown(r.launcher_procs_origin, 96);
  const bool scan = AddScan(r, &j);
  if (!scan && values.empty() && r.unread.empty() && r.launcher.empty() && arch_json.empty())
    return {};
  std::string out = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (out.size() > kMaxReadJsonBytes && scan) {  // never cut JSON: drop the scan (scanned there),
    j.erase("fmte");                             // then the architecture, then files
    j.erase("notes");
    out = j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (out.size() > kMaxReadJsonBytes) {
    j.erase("arch");
    j["files"] = json::array();
    out = j.dump(-1, ' ', false, json::error_handler_t::replace);
    if (out.size() > kMaxReadJsonBytes) return {};
  }
  return out;
}

namespace internal {

namespace {

// Reads FMTE_READ as a stream of JSON events (nlohmann's SAX interface): no document is built,
// which halves what the decision costs slurmctld for the reading (measured in a real slurmctld:
// 38 us of thread CPU for the DOM). The grammar is EncodeClientReading's: an object of
// "v" (version), "launcher", "procs", "nodes", "arch", "values" (rows of 3 strings), "unread"
// (rows of 2), "files" (strings), "fmte" (rows of 2: line number, text; its presence says the
// client scanned the script), "notes" (strings) and "porigin" (where "procs" comes from, when not
// the launcher's flag); other keys are skipped. The first error stops
// the parse.
class ReadingParser {
 public:
  using json = nlohmann::json;
  explicit ReadingParser(LauncherFindings* out) : out_(out) {}

  bool null() { return Scalar(); }
  bool boolean(bool) { return Scalar(); }
  bool number_integer(json::number_integer_t v) { return Integer(v); }
  bool number_unsigned(json::number_unsigned_t v) {
    return Integer(v > static_cast<json::number_unsigned_t>(INT64_MAX)
                       ? INT64_MAX
                       : static_cast<json::number_integer_t>(v));
  }
  bool number_float(json::number_float_t, const json::string_t&) { return Scalar(); }
  bool binary(json::binary_t&) { return Scalar(); }
  bool string(json::string_t& v);
  bool start_object(std::size_t);
  bool end_object() { return --depth_, true; }
  bool key(json::string_t& k);
  bool start_array(std::size_t);
  bool end_array();
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return Fail("expected a JSON object");
  }

  // After the parse: what was read, or the first error.
  Status Finish(bool parsed);

 private:
  enum class Key {
    kNone,
    kVersion,
    kLauncher,
    kProcs,
    kNodes,
    kArch,
    kValues,
    kUnread,
    kFiles,
    kFmte,
    kNotes,
    kProcsOrigin
  };
  bool Rows() const { return key_ == Key::kValues || key_ == Key::kUnread || key_ == Key::kFmte; }
  bool Strings() const { return key_ == Key::kFiles || key_ == Key::kNotes; }
  bool Fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
    return false;
  }
  bool Skipping() const { return key_ == Key::kNone && depth_ > 1; }
  bool Scalar();  // a value where the key wants another kind
  bool Integer(int64_t v);
  bool RowsError();

  LauncherFindings* out_;
  std::string error_;
  int depth_ = 0;  // 1: inside the top object; 2: in a list; 3: in a row
  Key key_ = Key::kNone;
  std::string key_name_;
  bool saw_version_ = false;
  int64_t version_ = 0;
  size_t rows_ = 0;
  std::vector<std::string> row_;
};

bool ReadingParser::start_object(std::size_t) {
  if (++depth_ == 1) return true;
  if (Skipping()) return true;
  return Rows() ? RowsError() : Strings() ? Fail(key_name_ + ": expected strings") : Scalar();
}

bool ReadingParser::key(json::string_t& k) {
  if (depth_ != 1) return true;  // a key of a skipped object
  static constexpr std::pair<std::string_view, Key> kKeys[] = {
      {"v", Key::kVersion},     {"launcher", Key::kLauncher},  {"procs", Key::kProcs},
      {"nodes", Key::kNodes},   {"arch", Key::kArch},          {"values", Key::kValues},
      {"unread", Key::kUnread}, {"files", Key::kFiles},        {"fmte", Key::kFmte},
      {"notes", Key::kNotes},   {"porigin", Key::kProcsOrigin}};
  key_ = Key::kNone;
  for (const auto& [name, key] : kKeys)
    if (k == name) key_ = key;
  key_name_ = std::move(k);
  return true;
}

bool ReadingParser::Scalar() {
  if (depth_ == 0) return Fail("expected a JSON object");
  if (Skipping() || key_ == Key::kNone) return true;
  switch (key_) {
    case Key::kVersion:
      return Fail("expected version " + std::to_string(kReadVersion) +
                  " (spank_fmte.so and job_submit_fmte.so of different releases?)");
    case Key::kProcs:
    case Key::kNodes:
      return Fail(key_name_ + ": expected an integer in 0..1048576");
    case Key::kArch:
      return Fail("arch: expected a config.json text of at most " +
                  std::to_string(kMaxArchJsonBytes) + " bytes");
    case Key::kLauncher:
      return Fail("launcher: expected a name");
    case Key::kProcsOrigin:
      return Fail("porigin: expected a text");
    case Key::kValues:
    case Key::kUnread:
    case Key::kFmte:
      return RowsError();
    case Key::kFiles:
    case Key::kNotes:
      return depth_ == 1 ? Fail(key_name_ + ": expected an array of at most " +
                                std::to_string(kMaxForwardedItems) + " entries")
                         : Fail(key_name_ + ": expected strings");
    case Key::kNone:
      break;
  }
  return true;
}

bool ReadingParser::Integer(int64_t v) {
  if (depth_ == 1 && key_ == Key::kVersion) {
    saw_version_ = true;
    version_ = v;
    return true;
  }
  if (depth_ == 1 && (key_ == Key::kProcs || key_ == Key::kNodes)) {
    if (v < 0 || v > (1 << 20)) return Scalar();
    (key_ == Key::kProcs ? out_->procs_per_node : out_->nodes) = v;
    return true;
  }
  return Scalar();
}

bool ReadingParser::RowsError() {
  const bool values = key_ == Key::kValues;
  return Fail(key_name_ + ": expected " +
              (depth_ == 1
                   ? "an array of at most " + std::to_string(kMaxForwardedItems) + " entries"
                   : "rows of " + std::string(values ? "3" : "2") + " strings" +
                         (key_ == Key::kFmte ? " (line number, text)" : "")));
}

bool ReadingParser::string(json::string_t& v) {
  if (depth_ == 0) return Fail("expected a JSON object");
  if (Skipping() || key_ == Key::kNone) return true;
  switch (key_) {
    case Key::kLauncher:
      if (depth_ != 1) return Scalar();
      out_->launcher = Shown(v, 32);
      return true;
    case Key::kProcsOrigin:
      if (depth_ != 1) return Scalar();
      out_->procs_origin = Shown(v, 96);
      return true;
    case Key::kArch:
      if (depth_ != 1 || v.size() > kMaxArchJsonBytes) return Scalar();
      out_->arch_json = std::move(v);
      return true;
    case Key::kFiles:
      if (depth_ != 2) return Scalar();
      out_->files_read.push_back(Shown(v, 200));
      return true;
    case Key::kNotes:
      if (depth_ != 2 || v.size() > kMaxForwardedLineBytes) return Scalar();
      out_->scan_warnings.push_back(std::move(v));
      return true;
    case Key::kValues:
    case Key::kUnread:
    case Key::kFmte:
      if (depth_ != 3) return RowsError();
      row_.push_back(std::move(v));
      return true;
    default:
      return Scalar();
  }
}

bool ReadingParser::start_array(std::size_t) {
  ++depth_;
  if (depth_ == 1) return Fail("expected a JSON object");
  if (Skipping()) return true;
  if (key_ == Key::kNone) return true;
  const bool rows = Rows();
  if (depth_ == 2 && (rows || Strings())) {
    rows_ = 0;
    if (key_ == Key::kFmte) out_->scanned = true;
    return true;
  }
  if (depth_ == 3 && rows) {
    if (++rows_ > kMaxForwardedItems) {
      --depth_;
      return RowsError();
    }
    row_.clear();
    return true;
  }
  --depth_;  // reported as a wrong value of the key it belongs to
  return Scalar();
}

bool ReadingParser::end_array() {
  if (depth_ == 2 && ((key_ == Key::kFiles && out_->files_read.size() > kMaxForwardedItems) ||
                      (key_ == Key::kNotes && out_->scan_warnings.size() > kMaxForwardedItems))) {
    --depth_;
    return Fail(key_name_ + ": expected an array of at most " + std::to_string(kMaxForwardedItems) +
                " entries");
  }
  if (depth_ == 3 && Rows()) {
    const size_t width = key_ == Key::kValues ? 3 : 2;
    if (row_.size() != width) return RowsError();
    if (key_ == Key::kValues) {
      out_->values.push_back(
          Assignment{std::move(row_[0]), Shown(row_[1], kMaxValueBytes), Shown(row_[2], 160)});
    } else if (key_ == Key::kUnread) {
      out_->unread.push_back(UnreadSetting{std::move(row_[0]), Shown(row_[1], 160)});
    } else {
      const std::string& n = row_[0];
      int line = 0;
      bool number = !n.empty() && n.size() <= 7;
      for (char c : n) {
        number = number && c >= '0' && c <= '9';
        line = line * 10 + (c - '0');
      }
      if (!number || row_[1].size() > kMaxForwardedLineBytes) return RowsError();
      out_->fmte_lines.emplace_back(line, std::move(row_[1]));
    }
  }
  --depth_;
  return true;
}

Status ReadingParser::Finish(bool parsed) {
  const std::string shown(kReadEnvName);
  if (!error_.empty()) {
    return error_.starts_with("expected a JSON") ? Status::ParseError(shown + ": " + error_)
                                                 : Status::InvalidArgument(shown + ": " + error_);
  }
  if (!parsed) return Status::ParseError(shown + ": expected a JSON object");
  if (!saw_version_ || version_ != kReadVersion)
    return Status::InvalidArgument(
        shown + ": expected version " + std::to_string(kReadVersion) +
        " (spank_fmte.so and job_submit_fmte.so of different releases?)");
  return Status::Ok();
}

}  // namespace

Result<LauncherFindings> DecodeClientReading(std::string_view text) {
  const std::string shown(kReadEnvName);
  if (text.size() > kMaxReadJsonBytes)
    return Status::InvalidArgument(shown + ": longer than " + std::to_string(kMaxReadJsonBytes) +
                                   " bytes");
  LauncherFindings f;
  ReadingParser parser(&f);
  const bool parsed = nlohmann::json::sax_parse(text, &parser);
  Status st = parser.Finish(parsed);
  if (!st.ok()) return st;
  return f;
}

}  // namespace internal
}  // namespace fmte
