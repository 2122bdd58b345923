// fmte-train-operators: trains one cluster's operator and NCCL regressors from a samples directory
// (the seed's CSV format) into regressors/<cluster>/, with manifest.json. The shipped
// regressors/Perlmutter and regressors/Vista are built by scripts/train_operator_regressors.sh
// with this program; a site trains its own cluster the same way.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fmte/learn/operator_data.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: fmte-train-operators --samples DIR --into DIR --cluster NAME\n"
               "         [--rounds N] [--depth D] [--eta E] [--folds K] [--threads T] [--dry-run]\n"
               "  DIR holds operator/ and nccl/ CSV files (<GPU>_<op>_<precision>[_<nodes>_<gpn>].csv)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  fmte::learn::TrainClusterOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--dry-run") {
      o.dry_run = true;
      continue;
    }
    if ((v = next()) == nullptr) return Usage();
    if (a == "--samples") {
      o.samples_dir = v;
    } else if (a == "--into") {
      o.out_dir = v;
    } else if (a == "--cluster") {
      o.cluster = v;
    } else if (a == "--rounds") {
      o.params.num_rounds = std::atoi(v);
    } else if (a == "--depth") {
      o.params.max_depth = std::atoi(v);
    } else if (a == "--eta") {
      o.params.eta = std::atof(v);
    } else if (a == "--threads") {
      o.params.nthread = std::atoi(v);
    } else if (a == "--folds") {
      o.folds = std::atoi(v);
    } else {
      std::fprintf(stderr, "fmte-train-operators: error: unknown option '%s'\n", a.c_str());
      return Usage();
    }
  }
  if (o.samples_dir.empty() || (o.out_dir.empty() && !o.dry_run) || o.cluster.empty()) return Usage();
  o.progress = [](const std::string& line) { std::printf("%s\n", line.c_str()); std::fflush(stdout); };
  auto r = fmte::learn::TrainClusterRegressors(o);
  if (!r.ok()) {
    std::fprintf(stderr, "fmte-train-operators: error: %s\n", r.status().ToString().c_str());
    return 1;
  }
  double sum = 0;
  for (const auto& rep : *r) sum += rep.cv.mean_abs_rel_error;
  std::printf("%zu regressors, mean of grouped-CV mean errors %.2f%%\n", r->size(),
              100 * sum / static_cast<double>(r->size()));
  return 0;
}
