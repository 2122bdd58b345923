// DiskFiles and the config parsers (fmte/script_files.h).
#include "fmte/script_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <toml++/toml.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "files_internal.h"
#include "fmte/file.h"
#include "fmte/text.h"

namespace fmte {
namespace {

using nlohmann::json;

// Deepest bracket nesting of a flow-style text ({[ ... ]}) and indentation in a rough count: a
// parser recursing per level must not be handed a stack-deep input.
bool TooDeep(std::string_view text) {
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '{') {
      if (++depth > kMaxConfigDepth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

// A YAML plain scalar as JSON the way YAML 1.2's core schema reads it (yaml-cpp keeps text).
json YamlScalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  int64_t i = 0;
  const char* end = s.data() + s.size();
  if (auto r = std::from_chars(s.data() + (s[0] == '+' ? 1 : 0), end, i);
      r.ec == std::errc() && r.ptr == end)
    return i;
  char* e = nullptr;
  errno = 0;
  const double d = std::strtod(s.c_str(), &e);
  if (e == end && errno == 0 && s.find_first_of("0123456789") != std::string::npos &&
      s.find_first_not_of("0123456789+-.eE_") == std::string::npos)
    return d;
  return s;
}

json FromYaml(const YAML::Node& n, int depth) {
  if (depth > kMaxConfigDepth) throw std::runtime_error("nested deeper than 64 levels");
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return YamlScalar(n);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const YAML::Node& e : n) a.push_back(FromYaml(e, depth + 1));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) continue;  // complex keys: not a config of any trainer
        o[kv.first.Scalar()] = FromYaml(kv.second, depth + 1);
      }
      return o;
    }
    default:
      return nullptr;
  }
}

json FromToml(const toml::node& n, int depth) {
  if (depth > kMaxConfigDepth) throw std::runtime_error("nested deeper than 64 levels");
  if (const toml::table* t = n.as_table()) {
    json o = json::object();
    for (const auto& [k, v] : *t) o[std::string(k.str())] = FromToml(v, depth + 1);
    return o;
  }
  if (const toml::array* a = n.as_array()) {
    json out = json::array();
    for (const toml::node& e : *a) out.push_back(FromToml(e, depth + 1));
    return out;
  }
  // Each value as its own type: node::value<T>() converts between types first (a float too large
  // for int64_t was undefined behaviour there; found by fuzz_config_toml).
  if (const auto* v = n.as_integer()) return v->get();
  if (const auto* v = n.as_floating_point()) return v->get();
  if (const auto* v = n.as_boolean()) return v->get();
  if (const auto* v = n.as_string()) return v->get();
  return nullptr;  // dates and times: no trainer setting fmte reads
}

}  // namespace

Result<json> ParseConfigText(std::string_view path, std::string_view text,
                             std::string_view syntax) {
  std::string kind(syntax);
  if (kind.empty()) {
    const std::string p = Lower(path);
    kind = p.ends_with(".json") ? "json" : p.ends_with(".toml") ? "toml" : "yaml";
  }
  if (TooDeep(text))
    return FileParseError(
        path, 0, "nested deeper than " + std::to_string(kMaxConfigDepth) + " levels; not read");
  if (kind == "json") {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
    if (j.is_discarded()) return FileParseError(path, 0, "not valid JSON");
    return j;
  }
  try {
    if (kind == "toml") {
      const toml::table t = toml::parse(text, path);
      return FromToml(t, 0);
    }
    return FromYaml(YAML::Load(std::string(text)), 0);
  } catch (const toml::parse_error& e) {
    return FileParseError(path, static_cast<long>(e.source().begin.line),
                          std::string("not valid TOML: ") + std::string(e.description()));
  } catch (const YAML::Exception& e) {
    return FileParseError(path, e.mark.is_null() ? 0 : e.mark.line + 1, "not valid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return FileParseError(path, 0, std::string("cannot read the ") + kind + ": " + e.what());
  }
}

std::string DiskFiles::Resolve(std::string_view path) const {
  if (path.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "") + std::string(path.substr(1));
  }
  if (path.starts_with("/") || dir_.empty()) return std::string(path);
  return dir_ + "/" + std::string(path);
}

Result<std::string> DiskFiles::ReadText(std::string_view path) const {
  if (path.empty() || path.find('\0') != std::string_view::npos)
    return Status::InvalidArgument("'" + Shown(path) + "': not a file name");
  if (files_ >= kMaxScriptFiles)
    return Status::IoError(std::string(path) + ": not read (more than " +
                           std::to_string(kMaxScriptFiles) + " files for one script)");
  const std::string full = Resolve(path);
  // O_NONBLOCK: a FIFO named by the script must not stall the submission.
  int fd = ::open(full.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && errno == ENOENT && path.starts_with('/') && !dir_.empty()) {
    // A script written for the cluster it ran on names its repository by an absolute path
    // (`apptainer exec --pwd /scratch/u/LLaMA-Factory ...
    // /scratch/u/LLaMA-Factory/examples/a.yaml`) that is elsewhere here: the same trailing folders
    // and file below the submission directory, longest first, at least a folder and a file.
    size_t cut = 0, tries = 0;
    while (fd < 0 && tries++ < 16 && (cut = path.find('/', cut + 1)) != std::string_view::npos) {
      const std::string_view tail = path.substr(cut + 1);
      if (tail.find('/') == std::string_view::npos) break;
      fd = ::open((dir_ + "/" + std::string(tail)).c_str(),
                  O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    }
    if (fd < 0) errno = ENOENT;
  }
  if (fd < 0) return CannotRead(std::string(path), "the file");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(std::string(path) + ": not a regular file; not read");
  }
  if (static_cast<size_t>(st.st_size) > kMaxScriptFileBytes ||
      bytes_ + static_cast<size_t>(st.st_size) > kMaxScriptFilesBytes) {
    ::close(fd);
    return Status::IoError(std::string(path) + ": larger than " +
                           std::to_string(kMaxScriptFileBytes) + " bytes; not read");
  }
  std::string text = internal::ReadAndClose(fd, static_cast<size_t>(st.st_size));
  ++files_;
  bytes_ += text.size();
  return text;
}

namespace internal {

std::string ReadAndClose(int fd, size_t max_bytes) {
  std::string text(max_bytes, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

}  // namespace internal

Result<json> DiskFiles::ParseConfig(std::string_view path, std::string_view text,
                                    std::string_view syntax) const {
  return ParseConfigText(path, text, syntax);
}

Result<LauncherTable> LoadLauncherTable(const std::string& etc_dir) {
  const std::string path = (etc_dir.empty() ? EtcDir() : etc_dir) + "/launchers.json";
  Result<std::string> text = ReadFile(path, "the launcher table", kMaxScriptFileBytes);
  if (!text.ok()) return text.status();
  return ParseLauncherTable(*text, path);
}

}  // namespace fmte
