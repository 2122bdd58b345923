// The report's figures as plain SVG: log-log predicted vs actual (new model out of fold, plugin),
// and the under-prediction rate against the time-limit factor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "fmte/learn/report.h"

namespace fmte::learn {
namespace {

constexpr double kW = 640, kH = 480, kL = 70, kR = 20, kT = 40, kB = 60;

std::string F(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string Header(const std::string& title, const std::string& xlabel, const std::string& ylabel) {
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << kW / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << title
     << "</text>\n"
     << "<rect x=\"" << kL << "\" y=\"" << kT << "\" width=\"" << kW - kL - kR << "\" height=\""
     << kH - kT - kB << "\" fill=\"none\" stroke=\"black\"/>\n"
     << "<text x=\"" << (kL + kW - kR) / 2 << "\" y=\"" << kH - 15 << "\" text-anchor=\"middle\">"
     << xlabel << "</text>\n"
     << "<text transform=\"translate(18," << (kT + kH - kB) / 2
     << ") rotate(-90)\" text-anchor=\"middle\">" << ylabel << "</text>\n";
  return os.str();
}

}  // namespace

std::string SvgPredictedVsActual(const TargetOutcome& t) {
  const std::string unit = t.what == "time" ? "s" : "bytes";
  std::ostringstream os;
  os << Header(t.key + ": predicted vs actual (log-log)", "actual (" + unit + ")",
               "predicted (" + unit + ")");
  double lo = INFINITY, hi = 0;
  auto widen = [&](double v) {
    if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  };
  for (size_t i = 0; i < t.actual.size(); ++i)
    widen(t.actual[i]), widen(t.predicted_oof[i]), widen(t.plugin[i]);
  for (size_t i = 0; i < t.censored_lower.size(); ++i)
    widen(t.censored_lower[i]), widen(t.censored_predicted[i]);
  if (!(hi > 0)) return os.str() + "</svg>\n";
  const double a = std::log10(lo) - 0.05, b = std::log10(hi) + 0.05;
  auto px = [&](double v) { return kL + (std::log10(v) - a) / (b - a) * (kW - kL - kR); };
  auto py = [&](double v) { return kH - kB - (std::log10(v) - a) / (b - a) * (kH - kT - kB); };
  os << "<line x1=\"" << F(px(lo)) << "\" y1=\"" << F(py(lo)) << "\" x2=\"" << F(px(hi))
     << "\" y2=\"" << F(py(hi)) << "\" stroke=\"gray\" stroke-dasharray=\"4 3\"/>\n";
  for (int d = static_cast<int>(std::ceil(a)); d <= static_cast<int>(std::floor(b)); ++d) {
    const double v = std::pow(10.0, d);
    os << "<text x=\"" << F(px(v)) << "\" y=\"" << kH - kB + 15 << "\" text-anchor=\"middle\">1e"
       << d << "</text>\n"
       << "<text x=\"" << kL - 5 << "\" y=\"" << F(py(v) + 4) << "\" text-anchor=\"end\">1e" << d
       << "</text>\n";
  }
  for (size_t i = 0; i < t.actual.size(); ++i) {
    os << "<circle cx=\"" << F(px(t.actual[i])) << "\" cy=\"" << F(py(t.plugin[i]))
       << "\" r=\"3\" fill=\"none\" stroke=\"#999\"/>\n"
       << "<circle cx=\"" << F(px(t.actual[i])) << "\" cy=\"" << F(py(t.predicted_oof[i]))
       << "\" r=\"3\" fill=\"#1f77b4\"/>\n";
  }
  for (size_t i = 0; i < t.censored_lower.size(); ++i) {  // a right-pointing mark: actual >= x
    const double x = px(t.censored_lower[i]), y = py(t.censored_predicted[i]);
    os << "<path d=\"M" << F(x - 4) << " " << F(y - 4) << " L" << F(x + 4) << " " << F(y) << " L"
       << F(x - 4) << " " << F(y + 4) << " Z\" fill=\"#d62728\"/>\n";
  }
  os << "<text x=\"" << kL + 10 << "\" y=\"" << kT + 16
     << "\" fill=\"#1f77b4\">new model (out of fold)</text>\n"
     << "<text x=\"" << kL + 10 << "\" y=\"" << kT + 32
     << "\" fill=\"#999\">plugin's prediction</text>\n"
     << "<text x=\"" << kL + 10 << "\" y=\"" << kT + 48
     << "\" fill=\"#d62728\">censored (actual at least x)</text>\n"
     << "</svg>\n";
  return os.str();
}

std::string SvgUnderPrediction(const TargetOutcome& t) {
  const UnderPredictionCurve c = UnderPrediction(t);
  std::ostringstream os;
  os << Header(t.key + ": runs longer than factor x prediction",
               "time-limit factor (limit / prediction)", "fraction under-predicted");
  auto px = [&](double f) { return kL + (f - 1.0) / 2.0 * (kW - kL - kR); };
  auto py = [&](double r) { return kH - kB - r * (kH - kT - kB); };
  for (int i = 0; i <= 4; ++i) {
    const double f = 1.0 + 0.5 * i, r = 0.25 * i;
    os << "<text x=\"" << F(px(f)) << "\" y=\"" << kH - kB + 15 << "\" text-anchor=\"middle\">" << f
       << "</text>\n"
       << "<text x=\"" << kL - 5 << "\" y=\"" << F(py(r) + 4) << "\" text-anchor=\"end\">" << r
       << "</text>\n";
  }
  auto line = [&](const std::vector<double>& y, const char* color) {
    os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (size_t i = 0; i < y.size(); ++i) os << F(px(c.factors[i])) << "," << F(py(y[i])) << " ";
    os << "\"/>\n";
  };
  line(c.new_model, "#1f77b4");
  line(c.plugin, "#999");
  os << "<text x=\"" << kW - kR - 10 << "\" y=\"" << kT + 16
     << "\" text-anchor=\"end\" fill=\"#1f77b4\">new model"
     << " (incl. censored runs)</text>\n"
     << "<text x=\"" << kW - kR - 10 << "\" y=\"" << kT + 32
     << "\" text-anchor=\"end\" fill=\"#999\">plugin's "
     << "prediction</text>\n</svg>\n";
  return os.str();
}

}  // namespace fmte::learn
