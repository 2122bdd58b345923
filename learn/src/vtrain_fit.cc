// Learning the step-time model from vTrain's measured iterations: efficiency constants by
// Levenberg-Marquardt on log ratios, a boosted-tree correction, grouped cross-validation.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include "fmte/learn/correction_domain.h"
#include "fmte/learn/gemm_fit.h"
#include "fmte/learn/vtrain.h"
#include "fmte/learn/xgb.h"
#include "linear_solve.h"
#include "vtrain_internal.h"

namespace fmte::learn {
namespace {

constexpr int kParams = 6;
using Theta = std::array<double, kParams>;

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Logit(double p) { return std::log(p / (1.0 - p)); }

// Unconstrained parameters: efficiencies through a logistic (0..1), the rest through exp (> 0).
// `init` carries what is not fitted here (GPU name, GEMM curves, source).
TimeEfficiency FromTheta(const Theta& t, const TimeEfficiency& init) {
  TimeEfficiency e = init;
  e.gemm_efficiency = Sigmoid(t[0]);
  e.layer_overhead_s = std::exp(t[1]);
  e.memory_traffic = std::exp(t[2]);
  e.comm_efficiency = Sigmoid(t[3]);
  e.comm_latency_s = std::exp(t[4]);
  e.step_overhead_s = std::exp(t[5]);
  return e;
}

Theta ToTheta(const TimeEfficiency& e) {
  auto clamp01 = [](double x) { return std::clamp(x, 1e-3, 1 - 1e-3); };
  auto pos = [](double x) { return std::log(std::max(x, 1e-9)); };
  return {Logit(clamp01(e.gemm_efficiency)), pos(e.layer_overhead_s), pos(e.memory_traffic),
          Logit(clamp01(e.comm_efficiency)), pos(e.comm_latency_s),   pos(e.step_overhead_s)};
}

struct Prepared {
  std::vector<ModelArch> archs;
  std::vector<TrainingJob> jobs;
  ClusterSpec cluster = VtrainCluster();
};

Prepared Prepare(const std::vector<VtrainRow>& rows, const GpuSpec& gpu) {
  Prepared p;
  for (const VtrainRow& r : rows) {
    p.archs.push_back(VtrainGptArch(r));
    p.jobs.push_back(VtrainJob(r, gpu.name));
  }
  return p;
}

// log(predicted / measured) for each row in `index`.
Result<std::vector<double>> LogResiduals(const Prepared& p, const std::vector<VtrainRow>& rows,
                                         const std::vector<int64_t>& index, const GpuSpec& gpu,
                                         const TimeEfficiency& eff) {
  std::vector<double> out;
  out.reserve(index.size());
  for (int64_t i : index) {
    Result<TimeEstimate> est = EstimateStepTimeAnalytic(p.archs[i], p.jobs[i], gpu, p.cluster, eff);
    if (!est.ok()) return est.status();
    out.push_back(std::log(est->step_time_s / rows[i].iteration_s));
  }
  return out;
}

Result<TimeEfficiency> FitOn(const Prepared& p, const std::vector<VtrainRow>& rows,
                             const std::vector<int64_t>& index, const GpuSpec& gpu,
                             const TimeEfficiency& init, bool fit_gemm = true) {
  // A weak ridge towards the starting point keeps constants the data cannot separate (e.g. link
  // latency vs. efficiency on one node) where physics put them, instead of drifting. A GEMM
  // efficiency taken from operator samples (fit_gemm false) is held by a stiff ridge.
  std::array<double, kParams> ridge;
  ridge.fill(1e-3);
  if (!fit_gemm) ridge[0] = 1e6;
  const Theta theta0 = ToTheta(init);
  Theta theta = theta0;
  auto cost_of = [&](const Theta& t, std::vector<double>* r) -> Result<double> {
    Result<std::vector<double>> res = LogResiduals(p, rows, index, gpu, FromTheta(t, init));
    if (!res.ok()) return res.status();
    double c = 0;
    for (double x : *res) c += x * x;
    for (int k = 0; k < kParams; ++k) c += ridge[k] * (t[k] - theta0[k]) * (t[k] - theta0[k]);
    if (r != nullptr) *r = std::move(res).value();
    return c;
  };
  std::vector<double> r;
  Result<double> cost = cost_of(theta, &r);
  if (!cost.ok()) return cost.status();
  double lambda = 1e-2;
  for (int iter = 0; iter < 60; ++iter) {
    // Forward-difference Jacobian of the residuals.
    std::vector<std::array<double, kParams>> jac(r.size());
    for (int k = 0; k < kParams; ++k) {
      Theta tk = theta;
      const double step = 1e-5;
      tk[k] += step;
      Result<std::vector<double>> rk = LogResiduals(p, rows, index, gpu, FromTheta(tk, init));
      if (!rk.ok()) return rk.status();
      for (size_t i = 0; i < r.size(); ++i) jac[i][k] = ((*rk)[i] - r[i]) / step;
    }
    std::array<double, kParams * kParams> jtj{};
    std::array<double, kParams> jtr{};
    for (size_t i = 0; i < r.size(); ++i)
      for (int a = 0; a < kParams; ++a) {
        jtr[a] += jac[i][a] * r[i];
        for (int b = 0; b < kParams; ++b) jtj[a * kParams + b] += jac[i][a] * jac[i][b];
      }
    for (int k = 0; k < kParams; ++k) {
      jtj[k * kParams + k] += ridge[k];
      jtr[k] += ridge[k] * (theta[k] - theta0[k]);
    }
    bool improved = false;
    for (int tries = 0; tries < 10 && !improved; ++tries) {
      std::array<double, kParams* kParams> a = jtj;
      std::array<double, kParams> b{};
      for (int k = 0; k < kParams; ++k) {
        a[k * kParams + k] += lambda * (jtj[k * kParams + k] + 1e-9);
        b[k] = -jtr[k];
      }
      Theta delta{};
      if (!SolveLinear(a, b, &delta)) break;
      Theta next = theta;
      for (int k = 0; k < kParams; ++k) next[k] += std::clamp(delta[k], -2.0, 2.0);
      std::vector<double> rn;
      Result<double> cn = cost_of(next, &rn);
      if (cn.ok() && *cn < *cost) {
        const double gain = *cost - *cn;
        theta = next;
        r = std::move(rn);
        cost = cn;
        lambda = std::max(lambda / 3, 1e-7);
        improved = true;
        if (gain < 1e-10 * (1 + *cost)) iter = 1000;  // converged
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  return FromTheta(theta, init);
}

TimeEfficiency StartingPoint(const GpuSpec& gpu, const GemmCurveEntry* curve) {
  // Physically plausible starting values (not the answer): A100-class GEMMs reach 50-80% of peak,
  // kernel launches cost ~10 us, NCCL reaches ~70% of link bandwidth with ~20 us latency. With an
  // operator-sampled GEMM curve, its large-matrix efficiency and shape factor.
  TimeEfficiency e;
  e.gpu = gpu.name.substr(0, gpu.name.find('-'));
  e.gemm_efficiency = 0.6;
  if (curve != nullptr) {
    e.gemm_fwd = curve->fwd;
    e.gemm_bwd = curve->bwd;
    e.gemm_efficiency = curve->fwd.peak_fraction;
  }
  e.layer_overhead_s = 1e-4;
  e.memory_traffic = 1.0;
  e.comm_efficiency = 0.7;
  e.comm_latency_s = 2e-5;
  e.step_overhead_s = 5e-3;
  return e;
}

}  // namespace

namespace vtrain_internal {

Result<std::vector<GemmCurveEntry>> ResolveGemmCurves(const VtrainTrainOptions& opt,
                                                      const std::string& out_dir) {
  if (opt.gemm_curves == "none") return std::vector<GemmCurveEntry>{};
  std::string path = opt.gemm_curves;
  std::error_code ec;
  if (path.empty() && !out_dir.empty() && std::filesystem::exists(out_dir + "/gemm.json", ec))
    path = out_dir + "/gemm.json";
  if (path.empty() && std::filesystem::exists(TimeModel::DefaultDir() + "/gemm.json", ec))
    path = TimeModel::DefaultDir() + "/gemm.json";
  if (path.empty()) return std::vector<GemmCurveEntry>{};
  return LoadGemmCurves(path);
}

}  // namespace vtrain_internal

Result<TimeEfficiency> FitEfficiency(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                                     const TimeEfficiency& init) {
  const Prepared p = Prepare(rows, gpu);
  std::vector<int64_t> all(rows.size());
  std::iota(all.begin(), all.end(), 0);
  return FitOn(p, rows, all, gpu, init);
}

namespace vtrain_internal {

Result<std::vector<double>> FitPredict(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                                       const VtrainTrainOptions& opt,
                                       const std::vector<int64_t>& train,
                                       const std::vector<int64_t>& test,
                                       std::vector<double>* analytic_log, TimeEfficiency* fitted,
                                       std::string* model_json,
                                       std::vector<FeatureRange>* domain_out) {
  const Prepared p = Prepare(rows, gpu);
  Result<std::vector<GemmCurveEntry>> curves = ResolveGemmCurves(opt, "");
  if (!curves.ok()) return curves.status();
  const GemmCurveEntry* curve = FindGemmCurve(*curves, gpu.name);
  Result<TimeEfficiency> eff = FitOn(p, rows, train, gpu, StartingPoint(gpu, curve),
                                     curve == nullptr || opt.fit_gemm_efficiency);
  if (!eff.ok()) return eff.status();
  if (fitted != nullptr) *fitted = *eff;
  std::vector<TimeEstimate> est(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    Result<TimeEstimate> e = EstimateStepTimeAnalytic(p.archs[i], p.jobs[i], gpu, p.cluster, *eff);
    if (!e.ok()) return e.status();
    est[i] = std::move(e).value();
  }
  std::vector<double> out;
  analytic_log->clear();
  for (int64_t i : test) analytic_log->push_back(std::log(est[i].step_time_s));
  out = *analytic_log;
  if (!opt.correction) return out;
  // The training range of the size features: the correction fades out beyond it (time.h).
  std::vector<const std::vector<float>*> train_features;
  for (int64_t i : train) train_features.push_back(&est[i].features);
  const std::vector<FeatureRange> domain = MeasureCorrectionDomain(train_features);
  if (domain_out != nullptr) *domain_out = domain;
  DenseMatrix x;
  std::vector<float> y;
  for (int64_t i : train) {
    x.AddRow(est[i].features);
    y.push_back(static_cast<float>(std::log(rows[i].iteration_s / est[i].step_time_s)));
  }
  XgbParams params;
  params.num_rounds = opt.xgb_rounds;
  params.max_depth = opt.xgb_depth;
  params.eta = opt.xgb_eta;
  params.min_child_weight = 5;
  params.seed = opt.seed;
  Result<XgbModel> model = XgbModel::Train(x, y, params);
  if (!model.ok()) return model.status();
  if (model_json != nullptr) {
    Result<std::string> js = model->ToJson();
    if (!js.ok()) return js.status();
    *model_json = *js;
  }
  if (test.empty()) return out;
  DenseMatrix xt;
  for (int64_t i : test) xt.AddRow(est[i].features);
  Result<std::vector<float>> pred = model->Predict(xt);
  if (!pred.ok()) return pred.status();
  constexpr double kClamp = 0.4;  // the same clamp TimeModel applies at run time
  for (size_t k = 0; k < test.size(); ++k)
    out[k] += CorrectionWeight(est[test[k]].features, domain) *
              std::clamp(static_cast<double>((*pred)[k]), -kClamp, kClamp);
  return out;
}

}  // namespace vtrain_internal

Result<VtrainCvReport> CrossValidateVtrain(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                                           const VtrainTrainOptions& opt) {
  const std::vector<int64_t> groups = VtrainGroups(rows, opt.grouping);
  const int64_t n_groups = *std::max_element(groups.begin(), groups.end()) + 1;
  std::vector<int64_t> order(static_cast<size_t>(n_groups));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(opt.seed);
  std::shuffle(order.begin(), order.end(), rng);
  const int folds = static_cast<int>(std::min<int64_t>(std::max(opt.folds, 2), n_groups));
  std::vector<int> fold_of_group(static_cast<size_t>(n_groups));
  for (int64_t k = 0; k < n_groups; ++k) fold_of_group[order[k]] = static_cast<int>(k % folds);

  VtrainCvReport rep;
  rep.folds = folds;
  rep.rows = static_cast<int64_t>(rows.size());
  rep.groups = n_groups;
  std::vector<double> ape_a(rows.size()), ape_c(rows.size());
  rep.heldout_log_residuals.assign(rows.size(), 0);
  rep.heldout_analytic_log_residuals.assign(rows.size(), 0);
  for (int f = 0; f < folds; ++f) {
    std::vector<int64_t> train, test;
    for (size_t i = 0; i < rows.size(); ++i)
      (fold_of_group[groups[i]] == f ? test : train).push_back(static_cast<int64_t>(i));
    std::vector<double> analytic_log;
    Result<std::vector<double>> pred = vtrain_internal::FitPredict(
        rows, gpu, opt, train, test, &analytic_log, nullptr, nullptr, nullptr);
    if (!pred.ok()) return pred.status();
    for (size_t k = 0; k < test.size(); ++k) {
      const size_t i = static_cast<size_t>(test[k]);
      const double y = std::log(rows[i].iteration_s);
      rep.heldout_log_residuals[i] = y - (*pred)[k];
      rep.heldout_analytic_log_residuals[i] = y - analytic_log[k];
      ape_c[i] = std::fabs(std::exp((*pred)[k]) - rows[i].iteration_s) / rows[i].iteration_s;
      ape_a[i] = std::fabs(std::exp(analytic_log[k]) - rows[i].iteration_s) / rows[i].iteration_s;
    }
  }
  auto summarize = [](std::vector<double> v, double* mean, double* p90, double* mx) {
    *mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    std::sort(v.begin(), v.end());
    *p90 = v[static_cast<size_t>(0.9 * static_cast<double>(v.size() - 1))];
    *mx = v.back();
  };
  summarize(ape_a, &rep.analytic_mape, &rep.analytic_p90_ape, &rep.analytic_max_ape);
  summarize(ape_c, &rep.corrected_mape, &rep.corrected_p90_ape, &rep.corrected_max_ape);
  if (!opt.correction) rep.heldout_log_residuals = rep.heldout_analytic_log_residuals;
  return rep;
}

}  // namespace fmte::learn
