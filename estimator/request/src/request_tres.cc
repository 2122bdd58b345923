// GPU entries of Slurm's tres_per_* strings (docs/slurm.md §7.1): "gres:gpu:2",
// "gres:gpu:a100:2", comma-joined with other gres; the 23.02+ "gres/gpu:a100=2" spelling and a bare
// "gpu:2" are understood too.
#include <cctype>
#include <string>

#include "request_internal.h"

namespace fmte {
namespace {

constexpr int64_t kMaxTresGpus = 1 << 20;

struct Entry {
  std::string_view rest;  // after "gpu": "", ":2", ":a100:2", "=2", ":a100=2"
  bool is_gpu = false;
};

Entry Classify(std::string_view item) {
  Entry e;
  if (item.starts_with("gres:") || item.starts_with("gres/")) item.remove_prefix(5);
  if (!item.starts_with("gpu")) return e;
  item.remove_prefix(3);
  if (!item.empty() && item.front() != ':' && item.front() != '=') return e;  // "gpumem", ...
  e.is_gpu = true;
  e.rest = item;
  return e;
}

}  // namespace

Result<GpuTres> ParseGpuTres(std::string_view tres) {
  GpuTres out;
  if (tres.size() > 4096) return Status::InvalidArgument("tres: longer than 4096 bytes");
  std::string_view rest = tres;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const Entry e = Classify(item);
    if (!e.is_gpu) continue;
    std::string_view spec = e.rest;
    std::string type;
    std::string_view count_text = "1";
    if (!spec.empty() && spec.front() == '=') {
      count_text = spec.substr(1);
    } else if (!spec.empty()) {  // ":..."
      spec.remove_prefix(1);
      const size_t sep = spec.find_first_of(":=");
      if (sep == std::string_view::npos) {
        // ":2" or ":a100" (count 1)
        if (!spec.empty() && std::isdigit(static_cast<unsigned char>(spec.front())))
          count_text = spec;
        else
          type = std::string(spec);
      } else {
        type = std::string(spec.substr(0, sep));
        count_text = spec.substr(sep + 1);
      }
    }
    auto count = ParseBoundedInt(count_text, 0, kMaxTresGpus, "gpu count in '" + Shown(item) + "'");
    if (!count.ok()) return count.status();
    if (type.size() > 64)
      return Status::InvalidArgument("gpu type in '" + Shown(item) + "': too long");
    out.count += *count;
    if (out.type.empty()) out.type = type;
    if (out.count > kMaxTresGpus) return Status::InvalidArgument("gpu count: more than 2^20");
  }
  return out;
}

std::string ReplaceGpuCount(std::string_view tres, int64_t count) {
  std::string out;
  bool replaced = false;
  std::string_view rest = tres;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    const Entry e = Classify(item);
    std::string piece(item);
    if (e.is_gpu) {
      if (replaced) continue;  // one gpu entry in the result
      replaced = true;
      std::string type;
      std::string_view spec = e.rest;
      if (!spec.empty() && spec.front() == ':') {
        spec.remove_prefix(1);
        const size_t sep = spec.find_first_of(":=");
        const std::string_view first = spec.substr(0, sep);
        if (sep != std::string_view::npos ||
            (!first.empty() && !std::isdigit(static_cast<unsigned char>(first.front()))))
          type = std::string(first);
      }
      piece = "gres:gpu:" + (type.empty() ? "" : type + ":") + std::to_string(count);
    }
    if (!out.empty()) out += ',';
    out += piece;
  }
  if (!replaced) {
    if (!out.empty()) out += ',';
    out += "gres:gpu:" + std::to_string(count);
  }
  return out;
}

std::string_view ToString(GpuTresField f) {
  switch (f) {
    case GpuTresField::kNone:
      return "none";
    case GpuTresField::kPerNode:
      return "tres_per_node";
    case GpuTresField::kPerJob:
      return "tres_per_job";
    case GpuTresField::kPerTask:
      return "tres_per_task";
    case GpuTresField::kPerSocket:
      return "tres_per_socket";
  }
  return "?";
}

}  // namespace fmte
