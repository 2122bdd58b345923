// Self-contained HTML reports of the tools (no script, no external asset: a page a user can attach
// to a ticket): fmte-advise estimate --report FILE.html and fmte-retrain's --svg-dir index.html.
// Thread-safety: pure functions.
#ifndef FMTE_TOOLS_HTML_REPORT_H_
#define FMTE_TOOLS_HTML_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace fmte::tools {

std::string HtmlEscape(std::string_view text);

// A whole page: <title>, inline style, `body_html` as given.
std::string HtmlPage(std::string_view title, std::string_view body_html);

// The per-GPU memory breakdown of an estimate's --json document ("memory.breakdown") as a stacked
// horizontal bar against the GPU's capacity, as inline SVG.
std::string MemoryBarSvg(const nlohmann::json& estimate);

// The report of one estimate: what was asked (the command line), the text summary the tool
// prints, the memory bar, the step timeline (SVG, may be empty), the assumptions with their
// sources, and the JSON document.
std::string EstimateReportHtml(const nlohmann::json& estimate, std::string_view text_summary,
                               std::string_view timeline_svg, std::string_view command_line);

}  // namespace fmte::tools

#endif  // FMTE_TOOLS_HTML_REPORT_H_
