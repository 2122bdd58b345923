// GEMM efficiency curves from measured operator times (gemm_fit.h): parsing, Levenberg-Marquardt
// fit of GemmCurve on log time ratios, grouped (by width) cross-validation.
#include "fmte/learn/gemm_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include "fmte/csv.h"
#include "fmte/text.h"
#include "linear_solve.h"

namespace fmte::learn {
namespace {

// The cells of one line of a GEMM sample CSV, without surrounding white space.
std::vector<std::string> SplitCsv(std::string_view line) {
  std::vector<std::string> cells = SplitCsvLine(line);
  for (std::string& c : cells) c = std::string(Trim(c));
  return cells;
}

bool ParseNumber(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*out);
}

// Parameters: logit(peak_fraction), log m_half, log k_half, log n_half.
constexpr int kP = 4;
using Theta = std::array<double, kP>;

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

GemmCurve CurveOf(const Theta& t) {
  GemmCurve c;
  c.peak_fraction = Sigmoid(t[0]);
  c.m_half = std::exp(t[1]);
  c.k_half = std::exp(t[2]);
  c.n_half = std::exp(t[3]);
  return c;
}

double Flops(const GemmSample& s, bool bwd) { return (bwd ? 4.0 : 2.0) * s.m * s.k * s.n; }
double Seconds(const GemmSample& s, bool bwd) { return bwd ? s.bwd_s : s.fwd_s; }

// log(predicted / measured) of one row.
double Residual(const GemmCurve& c, const GemmSample& s, bool bwd, double peak) {
  const double predicted = Flops(s, bwd) / (peak * c.peak_fraction * c.Factor(s.m, s.k, s.n));
  return std::log(predicted / Seconds(s, bwd));
}

GemmCurve Fit(const std::vector<const GemmSample*>& rows, bool bwd, double peak) {
  // Start: 70% of peak, each dimension halving efficiency at 64 (a tile edge); a weak ridge keeps a
  // dimension the data cannot resolve (m is always >= 2048 here) near that start.
  constexpr double kRidge = 1e-4;
  const Theta theta0 = {std::log(0.7 / 0.3), std::log(64.0), std::log(64.0), std::log(64.0)};
  Theta theta = theta0;
  auto cost_of = [&](const Theta& t) {
    const GemmCurve c = CurveOf(t);
    double sum = 0;
    for (const GemmSample* s : rows) sum += std::pow(Residual(c, *s, bwd, peak), 2);
    for (int k = 0; k < kP; ++k) sum += kRidge * (t[k] - theta0[k]) * (t[k] - theta0[k]);
    return sum;
  };
  double cost = cost_of(theta);
  double lambda = 1e-3;
  for (int iter = 0; iter < 200; ++iter) {
    const GemmCurve c = CurveOf(theta);
    std::array<double, kP * kP> jtj{};
    std::array<double, kP> jtr{};
    for (const GemmSample* s : rows) {
      const double r = Residual(c, *s, bwd, peak);
      const std::array<double, 3> x = {c.m_half / s->m, c.k_half / s->k, c.n_half / s->n};
      const double denom = 1.0 + x[0] + x[1] + x[2];
      // Analytic Jacobian: d/d logit(eta) of -log(eta) = -(1 - eta); d/d log(h_j) =
      // (h_j/x_j)/denom.
      const std::array<double, kP> j = {-(1.0 - c.peak_fraction), x[0] / denom, x[1] / denom,
                                        x[2] / denom};
      for (int a = 0; a < kP; ++a) {
        jtr[a] += j[a] * r;
        for (int b = 0; b < kP; ++b) jtj[a * kP + b] += j[a] * j[b];
      }
    }
    for (int k = 0; k < kP; ++k) {
      jtj[k * kP + k] += kRidge;
      jtr[k] += kRidge * (theta[k] - theta0[k]);
    }
    bool improved = false;
    for (int tries = 0; tries < 12 && !improved; ++tries) {
      std::array<double, kP* kP> a = jtj;
      std::array<double, kP> b{};
      for (int k = 0; k < kP; ++k) {
        a[k * kP + k] += lambda * (jtj[k * kP + k] + 1e-12);
        b[k] = -jtr[k];
      }
      Theta delta{};
      if (!SolveLinear(a, b, &delta)) break;
      Theta next = theta;
      for (int k = 0; k < kP; ++k) next[k] += std::clamp(delta[k], -2.0, 2.0);
      const double cn = cost_of(next);
      if (cn < cost) {
        const double gain = cost - cn;
        theta = next;
        cost = cn;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        if (gain < 1e-12 * (1 + cost)) iter = 1000;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  return CurveOf(theta);
}

double Ape(double predicted, double measured) { return std::fabs(predicted - measured) / measured; }

void Summarize(std::vector<double> v, double* mean, double* p90) {
  if (v.empty()) return;
  *mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  *p90 = v[static_cast<size_t>(0.9 * static_cast<double>(v.size() - 1))];
}

}  // namespace

Result<std::vector<GemmSample>> ParseGemmCsv(std::string_view text, std::string_view op,
                                             std::string_view origin) {
  const std::string where(origin);
  if (op != "linear1" && op != "linear2" && op != "linear3" && op != "linear4")
    return Status::InvalidArgument(where + ": operator '" + std::string(op) +
                                   "': expected linear1..linear4");
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line)) return Status::ParseError(where + ": empty file, expected a header");
  const std::vector<std::string> header = SplitCsv(line);
  auto col = [&](const char* name) -> int {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  };
  const int c_mp = col("mp"), c_b = col("b"), c_l = col("l"), c_d = col("dim"),
            c_f = col("F_dur(us)"), c_bw = col("B_dur(us)");
  for (auto [c, name] :
       {std::pair{c_b, "b"}, {c_l, "l"}, {c_d, "dim"}, {c_f, "F_dur(us)"}, {c_bw, "B_dur(us)"}})
    if (c < 0) return Status::ParseError(where + ": header: expected a column '" + name + "'");
  std::vector<GemmSample> out;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> cells = SplitCsv(line);
    auto get = [&](int c, const char* name, double* v) -> Status {
      if (c < 0) return Status::Ok();
      if (c >= static_cast<int>(cells.size()) || !ParseNumber(cells[c], v) || *v <= 0)
        return Status::ParseError(where + ":" + std::to_string(line_no) + ": column '" + name +
                                  "': expected a positive number");
      return Status::Ok();
    };
    double mp = 1, b = 0, l = 0, d = 0, f = 0, bw = 0;
    FMTE_RETURN_IF_ERROR(get(c_mp, "mp", &mp));
    FMTE_RETURN_IF_ERROR(get(c_b, "b", &b));
    FMTE_RETURN_IF_ERROR(get(c_l, "l", &l));
    FMTE_RETURN_IF_ERROR(get(c_d, "dim", &d));
    FMTE_RETURN_IF_ERROR(get(c_f, "F_dur(us)", &f));
    FMTE_RETURN_IF_ERROR(get(c_bw, "B_dur(us)", &bw));
    GemmSample s;
    s.op = std::string(op);
    s.m = b * l;
    if (op == "linear1") s.k = d, s.n = 3 * d / mp;
    if (op == "linear2") s.k = d / mp, s.n = d;
    if (op == "linear3") s.k = d, s.n = 4 * d / mp;
    if (op == "linear4") s.k = 4 * d / mp, s.n = d;
    s.fwd_s = f * 1e-6;
    s.bwd_s = bw * 1e-6;
    s.width = static_cast<int64_t>(d);
    out.push_back(std::move(s));
  }
  if (out.empty()) return Status::ParseError(where + ": no data rows");
  return out;
}

