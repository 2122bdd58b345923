// End-to-end: `fmte-advise serve` started as a user starts it (port 0: any free port), asked over
// HTTP with cpp-httplib's client. The API's answers must be exactly what the same command prints
// with --json, and bad requests must get an error naming the field.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "run_tool.h"

namespace fmte {
namespace {

using nlohmann::json;
using testing::RunAdvise;

// One server for the whole suite.
class ServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      const std::string bin = testing::AdviseBinary();
      execl(bin.c_str(), bin.c_str(), "serve", "--port", "0", "--config", "none",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    // The first line says where it listens: "fmte-advise: serving http://127.0.0.1:PORT/ ...".
    FILE* f = fdopen(out[0], "r");
    char line[256] = {0};
    ASSERT_NE(fgets(line, sizeof line, f), nullptr) << "serve printed nothing";
    const std::string text = line;
    constexpr std::string_view kUrl = "http://127.0.0.1:";
    const size_t at = text.find(kUrl);
    ASSERT_NE(at, std::string::npos) << text;
    port_ = std::atoi(text.c_str() + at + kUrl.size());
    ASSERT_GT(port_, 0) << text;
    out_ = f;
  }
  static void TearDownTestSuite() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ != nullptr) fclose(out_);
  }
  static httplib::Result Post(const std::string& path, const std::string& body) {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c.Post(path.c_str(), body, "application/json");
  }
  static httplib::Result Get(const std::string& path) {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c.Get(path.c_str());
  }

  static inline pid_t pid_ = -1;
  static inline int port_ = 0;
  static inline FILE* out_ = nullptr;
};

// The API is the command's --json: the same document for the same flags.
TEST_F(ServeTest, EstimateAnswersWhatTheCommandPrints) {
  auto res = Post("/api/estimate",
                  R"({"model": "meta-llama/Llama-3.1-8B", "method": "lora", "micro-batch": 4,
                      "seq-len": 4096, "gpu": "H100-SXM", "activation-checkpointing": "full",
                      "tokens": "1e8", "compile": true, "sp": false})");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  const auto cli =
      RunAdvise({"estimate", "--model", "meta-llama/Llama-3.1-8B", "--method", "lora",
                 "--micro-batch", "4", "--seq-len", "4096", "--gpu", "H100-SXM",
                 "--activation-checkpointing", "full", "--tokens", "1e8", "--compile", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(json::parse(res->body), json::parse(cli.out));
  EXPECT_TRUE(json::parse(res->body)["job"]["compile"].get<bool>());
}

// Custom mode: "overrides" is the figures object itself; the answer is estimate --overrides FILE's.
TEST_F(ServeTest, OverridesAreTheFiguresOfEstimateJson) {
  auto res = Post("/api/estimate", R"({"model": "meta-llama/Llama-3.1-8B", "gpus": 16,
      "sharding": "fsdp-full", "tokens": "1e9",
      "overrides": {"cluster": {"inter_node_gbps": 25}, "gpu": {"hbm_gbps": 2000}}})");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  char path[] = "/tmp/fmte_overrides_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string file = R"({"cluster": {"inter_node_gbps": 25}, "gpu": {"hbm_gbps": 2000}})";
  ASSERT_EQ(write(fd, file.data(), file.size()), static_cast<ssize_t>(file.size()));
  close(fd);
  const auto cli =
      RunAdvise({"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpus", "16", "--sharding",
                 "fsdp-full", "--tokens", "1e9", "--overrides", path, "--json"});
  std::remove(path);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const json api = json::parse(res->body);
  EXPECT_EQ(api, json::parse(cli.out));
  EXPECT_EQ(api["figures"]["cluster"]["inter_node_gbps"], 25.0);
  EXPECT_EQ(api["figures"]["gpu"]["hbm_gbps"], 2000.0);
  // A slower network makes the 2-node FSDP step slower than with the catalog's 200 Gb/s.
  auto plain = Post("/api/estimate", R"({"model": "meta-llama/Llama-3.1-8B", "gpus": 16,
      "sharding": "fsdp-full", "tokens": "1e9"})");
  ASSERT_TRUE(plain);
  EXPECT_GT(api["time"]["step_time_s"].get<double>(),
            json::parse(plain->body)["time"]["step_time_s"].get<double>());
  auto bad = Post("/api/estimate", R"({"model": "meta-llama/Llama-3.1-8B",
      "overrides": {"gpu": {"hbm": 1}}})");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("gpu.hbm: unknown figure"), std::string::npos) << bad->body;
  auto recommend = Post("/api/recommend", R"({"model": "x", "overrides": {}})");
  ASSERT_TRUE(recommend);
  EXPECT_EQ(recommend->status, 400);
}

