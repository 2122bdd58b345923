#include "client_decision.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "fmte/record.h"
#include "fmte/text.h"

#ifndef FMTE_VERSION
#define FMTE_VERSION "unknown"
#endif

namespace fmte::slurm {
namespace {

constexpr std::string_view kHeader = "fmte-decision 1";
constexpr size_t kMaxFieldBytes = 4096;  // the user's message; the record has kMaxRecordBytes
constexpr uintmax_t kMaxHashedFileBytes = uintmax_t{64} << 20;  // larger files: size only

// A file's bytes into `hash` (its name relative to its folder first); a missing file adds "-".
void AddFile(const std::filesystem::path& path, const std::string& name, StableHasher* hash) {
  hash->Add(name);
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return hash->Add("-");
  if (size > kMaxHashedFileBytes) return hash->Add("size " + std::to_string(size));
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  hash->Add(bytes);
}

// Every regular file under `dir` (recursively, or only its own files), in name order.
void AddTree(const std::string& dir, bool recursive, StableHasher* hash) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  const auto keep = [&](const fs::directory_entry& e) {
    std::error_code e2;
    if (e.is_regular_file(e2)) names.push_back(e.path().lexically_relative(dir).generic_string());
  };
  if (recursive) {
    // Linked folders are followed, as the model catalog's loader follows them (model_catalog.cc):
    // the files the estimate reads are the files hashed.
    for (auto it = fs::recursive_directory_iterator(
             dir, fs::directory_options::follow_directory_symlink, ec);
         !ec && it != fs::recursive_directory_iterator() && names.size() < 100000; it.increment(ec))
      keep(*it);
  } else {
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
      keep(*it);
  }
  std::sort(names.begin(), names.end());
  hash->Add(static_cast<int64_t>(names.size()));
  for (const std::string& n : names) AddFile(fs::path(dir) / n, n, hash);
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void Escaped(std::string_view v, std::string* out) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  for (const char c : v) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '%' || b < 0x20 || b == 0x7f) {
      out->push_back('%');
      out->push_back(kDigits[b >> 4]);
      out->push_back(kDigits[b & 15]);
    } else {
      out->push_back(c);
    }
  }
}

// The refusals, out of the decoding's way (job_submit decodes on a cold RPC thread of slurmctld,
// where every line of code it runs is a cache miss): "FMTE_DECISION: <what>".
[[gnu::cold, gnu::noinline]] Status Refused(std::string what) {
  return Status::InvalidArgument(std::string(kDecisionEnvName) + ": " + std::move(what));
}

[[gnu::cold, gnu::noinline]] Status NotAnInteger(std::string_view v, std::string_view field,
                                                 int64_t lo, int64_t hi) {
  return Refused(std::string(field) + ": expected an integer in [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + "], got '" + Shown(v) + "'");
}

// `v` as an integer in [lo, hi] into *out, or false.
bool ReadInt(std::string_view v, int64_t lo, int64_t hi, int64_t* out) {
  const auto r = std::from_chars(v.data(), v.data() + v.size(), *out);
  return !v.empty() && r.ec == std::errc() && r.ptr == v.data() + v.size() && *out >= lo &&
         *out <= hi;
}

// `v` with its % escapes decoded, into *out. Control characters are refused (tabs and newlines
// too unless `newlines`), so that no forged line reaches slurmctld's log. A value without escapes,
// the usual one, is checked and copied as a whole; only the string fields are decoded at all (the
// numbers are read from the text as it came), so a decision costs a few allocations, not two per
// field (job_submit decodes it on a cold RPC thread of slurmctld).
Status UnescapeInto(std::string_view v, std::string_view field, bool newlines, std::string* out) {
  out->clear();
  if (v.find('%') == std::string_view::npos) {
    out->assign(v);
  } else {
    out->reserve(v.size());
    for (size_t i = 0; i < v.size();) {
      const size_t pct = v.find('%', i);
      out->append(v.substr(i, pct == std::string_view::npos ? std::string_view::npos : pct - i));
      if (pct == std::string_view::npos) break;
      unsigned value = 0;
      const char* end = v.data() + std::min(pct + 3, v.size());
      const auto r = std::from_chars(v.data() + pct + 1, end, value, 16);
      if (pct + 2 >= v.size() || r.ec != std::errc() || r.ptr != end)
        return Refused(std::string(field) + ": a % escape needs two hex digits");
      out->push_back(static_cast<char>(value));
      i = pct + 3;
    }
  }
  for (const char c : *out) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 || b == 0x7f) && !(newlines && (b == '\n' || b == '\t')))
      return Refused(std::string(field) + ": control characters are not allowed");
  }
  return Status::Ok();
}

