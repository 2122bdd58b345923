#include "serve_api.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.h"
#include "commands.h"

namespace fmte::advise {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxFiles = 64;
constexpr size_t kMaxArgs = 64;

json Error(std::string_view message) {
  json j = {{"error", message}};
  // "--micro-batch: expected ..." names the field: the page marks it.
  if (message.starts_with("--")) {
    const size_t end = message.find_first_of(": ");
    j["field"] = std::string(message.substr(2, end == std::string_view::npos ? end : end - 2));
  }
  return j;
}

ApiReply Reply(int status, const json& j) { return {status, j.dump(2) + "\n", 0}; }

bool Contains(const std::vector<std::string_view>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

Result<std::string> ScalarText(const json& v, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned() || v.is_number_float()) return v.dump();
  return Status::InvalidArgument(key + ": expected a string, number or boolean, got " +
                                 std::string(v.type_name()));
}

Result<json> ParseObject(std::string_view body) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Status::InvalidArgument("request body: expected a JSON object, got invalid JSON");
  if (!doc.is_object())
    return Status::InvalidArgument(
        "request body: expected a JSON object of flag names without the leading dashes "
        "({\"model\": \"meta-llama/Llama-3.1-8B\", \"micro-batch\": 4}), got " +
        std::string(doc.type_name()));
  return doc;
}

// Runs one command as `fmte-advise ARGS...` would (ARGS hold --json), one command at a time.
ApiReply RunCommand(cli::CommandFn run, std::vector<std::string> args) {
  static std::mutex mu;
  std::ostringstream out, err;
  int rc = cli::kExitFailure;
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu);
    cli::ScopedOutput scoped(out, err);
    try {
      rc = run(args);
    } catch (const std::exception& e) {
      err << "fmte-advise: error: " << e.what() << "\n";
      rc = cli::kExitFailure;
    }
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ApiReply reply;
  reply.command_ms = ms;
  // 0: done; 3: check's rejection (a decision, not a failure).
  if (rc == cli::kExitOk || rc == 3) {
    reply.http_status = 200;
    reply.body = out.str();
    return reply;
  }
  // The first error line, without the tool's prefix.
  std::string message = err.str();
  constexpr std::string_view kPrefix = "fmte-advise: error: ";
  if (const size_t at = message.find(kPrefix); at != std::string::npos)
    message.erase(0, at + kPrefix.size());
  if (const size_t nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
  if (message.empty())
    message = "the command failed without a message (exit code " + std::to_string(rc) + ")";
  reply = Reply(rc == cli::kExitUsage ? 400 : 500, Error(message));
  reply.command_ms = ms;
  return reply;
}

