// Training one cluster's operator and NCCL regressors from a samples directory, and its manifest.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "fmte/learn/operator_data.h"
#include "fmte/learn/version.h"
#include "fmte/operator_time.h"

namespace fmte::learn {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The seed's <GPU>.csv index: key -> (Best_model, Best_error%).
std::map<std::string, std::pair<std::string, double>> ReadSeedIndex(const std::string& dir,
                                                                    bool nccl) {
  std::map<std::string, std::pair<std::string, double>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string stem = e.path().stem().string();
    if (e.path().extension() != ".csv" || stem.find('_') != std::string::npos) continue;
    Result<CsvTable> t = ReadCsv(e.path().string());
    if (!t.ok()) continue;
    const int f = t->Column("Function"), m = t->Column("Best_model"),
              err = t->Column("Best_error%");
    const int p = t->Column("Propagation"), n = t->Column("Nodes"), g = t->Column("GPUsPerNode");
    if (f < 0 || m < 0 || err < 0) continue;
    for (const auto& row : t->rows) {
      std::string key = row[f];
      if (!nccl && p >= 0) key += "_" + row[p];
      if (nccl && n >= 0 && g >= 0) key += row[n] == "0" ? "_any" : "_" + row[n] + "_" + row[g];
      out[key] = {row[m], std::atof(row[err].c_str())};
    }
  }
  return out;
}

std::vector<std::string> SampleCsvs(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".csv" && e.path().stem().string().find('_') != std::string::npos) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