// The fields, one name per member: Encode writes them in this order, Decode needs each once.
enum Field {
  kFiles,
  kInputs,
  kLlm,
  kKind,
  kReason,
  kTouched,
  kAdviseOnly,
  kError,
  kEstimated,
  kTimeLimit,
  kGpus,
  kNodes,
  kGpuField,
  kGpuTres,
  kGpu,
  kPerGpuBytes,
  kUsableBytes,
  kModel,
  kSlurmGpus,
  kRecord,
  kMessage,
  kFieldCount
};
constexpr std::string_view kNames[kFieldCount] = {
    "files",       "inputs",   "llm",       "kind",           "reason",       "touched",
    "advise_only", "error",    "estimated", "time_limit_min", "new_gpus",     "new_min_nodes",
    "gpu_field",   "gpu_tres", "gpu",       "per_gpu_bytes",  "usable_bytes", "model",
    "slurm_gpus",  "record",   "message"};

}  // namespace

std::string FilesFingerprint(const std::string& config_path, const Config& config) {
  StableHasher hash;
  hash.Add(FMTE_VERSION);
  AddFile(config_path, "fmte.conf", &hash);
  AddTree(config.catalog_dir.empty() ? EtcDir() : config.catalog_dir, true, &hash);
  const std::string reg = config.regressors_dir.empty() ? RegressorsDir() : config.regressors_dir;
  AddTree(reg, false, &hash);
  AddTree(reg + "/vtrain", true, &hash);
  return Hex(hash.value());
}

std::string EncodeClientDecision(const ClientDecision& d) {
  const CachedDecision& c = d.decision;
  const Outcome& o = c.outcome;
  const std::string values[kFieldCount] = {d.files,
                                           Hex(d.inputs),
                                           c.is_llm_job ? "1" : "0",
                                           std::to_string(static_cast<int>(o.kind)),
                                           std::to_string(static_cast<int>(o.reject_reason)),
                                           o.touched ? "1" : "0",
                                           o.advise_only ? "1" : "0",
                                           o.error ? "1" : "0",
                                           o.estimated ? "1" : "0",
                                           std::to_string(o.new_time_limit_min),
                                           std::to_string(o.new_gpus),
                                           std::to_string(o.new_min_nodes),
                                           std::to_string(static_cast<int>(o.gpu_field)),
                                           o.new_gpu_tres,
                                           o.gpu,
                                           std::to_string(o.per_gpu_bytes),
                                           std::to_string(o.usable_bytes),
                                           c.model,
                                           std::to_string(c.slurm_gpus),
                                           c.record,
                                           o.user_message};
  std::string out(kHeader);
  out.push_back('\n');
  for (int f = 0; f < kFieldCount; ++f) {
    out.append(kNames[f]).push_back('=');
    Escaped(values[f], &out);
    out.push_back('\n');
  }
  return out;
}

