#include "html_report.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace fmte::tools {
namespace {

constexpr std::string_view kStyle =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1d2430}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:22px}"
    "pre{background:#f3f5f8;padding:10px;border-radius:4px;overflow-x:auto;font-size:12px}"
    "table{border-collapse:collapse}td,th{border-bottom:1px solid #e3e7ed;padding:3px 12px 3px 0;"
    "text-align:left;vertical-align:top}.src{color:#4a5566;font-size:12px}"
    "figure{margin:10px 0}figcaption{color:#4a5566;font-size:12px}";

struct Part {
  const char* key;
  const char* color;
};
constexpr Part kParts[] = {
    {"weights", "#2563eb"},     {"gradients", "#7c3aed"}, {"optimizer", "#db2777"},
    {"activations", "#ea580c"}, {"logits", "#ca8a04"},    {"other", "#64748b"},
    {"reference", "#0d9488"},   {"critic", "#a16207"},    {"generation", "#0891b2"}};

std::string Gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

std::string ValueText(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HtmlPage(std::string_view title, std::string_view body_html) {
  std::string page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>";
  page += HtmlEscape(title);
  page += "</title><style>";
  page += kStyle;
  page += "</style></head><body>\n";
  page += body_html;
  page += "\n</body></html>\n";
  return page;
}

std::string MemoryBarSvg(const nlohmann::json& estimate) {
  const nlohmann::json& m = estimate.at("memory");
  const double total = m.value("per_gpu_bytes", 0.0);
  const double cap = m.value("gpu_capacity_bytes", 0.0);
  const double scale = std::max(total, cap) > 0 ? std::max(total, cap) : 1;
  constexpr double kWidth = 900, kBar = 36;
  std::string svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1060\" height=\"92\" "
      "font-family=\"sans-serif\" font-size=\"12\">";
  double x = 10;
  double legend_x = 10;
  for (const Part& p : kParts) {
    const double v = m.at("breakdown").value(p.key, 0.0);
    if (v <= 0) continue;
    const double w = kWidth * v / scale;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%.1f\" y=\"10\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\">"
                  "<title>%s: %s</title></rect>"
                  "<rect x=\"%.0f\" y=\"62\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                  "<text x=\"%.0f\" y=\"71\">%s %s</text>",
                  x, w, kBar, p.color, p.key, Gib(v).c_str(), legend_x, p.color, legend_x + 14,
                  p.key, Gib(v).c_str());
    svg += buf;
    x += w;
    legend_x += 148;
  }
  if (cap > 0) {
    char buf[256];
    const double cx = 10 + kWidth * cap / scale;
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"52\" stroke=\"#111\" "
                  "stroke-width=\"2\"/><text x=\"%.1f\" y=\"88\" text-anchor=\"end\">capacity "
                  "%s</text>",
                  cx, cx, std::min(cx, 910.0), Gib(cap).c_str());
    svg += buf;
  }
  svg += "<rect x=\"10\" y=\"10\" width=\"900\" height=\"36\" fill=\"none\" stroke=\"#b9c2cf\"/>";
  svg += "</svg>";
  return svg;
}

std::string EstimateReportHtml(const nlohmann::json& estimate, std::string_view text_summary,
                               std::string_view timeline_svg, std::string_view command_line) {
  const nlohmann::json& m = estimate.at("memory");
  const std::string model = estimate.at("model").value("id", "");
  const std::string gpu = estimate.at("gpu").value("name", "");
  std::string b;
  b += "<h1>fmte estimate: " + HtmlEscape(model) + " on " + HtmlEscape(gpu) + "</h1>\n";
  char when[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  b += "<p class=\"src\">Written " + std::string(when) + " by <code>" + HtmlEscape(command_line) +
       "</code></p>\n";
  b += std::string("<p><b>") + (m.value("fits", false) ? "Fits" : "Does not fit") + ": " +
       Gib(m.value("per_gpu_bytes", 0.0)) + " per GPU of " +
       Gib(m.value("gpu_capacity_bytes", 0.0)) + "</b> (range " + Gib(m.value("low_bytes", 0.0)) +
       " .. " + Gib(m.value("bound_bytes", 0.0)) + ", heaviest phase " +
       HtmlEscape(m.value("peak_phase", "")) + ")</p>\n";
  b += "<h2>Memory of the heaviest GPU</h2>\n" + MemoryBarSvg(estimate) + "\n";
  if (!timeline_svg.empty()) {
    std::string svg(timeline_svg);
    if (const size_t decl = svg.find("?>"); svg.starts_with("<?xml") && decl != std::string::npos)
      svg.erase(0, decl + 2);
    b += "<h2>Step timeline</h2>\n<figure>" + svg + "</figure>\n";
  }
  b += "<h2>Summary</h2>\n<pre>" + HtmlEscape(text_summary) + "</pre>\n";

  b += "<h2>Assumptions and their sources</h2>\n<table>\n";
  const auto row = [&](const std::string& what, const std::string& value, const std::string& src) {
    b += "<tr><td>" + HtmlEscape(what) + "</td><td>" + HtmlEscape(value) +
         "</td><td class=\"src\">" + HtmlEscape(src) + "</td></tr>\n";
  };
  row("model architecture", model,
      "its config.json: the catalog (etc/models/, provenance in etc/models/SOURCES.txt) or the "
      "file "
      "given");
  row("GPU", gpu + ", " + Gib(estimate.at("gpu").value("memory_bytes", 0.0)),
      "etc/gpus.csv (vendors' datasheets; memory as the driver reports it)");
  row("memory model",
      "per-rank weights, gradients, optimizer, activations, logits, framework "
      "overhead; allocator and CUDA context included",
      "docs/memory.md (each mechanism names its framework source)");
  if (estimate.contains("time")) {
    const nlohmann::json& t = estimate.at("time");
    row("step-time efficiency", t.value("efficiency_source", ""), "docs/time.md");
    if (t.contains("time_limit_quantile"))
      row("time limit",
          std::to_string(static_cast<int>(t.value("time_limit_quantile", 0.0) * 100)) +
              "% bound of the wall time",
          "the time model's quantile bound (docs/time.md: how it is calibrated, how wide it is)");
    if (t.contains("correction_factor"))
      row("site correction", ValueText(t.at("correction_factor")),
          "the site's installed regressors (docs/site-corrections.md)");
  }
  for (const auto& [key, value] : estimate.at("job").items())
    row("job: " + key, ValueText(value), "");
  b += "</table>\n";
  b += "<h2>The estimate as JSON</h2>\n<details><summary>fmte-advise estimate "
       "--json</summary><pre>" +
       HtmlEscape(estimate.dump(2)) + "</pre></details>\n";
  return HtmlPage("fmte estimate: " + model, b);
}

}  // namespace fmte::tools