// "timeline": true adds --timeline's SVG as timeline_svg; the rest is still the command's --json.
TEST_F(ServeTest, TimelineComesAsSvgBesideTheJson) {
  auto res = Post("/api/estimate", R"({"model": "meta-llama/Llama-3.1-8B", "gpus": 8, "pp": 2,
      "grad-accum": 4, "timeline": true})");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json api = json::parse(res->body);
  const std::string svg = api["timeline_svg"].get<std::string>();
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("stage 1"), std::string::npos);  // two pipeline stages drawn
  api.erase("timeline_svg");
  const auto cli = RunAdvise({"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpus", "8",
                              "--pp", "2", "--grad-accum", "4", "--json"});
  EXPECT_EQ(api, json::parse(cli.out));
  auto bad = Post("/api/estimate", R"({"model": "meta-llama/Llama-3.1-8B", "timeline": "/tmp/x"})");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
}

TEST_F(ServeTest, ModelsListTheCatalog) {
  auto res = Get("/api/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const auto cli = RunAdvise({"models", "--json"});
  EXPECT_EQ(json::parse(res->body), json::parse(cli.out));
  // Llama-3.1-8B: 8,030,261,248 parameters (Meta's model card, 8.03B;
  // tests/estimator/model_test.cc).
  int64_t params = 0;
  const json doc = json::parse(res->body);
  for (const json& m : doc["models"])
    if (m["id"] == "meta-llama/Llama-3.1-8B") params = m["params"].get<int64_t>();
  EXPECT_EQ(params, 8030261248);
}

TEST_F(ServeTest, RecommendAnswersWhatTheCommandPrints) {
  auto res = Post("/api/recommend", R"({"model": "meta-llama/Llama-3.1-8B", "gpus": "8",
                                        "global-batch": 64, "gpu": "H100-SXM", "top": 3})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  const auto cli = RunAdvise({"recommend", "--model", "meta-llama/Llama-3.1-8B", "--gpus", "8",
                              "--global-batch", "64", "--gpu", "H100-SXM", "--top", "3", "--json"});
  // Everything but the search's own duration.
  json api = json::parse(res->body), printed = json::parse(cli.out);
  api.erase("search_ms");
  printed.erase("search_ms");
  EXPECT_EQ(api, printed);
}

