// fmte-train-operators: the former trainer of one cluster's operator/NCCL regressors, kept as an
// alias of the one tool that builds every shipped model:
//   fmte-train-operators --samples DIR --into OUT --cluster NAME [--rounds N] [--depth D] [--eta E]
//                        [--folds K] [--threads T] [--dry-run]
// runs
//   fmte-retrain train --kind operators DIR --cluster NAME --into OUT --exact-dir [same options]
// (same output; installs with fmte-retrain's rules: atomic files, .prev.json kept, manifest
// "retrain" block, refusal of a worse set unless --force). fmte-retrain is looked up next to this
// program, in ../tools/ (the build tree), then on PATH.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: fmte-train-operators --samples DIR --into DIR --cluster NAME\n"
               "         [--rounds N] [--depth D] [--eta E] [--folds K] [--threads T] [--dry-run] "
               "[--force]\n"
               "  (alias of: fmte-retrain train --kind operators DIR --cluster NAME --into DIR "
               "--exact-dir)\n");
  return 2;
}

std::string SelfDir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args = {"fmte-retrain", "train", "--kind", "operators"};
  std::string samples, into, cluster;
  bool dry_run = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dry-run" || a == "--force") {
      dry_run = dry_run || a == "--dry-run";
      args.push_back(a);
      continue;
    }
    if (i + 1 >= argc) return Usage();
    const std::string v = argv[++i];
    if (a == "--samples") {
      samples = v;
    } else if (a == "--into") {
      into = v;
    } else if (a == "--cluster") {
      cluster = v;
    } else if (a == "--rounds" || a == "--depth" || a == "--eta" || a == "--threads" ||
               a == "--folds") {
      args.push_back(a);
      args.push_back(v);
    } else {
      std::fprintf(stderr, "fmte-train-operators: error: unknown option '%s'\n", a.c_str());
      return Usage();
    }
  }
  if (samples.empty() || (into.empty() && !dry_run) || cluster.empty()) return Usage();
  args.insert(args.end(), {samples, "--cluster", cluster});
  if (!into.empty()) args.insert(args.end(), {"--into", into, "--exact-dir"});
  std::vector<char*> argv2;
  for (std::string& s : args) argv2.push_back(s.data());
  argv2.push_back(nullptr);
  const std::string dir = SelfDir();
  for (const std::string& path : {dir + "/fmte-retrain", dir + "/../tools/fmte-retrain"}) {
    if (::access(path.c_str(), X_OK) == 0) ::execv(path.c_str(), argv2.data());
  }
  ::execvp("fmte-retrain", argv2.data());
  std::fprintf(
      stderr,
      "fmte-train-operators: error: cannot run fmte-retrain (%s); build it or put it on PATH\n",
      std::strerror(errno));
  return 1;
}
