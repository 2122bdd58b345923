// The JSON API of `fmte-advise serve`, without the HTTP server: each endpoint turns a request
// body (a JSON object whose keys are the command's flag names without the leading dashes) into
// the command's own flags, runs the command with --json and answers what it printed. So the API
// and `fmte-advise <command> --json` are one piece of code (docs/advise.md, "serve").
// Thread-safety: Handle() may be called from several threads; commands run one at a time.
#ifndef FMTE_TOOLS_ADVISE_SERVE_API_H_
#define FMTE_TOOLS_ADVISE_SERVE_API_H_

#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte::advise {

struct ApiReply {
  int http_status = 200;  // 200, 400 (the request was wrong), 404, 500 (the tool failed)
  std::string body;       // JSON: the command's --json output, or {"error": "..."}
  double command_ms = 0;  // time spent in the command
};

struct ApiSettings {
  std::string config;   // --config for check (fmte.conf; "" = as check finds it)
  std::string scratch;  // where check's pasted scripts and files are written (a temp folder)
  size_t max_body = 1 << 20;
};

// `method` "GET"/"POST"; `path` "/api/models", "/api/estimate", "/api/recommend", "/api/check".
ApiReply HandleApi(std::string_view method, std::string_view path, std::string_view body,
                   const ApiSettings& settings);

// The flags of a command built from a request body: {"micro-batch": 4, "compile": true,
// "model": "x"} -> --micro-batch=4 --compile --model=x. Strings, numbers and booleans (true: the
// flag alone; false: left out) and arrays of them (the flag repeated); keys naming files on the
// server (`denied`) are refused with an error naming the key.
Result<std::vector<std::string>> FlagsFromBody(std::string_view body,
                                               const std::vector<std::string_view>& denied,
                                               const std::vector<std::string_view>& extra_keys);

}  // namespace fmte::advise

#endif  // FMTE_TOOLS_ADVISE_SERVE_API_H_