// Bad input: 400 with the command's own message, the field named for the page to mark.
TEST_F(ServeTest, BadRequestsNameTheField) {
  struct Case {
    const char* path;
    const char* body;
    const char* message;  // a part of the error
    const char* field;    // "" when none
  };
  const Case kCases[] = {
      {"/api/estimate", R"({"model": "meta-llama/Llama-3.1-8B", "micro-batch": "x"})",
       "--micro-batch: expected an integer", "micro-batch"},
      {"/api/estimate", R"({"model": "no/such-model"})", "unknown model 'no/such-model'", ""},
      {"/api/estimate", R"({"model": "meta-llama/Llama-3.1-8B", "warp-drive": 9})", "warp-drive",
       ""},
      {"/api/estimate", "[1, 2]", "expected a JSON object", ""},
      {"/api/estimate", "{not json", "invalid JSON", ""},
      {"/api/estimate", R"({"model": {"id": 1}})", "model: expected a string, number or boolean",
       ""},
      {"/api/estimate", R"({"model": "x", "report": "/tmp/x.html"})", "report: not accepted", ""},
      {"/api/recommend", R"({"model": "meta-llama/Llama-3.1-8B", "regressors": "/"})",
       "regressors: not accepted", ""},
      {"/api/check", R"({"partition": "gpu"})", "script: required", ""},
      {"/api/check", R"({"script": "#!/bin/bash\n", "files": {"../escape.json": "{}"}})",
       "'..' is not allowed", ""},
      {"/api/check", R"({"script": "#!/bin/bash\n", "files": {"/etc/x.json": "{}"}})",
       "expected relative paths", ""},
      {"/api/check", R"({"script": "#!/bin/bash\n", "config": "/etc/passwd"})",
       "config: not accepted", ""},
  };
  for (const Case& c : kCases) {
    auto res = Post(c.path, c.body);
    ASSERT_TRUE(res) << c.body;
    EXPECT_EQ(res->status, 400) << c.body << " -> " << res->body;
    const json j = json::parse(res->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << res->body;
    EXPECT_NE(j.value("error", "").find(c.message), std::string::npos) << res->body;
    if (*c.field != '\0') {
      EXPECT_EQ(j.value("field", ""), c.field) << res->body;
    }
  }
  auto missing = Get("/api/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto wrong_method = Get("/api/estimate");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
  // Over the 1 MiB bound: refused by the server before any command runs.
  auto huge = Post("/api/estimate", "{\"model\": \"" + std::string(2 << 20, 'a') + "\"}");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
}

// A pasted script and the DeepSpeed config its launch line names: the decision reads the file
// (ZeRO-3 shards the 8B model's states over 8 GPUs: it fits; without the file it would not).
TEST_F(ServeTest, CheckReadsThePastedConfigFiles) {
  const json body = {
      {"script",
       "#!/bin/bash\n#SBATCH --gres=gpu:a100:8\n#SBATCH --time=10:00:00\n"
       "deepspeed train.py --model_name_or_path meta-llama/Llama-3.1-8B --deepspeed ds.json "
       "--per_device_train_batch_size 1 --max_seq_length 2048 --gradient_checkpointing\n"},
      {"files", {{"ds.json", R"({"zero_optimization": {"stage": 3}, "bf16": {"enabled": true},
                        "train_micro_batch_size_per_gpu": 1})"}}}};
  auto res = Post("/api/check", body.dump());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json d = json::parse(res->body);
  EXPECT_EQ(d["decision"], "accept") << d.dump(2);
  EXPECT_TRUE(d["estimate"]["memory"]["fits"].get<bool>());
  EXPECT_EQ(d["estimate"]["job"]["sharding"], "zero3");
  bool read = false;
  for (const json& f : d["request"]["files_read"])
    read = read || f.get<std::string>().ends_with("ds.json");
  EXPECT_TRUE(read) << d["request"].dump(2);

  // The same script with a file that does not shard (ZeRO stage 0): full fine-tuning of 8B
  // unsharded needs ~16 bytes per parameter (128 GB) per 80 GB GPU, and the check refuses it (a
  // rejection is still a 200: it is the answer).
  json unsharded = body;
  unsharded["files"]["ds.json"] =
      R"({"zero_optimization": {"stage": 0}, "bf16": {"enabled": true}})";
  auto rejected = Post("/api/check", unsharded.dump());
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->status, 200);
  EXPECT_EQ(json::parse(rejected->body)["decision"], "reject") << rejected->body;
}

TEST_F(ServeTest, ThePageAndItsAssetsAreServedFromTheBinary) {
  auto page = Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<script src=\"app.js\""), std::string::npos);
  // No asset from elsewhere: every src/href is local.
  EXPECT_EQ(page->body.find("http://"), std::string::npos);
  EXPECT_EQ(page->body.find("https://"), std::string::npos);
  for (const char* asset : {"/app.js", "/app.css"}) {
    auto a = Get(asset);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->status, 200) << asset;
    EXPECT_GT(a->body.size(), 1000u) << asset;
  }
  auto js = Get("/app.js");
  EXPECT_NE(js->get_header_value("Content-Type").find("javascript"), std::string::npos);
  EXPECT_EQ(Get("/nothing.html")->status, 404);
}

TEST(Serve, RefusesAPortInUseWithAClearError) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  const auto run = RunAdvise({"serve", "--port", port});
  close(fd);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cannot listen on 127.0.0.1:" + port), std::string::npos) << run.err;
}

TEST(Serve, BadFlagsAreUsageErrors) {
  const auto run = RunAdvise({"serve", "--port", "70000"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--port: expected an integer in 0..65535"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace fmte