Result<std::vector<GemmSample>> ReadGemmSamples(const std::string& operator_dir) {
  std::vector<GemmSample> all;
  for (const char* op : {"linear1", "linear2", "linear3", "linear4"}) {
    const std::string suffix = std::string("_") + op + "_fp16.csv";
    std::string found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(operator_dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        found = e.path().string();
    }
    if (ec) return Status::IoError(operator_dir + ": cannot list: " + ec.message());
    if (found.empty()) return Status::NotFound(operator_dir + ": no <GPU>" + suffix);
    std::ifstream in(found);
    if (!in) return Status::IoError(found + ": cannot read");
    std::stringstream ss;
    ss << in.rdbuf();
    Result<std::vector<GemmSample>> rows = ParseGemmCsv(ss.str(), op, found);
    if (!rows.ok()) return rows.status();
    all.insert(all.end(), rows->begin(), rows->end());
  }
  return all;
}

Result<GemmCurve> FitGemmCurve(const std::vector<GemmSample>& samples, bool bwd,
                               double peak_flops) {
  if (samples.empty()) return Status::InvalidArgument("GEMM samples: none to fit");
  if (!(peak_flops > 0)) return Status::InvalidArgument("GEMM fit: peak FLOP/s must be positive");
  std::vector<const GemmSample*> rows;
  for (const GemmSample& s : samples) rows.push_back(&s);
  return Fit(rows, bwd, peak_flops);
}