Result<std::vector<RegressorReport>> TrainClusterRegressors(const TrainClusterOptions& o) {
  const std::string op_dir = o.samples_dir + "/operator", nccl_dir = o.samples_dir + "/nccl";
  if (!fs::is_directory(op_dir) && !fs::is_directory(nccl_dir)) {
    return Status::NotFound(o.samples_dir + ": expected operator/ and/or nccl/ subdirectories");
  }
  std::vector<RegressorData> sets;
  std::vector<std::string> notes;
  std::string gpu;
  std::map<std::string, int64_t> source_bytes;
  auto load = [&](const std::string& path) -> Result<NumericTable> {
    Result<CsvTable> t = ReadCsv(path);
    if (!t.ok()) return t.status();
    source_bytes[fs::path(path).filename().string()] = static_cast<int64_t>(fs::file_size(path));
    return ToNumeric(*t, path);
  };
  for (const std::string& path : SampleCsvs(op_dir)) {
    Result<SampleFile> f = ClassifySampleFile(path, false);
    if (!f.ok()) return f.status();
    gpu = f->gpu;
    if (std::find(KnownOperators().begin(), KnownOperators().end(), f->name) ==
        KnownOperators().end()) {
      notes.push_back(fs::path(path).filename().string() +
                      ": operator not used by the composition, skipped");
      continue;
    }
    Result<NumericTable> t = load(path);
    if (!t.ok()) return t.status();
    Result<std::vector<RegressorData>> d = OperatorDatasets(*f, *t);
    if (!d.ok()) return d.status();
    for (RegressorData& r : d.value()) sets.push_back(std::move(r));
  }
  std::map<std::string, std::vector<size_t>> per_collective;
  for (const std::string& path : SampleCsvs(nccl_dir)) {
    Result<SampleFile> f = ClassifySampleFile(path, true);
    if (!f.ok()) return f.status();
    if (gpu.empty()) gpu = f->gpu;
    if (f->nodes == 0) {
      notes.push_back(fs::path(path).filename().string() +
                      ": pooled file, its rows are the per-configuration files' (not re-read)");
      continue;
    }
    Result<NumericTable> t = load(path);
    if (!t.ok()) return t.status();
    Result<RegressorData> d = CollectiveDataset(*f, *t);
    if (!d.ok()) return d.status();
    per_collective[f->name].push_back(sets.size());
    sets.push_back(std::move(d.value()));
  }
  for (const auto& [name, idx] : per_collective) {
    std::vector<const RegressorData*> parts;
    for (size_t i : idx) parts.push_back(&sets[i]);
    sets.push_back(PoolCollective(parts));
  }
  if (sets.empty()) return Status::NotFound(o.samples_dir + ": no sample CSV files found");

  auto seed_ops = ReadSeedIndex(op_dir, false);
  auto seed_nccl = ReadSeedIndex(nccl_dir, true);
  if (!o.dry_run) {
    std::error_code ec;
    fs::create_directories(o.out_dir + "/operator", ec);
    fs::create_directories(o.out_dir + "/nccl", ec);
    if (ec) return Status::IoError(o.out_dir + ": " + ec.message());
  }
  std::vector<RegressorReport> reports;
  json regs = json::array();
  for (const RegressorData& d : sets) {
    RegressorReport rep;
    rep.key = d.key;
    rep.rows = d.x.rows;
    std::vector<int64_t> g = d.groups;
    std::sort(g.begin(), g.end());
    rep.groups = std::unique(g.begin(), g.end()) - g.begin();
    CvOptions cv;
    cv.folds = o.folds;
    cv.to_value = [&d](int64_t row, double label) { return std::exp(label) * d.work[row]; };
    Result<CvResult> r = GroupedKFold(d.x, d.labels, d.groups, o.params, cv);
    if (!r.ok()) return r.status().WithContext(d.key);
    rep.cv = std::move(r.value());
    const auto& seed = d.kind == "operator" ? seed_ops : seed_nccl;
    if (auto it = seed.find(d.key); it != seed.end()) {
      rep.seed_best_model = it->second.first;
      rep.seed_best_error = it->second.second;
    }
    const std::string rel = (d.kind == "operator" ? "operator/" : "nccl/") + d.key + ".json";
    if (!o.dry_run) {
      Result<XgbModel> m = XgbModel::Train(d.x, d.labels, o.params);
      if (!m.ok()) return m.status().WithContext(d.key);
      FMTE_RETURN_IF_ERROR(m->SaveJson(o.out_dir + "/" + rel));
      rep.model_bytes = static_cast<int64_t>(fs::file_size(o.out_dir + "/" + rel));
    }
    json sources = json::array();
    for (const std::string& s : d.sources) {
      const std::string file = s.substr(0, s.find(':'));
      sources.push_back(
          {{"file", file}, {"column", s.substr(s.find(':') + 1)}, {"bytes", source_bytes[file]}});
    }
    json folds = json::array();
    for (const CvFold& f : rep.cv.folds) {
      folds.push_back({{"test_groups", f.test_groups},
                       {"test_rows", f.test_rows},
                       {"mean_abs_rel_error", f.mean_abs_rel_error},
                       {"max_abs_rel_error", f.max_abs_rel_error}});
    }
    json entry = {{"key", d.key},
                  {"kind", d.kind},
                  {"name", d.name},
                  {"model", rel},
                  {"features", d.feature_names},
                  {"label", "log(time_us / work); prediction = exp(model) * work"},
                  {"sources", sources},
                  {"rows", d.x.rows},
                  {"skipped_rows", d.skipped_rows},
                  {"cv_group_by", d.group_by},
                  {"cv_groups", rep.groups},
                  {"cv_mean_abs_rel_error", rep.cv.mean_abs_rel_error},
                  {"cv_median_abs_rel_error", rep.cv.median_abs_rel_error},
                  {"cv_p90_abs_rel_error", rep.cv.p90_abs_rel_error},
                  {"cv_folds", folds},
                  {"model_bytes", rep.model_bytes}};
    if (d.kind == "operator") entry["pass"] = d.pass;
    if (d.kind == "nccl" && d.nodes > 0) {
      entry["nodes"] = d.nodes;
      entry["gpus_per_node"] = d.gpus_per_node;
    }
    if (rep.seed_best_error >= 0) {
      entry["seed_best_model"] = rep.seed_best_model;
      entry["seed_best_error_random_20pct_holdout"] = rep.seed_best_error;
    }
    regs.push_back(entry);
    if (o.progress) {
      char line[256];
      std::snprintf(
          line, sizeof line, "%-34s rows %6lld groups %4lld  cv mean %6.2f%%  p90 %6.2f%%  seed %s",
          d.key.c_str(), static_cast<long long>(rep.rows), static_cast<long long>(rep.groups),
          100 * rep.cv.mean_abs_rel_error, 100 * rep.cv.p90_abs_rel_error,
          rep.seed_best_error >= 0
              ? (std::to_string(100 * rep.seed_best_error).substr(0, 5) + "%").c_str()
              : "-");
      o.progress(line);
    }
    reports.push_back(std::move(rep));
  }
  if (!o.dry_run) {
    json manifest = {
        {"format", "fmte-operator-regressors/1"},
        {"cluster", o.cluster},
        {"gpu", gpu},
        {"xgboost_version", XgboostVersion()},
        {"params", json::parse(o.params.ToJson())},
        {"cv",
         {{"folds", o.folds}, {"error", "mean |pred - measured| / measured over held-out groups"}}},
        {"samples_dir", o.samples_dir},
        {"provenance",
         "Operator/NCCL sampling data of the AI4CI 'Distributed Training Estimator of LLMs' "
         "(DebarghaG/estimate-train-time @ 712a46fe, Estimator/regressors), copied unmodified in "
         "../shared/data/ai4ci-estimator; trained by fmte's learn::TrainClusterRegressors"},
        {"notes", notes},
        {"regressors", regs},
    };
    const std::string path = o.out_dir + "/manifest.json", tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << manifest.dump(1) << "\n";
      if (!out) return Status::IoError(tmp + ": write failed");
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) return Status::IoError(path + ": " + ec.message());
  }
  return reports;
}

}  // namespace fmte::learn
