// fmte-advise serve: the estimator, the layout search and the admission check as a local web page
// (cpp-httplib), over the JSON API of serve_api.h. Every asset is compiled into the tool
// (tools/advise/web/, embedded by CMake): no CDN, nothing to install beside the binary.
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "commands.h"
#include "job_options.h"
#include "serve_api.h"
#include "web_assets.h"

namespace fmte::advise {
namespace {

constexpr std::string_view kSummary =
    "Serves fmte's web calculator on this machine: estimate a job (memory breakdown against the\n"
    "GPU, heaviest rank, step and wall time), guide (recommended layouts for a GPU budget), check\n"
    "a batch script as the Slurm plugin would, and compare saved plans. The page and its JSON API\n"
    "(GET /api/models, POST /api/estimate, /api/recommend, /api/check: bodies are objects of the\n"
    "commands' flag names without the leading dashes) are the same code as --json. Binds to\n"
    "loopback unless --bind says otherwise. Example:\n"
    "  fmte-advise serve --port 8080     then open http://127.0.0.1:8080/";

int Fail(const Status& s) { return cli::ReportError("fmte-advise", s); }

bool IsLoopback(const std::string& addr) {
  return addr == "localhost" || addr == "::1" || addr.starts_with("127.");
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  desc.add_options()("port", po::value<std::string>()->default_value("8080"),
                     "TCP port (0: any free port; the URL printed says which)")(
      "bind", po::value<std::string>()->default_value("127.0.0.1"),
      "address to listen on (loopback by default; the API reads pasted scripts and the "
      "catalogs, so expose it only to people you trust)")(
      "config", po::value<std::string>(),
      "fmte.conf for the check page (as fmte-advise check --config)")(
      "max-body", po::value<std::string>()->default_value("1048576"),
      "largest request body in bytes");
  desc.add_options()("help,h", "show this help and exit");
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("serve", kSummary, desc);
    return cli::kExitOk;
  }
  auto port = tools::ParseInt(tools::FlagString(vm, "port"), "--port", 0, 65535);
  if (!port.ok()) return Fail(port.status());
  auto max_body = tools::ParseInt(tools::FlagString(vm, "max-body"), "--max-body", 1024, 64 << 20);
  if (!max_body.ok()) return Fail(max_body.status());
  const std::string bind = tools::FlagString(vm, "bind");

  ApiSettings settings;
  settings.config = tools::FlagString(vm, "config");
  settings.max_body = static_cast<size_t>(*max_body);

  httplib::Server server;
  server.set_payload_max_length(settings.max_body);
  server.set_read_timeout(10, 0);
  server.set_write_timeout(10, 0);
  server.set_keep_alive_max_count(100);

  const auto api = [&settings](const httplib::Request& req, httplib::Response& res) {
    const ApiReply reply = HandleApi(req.method, req.path, req.body, settings);
    res.status = reply.http_status;
    res.set_content(reply.body, "application/json");
    res.set_header("Cache-Control", "no-store");
    char line[160];
    std::snprintf(line, sizeof line, "fmte-advise: %s %s %d %.1f ms\n", req.method.c_str(),
                  req.path.c_str(), reply.http_status, reply.command_ms);
    std::cerr << line << std::flush;
  };
  server.Get(R"(/api/.*)", api);
  server.Post(R"(/api/.*)", api);
  server.Get(R"(/.*)", [](const httplib::Request& req, httplib::Response& res) {
    const std::string path = req.path == "/" ? "/index.html" : req.path;
    const WebAsset* asset = FindWebAsset(path);
    if (asset == nullptr) {
      res.status = 404;
      res.set_content("not found: " + req.path + "\n", "text/plain");
      return;
    }
    res.set_content(std::string(asset->content), std::string(asset->mime));
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; style-src 'self'; img-src 'self' data:");
  });

  int bound = -1;
  if (*port == 0) {
    bound = server.bind_to_any_port(bind);
  } else if (server.bind_to_port(bind, static_cast<int>(*port))) {
    bound = static_cast<int>(*port);
  }
  if (bound <= 0)
    return Fail(Status::IoError("--bind/--port: cannot listen on " + bind + ":" +
                                std::to_string(*port) + " (in use, or not an address here)"));
  if (!IsLoopback(bind))
    cli::Err() << "fmte-advise: warning: --bind " << bind
               << " is not loopback: anyone who can reach it can use the calculator\n";
  const std::string host = bind.find(':') != std::string::npos ? "[" + bind + "]" : bind;
  cli::Out() << "fmte-advise: serving http://" << host << ":" << bound << "/ (Ctrl-C stops)"
             << std::endl;
  if (!server.listen_after_bind())
    return Fail(Status::IoError("the server stopped: " + bind + ":" + std::to_string(bound)));
  return cli::kExitOk;
}

}  // namespace fmte::advise