Result<GemmCvReport> CrossValidateGemmCurve(const std::vector<GemmSample>& samples,
                                            double peak_flops) {
  if (!(peak_flops > 0)) return Status::InvalidArgument("GEMM CV: peak FLOP/s must be positive");
  std::map<int64_t, std::vector<const GemmSample*>> by_width;
  for (const GemmSample& s : samples) by_width[s.width].push_back(&s);
  if (by_width.size() < 3)
    return Status::InvalidArgument("GEMM CV: need at least 3 sampled widths");
  GemmCvReport rep;
  rep.rows = static_cast<int64_t>(samples.size());
  rep.groups = static_cast<int64_t>(by_width.size());
  std::array<std::vector<double>, 2> ape, flat;
  for (const auto& [width, held] : by_width) {
    std::vector<const GemmSample*> train;
    for (const auto& [w, rows] : by_width)
      if (w != width) train.insert(train.end(), rows.begin(), rows.end());
    for (int pass = 0; pass < 2; ++pass) {
      const bool bwd = pass == 1;
      const GemmCurve c = Fit(train, bwd, peak_flops);
      // Flat baseline: one efficiency, the geometric mean over the training rows.
      double log_eff = 0;
      for (const GemmSample* s : train)
        log_eff += std::log(Flops(*s, bwd) / (peak_flops * Seconds(*s, bwd)));
      const double eff = std::exp(log_eff / static_cast<double>(train.size()));
      for (const GemmSample* s : held) {
        ape[pass].push_back(
            Ape(Flops(*s, bwd) / (peak_flops * c.peak_fraction * c.Factor(s->m, s->k, s->n)),
                Seconds(*s, bwd)));
        flat[pass].push_back(Ape(Flops(*s, bwd) / (peak_flops * eff), Seconds(*s, bwd)));
      }
    }
  }
  Summarize(ape[0], &rep.fwd_mape, &rep.fwd_p90_ape);
  Summarize(ape[1], &rep.bwd_mape, &rep.bwd_p90_ape);
  double unused = 0;
  Summarize(flat[0], &rep.flat_fwd_mape, &unused);
  Summarize(flat[1], &rep.flat_bwd_mape, &unused);
  // Extrapolation to wider matrices than any the fit saw.
  std::vector<const GemmSample*> narrow, wide;
  for (const GemmSample& s : samples) (s.width <= 6144 ? narrow : wide).push_back(&s);
  if (!narrow.empty() && !wide.empty()) {
    for (int pass = 0; pass < 2; ++pass) {
      const bool bwd = pass == 1;
      const GemmCurve c = Fit(narrow, bwd, peak_flops);
      std::vector<double> e;
      for (const GemmSample* s : wide)
        e.push_back(
            Ape(Flops(*s, bwd) / (peak_flops * c.peak_fraction * c.Factor(s->m, s->k, s->n)),
                Seconds(*s, bwd)));
      Summarize(e, bwd ? &rep.wide_bwd_mape : &rep.wide_fwd_mape, &unused);
    }
  }
  return rep;
}

}  // namespace fmte::learn
