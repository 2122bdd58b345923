// Princeton jobstats summaries in AdminComment: "JS1:" + base64(gzip(JSON)), JSON of the form
// {"gpus":N,"nodes":{"<host>":{"gpu_used_memory":{"<index>":bytes,...},"gpu_total_memory":...}}}
// (PrincetonUniversity/jobstats; the same decoding as reportseff's get_stats_dict: the special
// values "JS1:Short" and "JS1:None" carry no data).
#include <zlib.h>

#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "fmte/learn/sacct.h"

namespace fmte::learn {
namespace {

constexpr std::string_view kJs1 = "JS1:";

Result<std::string> Base64Decode(std::string_view in) {
  static const std::array<int8_t, 256> kTable = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    const std::string_view chars =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < chars.size(); ++i)
      t[static_cast<uint8_t>(chars[i])] = static_cast<int8_t>(i);
    return t;
  }();
  std::string out;
  out.reserve(in.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (const char c : in) {
    if (c == '=') break;
    const int8_t v = kTable[static_cast<uint8_t>(c)];
    if (v < 0)
      return Status::ParseError(std::string("jobstats JS1: invalid base64 character '") + c + "'");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

Result<std::string> Gunzip(const std::string& in) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    return Status::Internal("zlib inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  std::array<char, 16384> buf;
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf.data(), buf.size() - zs.avail_out);
    if (out.size() > (16u << 20)) rc = Z_MEM_ERROR;  // a summary is a few hundred bytes
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    return Status::ParseError("jobstats JS1: not valid gzip data (zlib: " + std::to_string(rc) +
                              ")");
  }
  return out;
}

}  // namespace

Result<int64_t> JobstatsGpuPeakBytes(std::string_view admin_comment) {
  const size_t at = admin_comment.find(kJs1);
  if (at == std::string_view::npos) return Status::NotFound("no JS1: jobstats record");
  std::string_view blob = admin_comment.substr(at + kJs1.size());
  size_t end = 0;
  while (end < blob.size() && blob[end] != ' ' && blob[end] != ',' && blob[end] != '|' &&
         blob[end] != ';') {
    ++end;
  }
  blob = blob.substr(0, end);
  if (blob == "Short" || blob == "None" || blob.empty()) return kUnknownValue;
  Result<std::string> raw = Base64Decode(blob);
  if (!raw.ok()) return raw.status();
  Result<std::string> text = Gunzip(*raw);
  if (!text.ok()) return text.status();
  try {
    const nlohmann::json j = nlohmann::json::parse(*text);
    if (!j.is_object() || !j.contains("nodes") || !j["nodes"].is_object()) {
      return Status::ParseError("jobstats JS1: JSON has no 'nodes' object");
    }
    int64_t peak = kUnknownValue;
    for (const auto& [host, node] : j["nodes"].items()) {
      if (!node.is_object() || !node.contains("gpu_used_memory")) continue;
      const auto& used = node["gpu_used_memory"];
      if (!used.is_object()) {
        return Status::ParseError("jobstats JS1: nodes." + host +
                                  ".gpu_used_memory is not an object");
      }
      for (const auto& [gpu, bytes] : used.items()) {
        // Bounded before the conversion (a value beyond int64_t would be undefined behaviour):
        // no GPU has an exabyte.
        if (!bytes.is_number() || bytes.get<double>() < 0 || bytes.get<double>() > 1e18) {
          return Status::ParseError("jobstats JS1: nodes." + host + ".gpu_used_memory." + gpu +
                                    ": expected bytes");
        }
        peak = std::max(peak, static_cast<int64_t>(bytes.get<double>()));
      }
    }
    return peak;
  } catch (const nlohmann::json::exception& e) {
    return Status::ParseError(std::string("jobstats JS1: bad JSON: ") + e.what());
  }
}

}  // namespace fmte::learn