// A scratch folder for one check request, removed when it goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& parent) {
    std::string base = parent;
    if (base.empty()) {
      const char* tmp = getenv("TMPDIR");
      base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    std::string templ = base + "/fmte-serve-XXXXXX";
    if (mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A pasted file's name: relative, inside the scratch folder.
Status CheckRelativePath(const std::string& name) {
  const fs::path p(name);
  if (name.empty() || p.is_absolute())
    return Status::InvalidArgument("files: expected relative paths, got '" + name + "'");
  for (const fs::path& part : p)
    if (part == "..")
      return Status::InvalidArgument("files: '..' is not allowed in a path, got '" + name + "'");
  return Status::Ok();
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream f(path, std::ios::binary);
  f << text;
  return f.good() ? Status::Ok() : Status::IoError("cannot write " + path.string());
}

ApiReply Check(std::string_view body, const ApiSettings& settings) {
  auto doc = ParseObject(body);
  if (!doc.ok()) return Reply(400, Error(doc.status().message()));
  const auto script = doc->find("script");
  if (script == doc->end() || !script->is_string() || script->get<std::string>().empty())
    return Reply(400, Error("script: required, the batch script's text"));
  auto flags = FlagsFromBody(body, {"config", "regressors", "chdir", "D", "json", "help", "h"},
                             {"script", "files", "args"});
  if (!flags.ok()) return Reply(400, Error(flags.status().message()));

  ScratchDir dir(settings.scratch);
  if (dir.path().empty()) return Reply(500, Error("cannot create a scratch folder"));
  if (const auto files = doc->find("files"); files != doc->end()) {
    if (!files->is_object())
      return Reply(400, Error("files: expected an object of file name -> text"));
    if (files->size() > kMaxFiles)
      return Reply(400, Error("files: at most " + std::to_string(kMaxFiles) + " files"));
    for (const auto& [name, text] : files->items()) {
      if (Status s = CheckRelativePath(name); !s.ok()) return Reply(400, Error(s.message()));
      if (!text.is_string())
        return Reply(400, Error("files: '" + name + "': expected the file's text"));
      if (Status s = WriteText(fs::path(dir.path()) / name, text.get<std::string>()); !s.ok())
        return Reply(500, Error(s.message()));
    }
  }
  const std::string script_path = dir.path() + "/job.sbatch";
  if (Status s = WriteText(script_path, script->get<std::string>()); !s.ok())
    return Reply(500, Error(s.message()));

  std::vector<std::string> args = *flags;
  args.insert(args.begin(), "check");
  if (!settings.config.empty()) args.insert(args.begin() + 1, "--config=" + settings.config);
  args.insert(args.begin() + 1, "--chdir=" + dir.path());
  args.push_back("--json");  // before SCRIPT: what follows it are the script's arguments
  args.push_back(script_path);
  if (const auto a = doc->find("args"); a != doc->end()) {
    if (!a->is_array() || a->size() > kMaxArgs)
      return Reply(400, Error("args: expected an array of at most 64 script arguments"));
    for (const json& v : *a) {
      auto text = ScalarText(v, "args");
      if (!text.ok()) return Reply(400, Error(text.status().message()));
      args.push_back(*text);
    }
  }
  return RunCommand(RunCheck, std::move(args));
}

}  // namespace

Result<std::vector<std::string>> FlagsFromBody(std::string_view body,
                                               const std::vector<std::string_view>& denied,
                                               const std::vector<std::string_view>& extra_keys) {
  auto doc = ParseObject(body);
  if (!doc.ok()) return doc.status();
  std::vector<std::string> flags;
  for (const auto& [key, value] : doc->items()) {
    if (Contains(extra_keys, key)) continue;
    if (Contains(denied, key) || key == "json" || key == "help")
      return Status::InvalidArgument(
          key + ": not accepted by the API (it names a file on the server or an output form)");
    if (key.empty() || key.starts_with("-") || key.size() > 64)
      return Status::InvalidArgument(
          "request body: expected flag names without the leading "
          "dashes as keys, got '" +
          key + "'");
    const std::string flag = "--" + key;
    if (value.is_null()) continue;
    if (value.is_boolean()) {
      if (value.get<bool>()) flags.push_back(flag);
      continue;
    }
    if (value.is_array()) {
      for (const json& v : value) {
        auto text = ScalarText(v, key);
        if (!text.ok()) return text.status();
        flags.push_back(flag + "=" + *text);
      }
      continue;
    }
    auto text = ScalarText(value, key);
    if (!text.ok()) return text.status();
    flags.push_back(flag + "=" + *text);
  }
  return flags;
}

ApiReply HandleApi(std::string_view method, std::string_view path, std::string_view body,
                   const ApiSettings& settings) {
  if (body.size() > settings.max_body)
    return Reply(400,
                 Error("request body: at most " + std::to_string(settings.max_body) + " bytes"));
  const bool get = method == "GET";
  if (path == "/api/models") {
    if (!get) return Reply(405, Error("/api/models: use GET"));
    return RunCommand(RunModels, {"models", "--json"});
  }
  constexpr std::string_view kFileFlags[] = {"regressors", "contract", "report"};
  const std::vector<std::string_view> denied(std::begin(kFileFlags), std::end(kFileFlags));
  if (path == "/api/estimate" || path == "/api/recommend") {
    if (method != "POST") return Reply(405, Error(std::string(path) + ": use POST"));
    const bool estimate = path == "/api/estimate";
    std::vector<std::string_view> deny = denied;
    if (!estimate) deny.insert(deny.end(), {"overrides", "timeline"});
    auto flags = FlagsFromBody(body, deny, {"overrides", "timeline"});
    if (!flags.ok()) return Reply(400, Error(flags.status().message()));
    flags->insert(flags->begin(), estimate ? "estimate" : "recommend");
    flags->push_back("--json");
    // "overrides": the figures object itself (custom mode), handed to --overrides as a file.
    ScratchDir dir(settings.scratch);
    if (estimate) {
      auto doc = ParseObject(body);
      if (const auto o = doc->find("overrides"); o != doc->end() && !o->is_null()) {
        if (!o->is_object())
          return Reply(400, Error("overrides: expected an object {\"gpu\": {...}, \"cluster\": "
                                  "{...}}"));
        if (dir.path().empty()) return Reply(500, Error("cannot create a scratch folder"));
        const std::string file = dir.path() + "/overrides.json";
        if (Status s = WriteText(file, o->dump()); !s.ok()) return Reply(500, Error(s.message()));
        flags->push_back("--overrides=" + file);
      }
      // "timeline": true adds the step timeline (--timeline's SVG) as "timeline_svg".
      if (const auto t = doc->find("timeline"); t != doc->end() && !t->is_null()) {
        if (!t->is_boolean())
          return Reply(400, Error("timeline: expected true or false (the SVG is returned as "
                                  "timeline_svg)"));
        if (t->get<bool>()) {
          if (dir.path().empty()) return Reply(500, Error("cannot create a scratch folder"));
          const std::string svg = dir.path() + "/timeline.svg";
          flags->push_back("--timeline=" + svg);
          ApiReply reply = RunCommand(RunEstimate, std::move(*flags));
          if (reply.http_status != 200) return reply;
          json answer = json::parse(reply.body, nullptr, false);
          std::ifstream in(svg);
          answer["timeline_svg"] =
              std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
          reply.body = answer.dump(2) + "\n";
          return reply;
        }
      }
    }
    return RunCommand(estimate ? RunEstimate : RunRecommend, std::move(*flags));
  }
  if (path == "/api/check") {
    if (method != "POST") return Reply(405, Error("/api/check: use POST"));
    return Check(body, settings);
  }
  return Reply(404, Error("no such endpoint: " + std::string(path) +
                          " (GET /api/models; POST /api/estimate, /api/recommend, /api/check)"));
}

}  // namespace fmte::advise
