// The SPANK plugin's client-side model resolution: local config.json files and directories, catalog
// ids (nothing to forward), and Hugging Face ids fetched with libcurl from a hub that this test
// runs itself (python3 -m http.server on 127.0.0.1 serving <org>/<name>/resolve/main/config.json,
// the hub's URL layout), including the on-disk cache and failures.
#include "model_resolver.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "fmte/model.h"

extern char** environ;

namespace fmte::slurm {
namespace {

namespace fs = std::filesystem;

const std::string kCatalogModels = std::string(FMTE_SOURCE_DIR) + "/etc/models";
// A published config (TinyLlama 1.1B) served under an id the catalog does not have.
const std::string kSampleConfig =
    kCatalogModels + "/TinyLlama/TinyLlama-1.1B-Chat-v1.0/config.json";

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool CanConnect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

class ModelResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("fmte_resolver_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "hub/test-org/tiny-llama/resolve/main");
    fs::copy_file(kSampleConfig, root_ / "hub/test-org/tiny-llama/resolve/main/config.json");
    fs::create_directories(root_ / "hub/test-org/broken/resolve/main");
    std::ofstream(root_ / "hub/test-org/broken/resolve/main/config.json") << "{\"model_type\": 3";
    fs::create_directories(root_ / "local/mymodel");
    fs::copy_file(kSampleConfig, root_ / "local/mymodel/config.json");
    options_.models_dir = kCatalogModels;
    options_.cache_dir = (root_ / "cache").string();
    options_.timeout_ms = 3000;
  }
  void TearDown() override {
    StopHub();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  void StartHub() {
    int port = FreePort();
    std::string py = FMTE_PYTHON3[0] != '\0' ? FMTE_PYTHON3 : "python3";
    std::string port_s = std::to_string(port), dir = (root_ / "hub").string();
    const char* argv[] = {py.c_str(),  "-m",          "http.server", port_s.c_str(), "--bind",
                          "127.0.0.1", "--directory", dir.c_str(),   nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    ASSERT_EQ(
        posix_spawnp(&hub_pid_, py.c_str(), &actions, nullptr, const_cast<char**>(argv), environ),
        0);
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 100 && !CanConnect(port); ++i) {  // bounded: 10 s
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(CanConnect(port)) << "http.server did not start";
    options_.hub_url = "http://127.0.0.1:" + port_s;
  }
  void StopHub() {
    if (hub_pid_ > 0) {
      kill(hub_pid_, SIGTERM);
      waitpid(hub_pid_, nullptr, 0);
      hub_pid_ = -1;
    }
  }

  fs::path root_;
  pid_t hub_pid_ = -1;
  ResolverOptions options_;
};

TEST_F(ModelResolverTest, LocalFilesAndCatalogIds) {
  struct Case {
    std::string model;
    bool ok;
    bool forwards;  // a JSON to forward (else: the controller resolves it from its catalog)
  };
  const Case cases[] = {
      {(root_ / "local/mymodel").string(), true, true},
      {(root_ / "local/mymodel/config.json").string(), true, true},
      {(root_ / "local/missing/config.json").string(), false, false},
      {"./no/such/dir", false, false},
      {"meta-llama/Llama-3.1-8B", true, false},
      {"META-LLAMA/llama-3.1-8b", true, false},  // the catalog is case-insensitive
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    Result<std::string> r = ResolveForController(c.model, options_);
    ASSERT_EQ(r.ok(), c.ok) << r.status().ToString();
    if (!c.ok) {
      EXPECT_NE(r.status().message().find("--fmte-model"), std::string::npos);
      continue;
    }
    EXPECT_EQ(!r->empty(), c.forwards);
    if (c.forwards) {
      EXPECT_EQ(r->find('\n'), std::string::npos) << "not compact";
      // The controller parses what is forwarded; it must describe the same model (TinyLlama 1.1B:
      // 22 layers, hidden 2048, in its published config.json).
      Result<ModelArch> arch = ParseModelConfig(*r, "forwarded");
      ASSERT_TRUE(arch.ok()) << arch.status().ToString();
      EXPECT_EQ(arch->num_layers, 22);
      EXPECT_EQ(arch->hidden_size, 2048);
    }
  }
}

TEST_F(ModelResolverTest, FetchesUnknownIdsFromTheHubAndCachesThem) {
  StartHub();
  Result<std::string> r = ResolveForController("test-org/tiny-llama", options_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(ParseModelConfig(*r, "hub").ok());
  EXPECT_TRUE(fs::exists(root_ / "cache/test-org/tiny-llama/config.json"));

  Result<std::string> missing = ResolveForController("test-org/not-there", options_);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("404"), std::string::npos)
      << missing.status().message();

  Result<std::string> broken = ResolveForController("test-org/broken", options_);
  EXPECT_FALSE(broken.ok());
  // The one warning sbatch prints names the model and where the bad answer came from.
  EXPECT_NE(broken.status().message().find("'test-org/broken'"), std::string::npos)
      << broken.status().message();
  EXPECT_NE(broken.status().message().find("/test-org/broken/resolve/main/config.json"),
            std::string::npos)
      << broken.status().message();
  EXPECT_FALSE(fs::exists(root_ / "cache/test-org/broken/config.json"))
      << "bad files are not cached";

  // Offline now: the cache answers.
  StopHub();
  Result<std::string> cached = ResolveForController("test-org/tiny-llama", options_);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  EXPECT_EQ(*cached, *r);
}

// The site's cache is a file like any other: a truncated, empty or overwritten entry is fetched
// again and replaced when the hub answers, and named when it does not.
TEST_F(ModelResolverTest, UnreadableCacheEntriesAreFetchedAgainOrNamed) {
  std::ifstream sample(kSampleConfig);
  const std::string text((std::istreambuf_iterator<char>(sample)), {});
  const fs::path entry = root_ / "cache/test-org/tiny-llama/config.json";
  for (const std::string& bad :
       {text.substr(0, text.size() / 2), std::string(), std::string("\x7f\x45\x4c\x46")}) {
    fs::create_directories(entry.parent_path());
    std::ofstream(entry, std::ios::trunc) << bad;
    options_.hub_url.clear();
    Result<std::string> offline = ResolveForController("test-org/tiny-llama", options_);
    ASSERT_FALSE(offline.ok());
    EXPECT_NE(offline.status().message().find(entry.string()), std::string::npos)
        << offline.status().message();
    EXPECT_NE(offline.status().message().find("cached config is unreadable"), std::string::npos)
        << offline.status().message();
    StartHub();
    Result<std::string> fetched = ResolveForController("test-org/tiny-llama", options_);
    ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
    EXPECT_TRUE(ParseModelConfig(*fetched, "hub").ok());
    StopHub();
    options_.hub_url.clear();
    Result<std::string> repaired = ResolveForController("test-org/tiny-llama", options_);
    ASSERT_TRUE(repaired.ok()) << "the entry was replaced: " << repaired.status().ToString();
    EXPECT_EQ(*repaired, *fetched);
  }
}

TEST_F(ModelResolverTest, UnreachableOrUnsetHubFailsQuicklyWithAMessage) {
  struct Case {
    std::string hub_url;
    std::string expected;
  };
  const Case cases[] = {
      {"", "no hub_url"},
      {"http://127.0.0.1:" + std::to_string(FreePort()), "--fmte-model"},
  };
  for (const Case& c : cases) {
    options_.hub_url = c.hub_url;
    auto start = std::chrono::steady_clock::now();
    Result<std::string> r = ResolveForController("test-org/tiny-llama", options_);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos) << r.status().message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
  }
  // Ids that could escape the URL or the cache directory are refused without a request.
  for (const char* id : {"a/../../etc/passwd", "org/name/extra", "org/na me", "x"}) {
    EXPECT_FALSE(ResolveForController(id, options_).ok()) << id;
  }
}

}  // namespace
}  // namespace fmte::slurm