Result<ClientDecision> DecodeClientDecision(std::string_view text) {
  if (text.size() > kMaxDecisionBytes)
    return Refused("longer than " + std::to_string(kMaxDecisionBytes) + " bytes");
  const size_t first = text.find('\n');
  if (text.substr(0, first) != kHeader)
    return Refused("expected the header '" + std::string(kHeader) + "'");
  std::string_view values[kFieldCount];  // as they came: decoded below, each where it goes
  bool seen[kFieldCount] = {};
  int next = 0;  // the field Encode writes next: looked at first
  for (size_t at = first; at != std::string_view::npos && at + 1 < text.size();) {
    const size_t end = text.find('\n', at + 1);
    const std::string_view line =
        text.substr(at + 1, end == std::string_view::npos ? std::string_view::npos : end - at - 1);
    at = end;
    const size_t eq = line.find('=');
    const std::string_view name = line.substr(0, eq);
    const auto* it = next < kFieldCount && kNames[next] == name
                         ? &kNames[next]
                         : std::find(std::begin(kNames), std::end(kNames), name);
    if (eq == std::string_view::npos || it == std::end(kNames))
      return Refused("unknown field '" + Shown(name) + "'");
    const auto f = static_cast<Field>(it - std::begin(kNames));
    next = f + 1;
    if (seen[f]) return Refused(std::string(name) + " given twice");
    seen[f] = true;
    values[f] = line.substr(eq + 1);
  }
  for (int f = 0; f < kFieldCount; ++f)
    if (!seen[f]) return Refused(std::string(kNames[f]) + " missing");

  ClientDecision d;
  CachedDecision& c = d.decision;
  Outcome& o = c.outcome;
  // The text fields, decoded into their places; each within its bound.
  const std::pair<Field, std::string*> texts[] = {
      {kFiles, &d.files}, {kGpuTres, &o.new_gpu_tres}, {kGpu, &o.gpu},
      {kModel, &c.model}, {kRecord, &c.record},        {kMessage, &o.user_message}};
  for (const auto& [f, out] : texts) {
    if (Status st = UnescapeInto(values[f], kNames[f], f == kMessage, out); !st.ok()) return st;
    const size_t bound = f == kRecord ? kMaxRecordBytes : kMaxFieldBytes;
    if (out->size() > bound)
      return Refused(std::string(kNames[f]) + ": longer than " + std::to_string(bound) + " bytes");
  }
  {
    const std::string_view h = values[kInputs];
    const auto r = std::from_chars(h.data(), h.data() + h.size(), d.inputs, 16);
    if (h.size() != 16 || r.ec != std::errc() || r.ptr != h.data() + h.size())
      return Refused("inputs: expected 16 hex digits");
  }
  // The numbers and flags, each in its range.
  int64_t kind = 0, reason = 0, field = 0;
  int64_t llm = 0, touched = 0, advise_only = 0, error = 0, estimated = 0;
  constexpr int64_t kBig = int64_t{1} << 62;
  const struct {
    Field f;
    int64_t lo, hi;
    int64_t* out;
  } numbers[] = {{kLlm, 0, 1, &llm},
                 {kKind, 0, static_cast<int64_t>(DecisionKind::kReject), &kind},
                 {kReason, 0, static_cast<int64_t>(RejectReason::kTimeLimit), &reason},
                 {kTouched, 0, 1, &touched},
                 {kAdviseOnly, 0, 1, &advise_only},
                 {kError, 0, 1, &error},
                 {kEstimated, 0, 1, &estimated},
                 {kTimeLimit, 0, kBig, &o.new_time_limit_min},
                 {kGpus, 0, 1 << 20, &o.new_gpus},
                 {kNodes, 0, 1 << 20, &o.new_min_nodes},
                 {kGpuField, 0, static_cast<int64_t>(GpuTresField::kPerSocket), &field},
                 {kPerGpuBytes, 0, kBig, &o.per_gpu_bytes},
                 {kUsableBytes, 0, kBig, &o.usable_bytes},
                 {kSlurmGpus, 0, 1 << 20, &c.slurm_gpus}};
  for (const auto& n : numbers) {
    if (values[n.f].size() > kMaxFieldBytes)  // zeros before a digit would read as a number
      return Refused(std::string(kNames[n.f]) + ": longer than " + std::to_string(kMaxFieldBytes) +
                     " bytes");
    if (!ReadInt(values[n.f], n.lo, n.hi, n.out))
      return NotAnInteger(values[n.f], kNames[n.f], n.lo, n.hi);
  }
  c.is_llm_job = llm == 1;
  o.touched = touched == 1;
  o.advise_only = advise_only == 1;
  o.error = error == 1;
  o.estimated = estimated == 1;
  o.kind = static_cast<DecisionKind>(kind);
  o.reject_reason = static_cast<RejectReason>(reason);
  o.gpu_field = static_cast<GpuTresField>(field);
  c.script_read = false;  // decided on the forwarded reading: the script is never read again
  if (!c.record.empty() && !std::string_view(c.record).starts_with(kRecordPrefix))
    return Refused("record: expected an fmte record ('" + std::string(kRecordPrefix) + "...')");
  return d;
}

}  // namespace fmte::slurm
