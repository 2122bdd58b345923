// SVG timeline of one training step (time.h StepTimelineSvg): a small event simulation of the
// 1F1B (PipeDream-flush) schedule over the per-stage times of a TimeEstimate.
#include "fmte/timeline.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace fmte {
namespace {

struct Op {
  int64_t stage = 0;
  bool forward = true;
  double start = 0, compute = 0, comm = 0;
};

std::string Fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

// 1F1B: stage i runs min(p-i-1, m) warm-up forwards, then alternates one forward and one backward,
// then drains its backwards. F(i,k) waits for F(i-1,k); B(i,k) for B(i+1,k) (last stage: F(i,k)).
std::vector<Op> Simulate(const TimeEstimate& e, int64_t m, double scale, double* end) {
  const int64_t p = static_cast<int64_t>(e.stages.size());
  std::vector<std::vector<double>> f_done(p, std::vector<double>(m, 0)),
      b_done(p, std::vector<double>(m, 0));
  std::vector<std::vector<std::pair<bool, int64_t>>> order(p);
  for (int64_t i = 0; i < p; ++i) {
    const int64_t warm = std::min(p - i - 1, m);
    int64_t nf = 0, nb = 0;
    for (; nf < warm; ++nf) order[i].push_back({true, nf});
    while (nf < m) {
      order[i].push_back({true, nf++});
      order[i].push_back({false, nb++});
    }
    while (nb < m) order[i].push_back({false, nb++});
  }
  std::vector<size_t> next(p, 0);
  std::vector<double> free_at(p, 0);
  std::vector<Op> ops;
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t i = 0; i < p; ++i) {
      while (next[i] < order[i].size()) {
        const auto [fwd, k] = order[i][next[i]];
        double ready = 0;
        if (fwd) {
          if (i > 0) {
            if (f_done[i - 1][k] <= 0) break;
            ready = f_done[i - 1][k];
          }
        } else if (i + 1 < p) {
          if (b_done[i + 1][k] <= 0) break;
          ready = b_done[i + 1][k];
        } else {
          ready = f_done[i][k];
        }
        const StageTime& st = e.stages[i];
        Op op{i, fwd, std::max(ready, free_at[i]), (fwd ? st.fwd_s : st.bwd_s) * scale,
              (fwd ? st.fwd_comm_s : st.bwd_comm_s) * scale};
        const double done = op.start + op.compute + op.comm;
        (fwd ? f_done : b_done)[i][k] = std::max(done, 1e-300);
        free_at[i] = done;
        ops.push_back(op);
        ++next[i];
        progress = true;
      }
    }
  }
  *end = *std::max_element(free_at.begin(), free_at.end());
  return ops;
}

}  // namespace

std::string StepTimelineSvg(const TimeEstimate& e, const std::string& title,
                            int64_t max_micro_batches) {
  const int64_t p = std::max<int64_t>(1, static_cast<int64_t>(e.stages.size()));
  const int64_t m =
      std::clamp<int64_t>(e.micro_batches, 1, std::max<int64_t>(1, max_micro_batches));
  const double scale = e.correction_factor;
  double pipe_end = 0;
  std::vector<Op> ops = e.stages.empty() ? std::vector<Op>{} : Simulate(e, m, scale, &pipe_end);
  const TimeBreakdown& bd = e.breakdown;
  const double tail = bd.communication_s - e.dp_comm_s * scale >= 0 ? e.dp_comm_s * scale : 0;
  const double total = pipe_end + tail + bd.optimizer_s + bd.offload_s + bd.overhead_s;
  const double width = 1000, left = 110, row_h = 26, top = 50;
  const double x_scale = (width - left - 20) / std::max(total, 1e-12);
  const double height = top + static_cast<double>(p) * row_h + 70;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Fmt("%.0f", width) +
                    "\" height=\"" + Fmt("%.0f", height) +
                    "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  std::string head = title + " | step " + Fmt("%.3f s", e.step_time_s) + " | tp " +
                     std::to_string(e.tp) + " pp " + std::to_string(e.pp) + " dp " +
                     std::to_string(e.dp) + " | " + std::to_string(e.micro_batches) +
                     " micro-batches" +
                     (e.micro_batches > m ? " (first " + std::to_string(m) + " drawn)" : "");
  svg += "<text x=\"10\" y=\"20\" font-size=\"13\">" + Escape(head) + "</text>\n";
  auto rect = [&](double t0, double dt, double y, double h, const char* color,
                  const std::string& tip) {
    if (dt <= 0) return;
    svg += "<rect x=\"" + Fmt("%.2f", left + t0 * x_scale) + "\" y=\"" + Fmt("%.1f", y) +
           "\" width=\"" + Fmt("%.2f", std::max(dt * x_scale, 0.3)) + "\" height=\"" +
           Fmt("%.1f", h) + "\" fill=\"" + color + "\"><title>" + Escape(tip) + "</title></rect>\n";
  };
  for (int64_t i = 0; i < p; ++i) {
    const double y = top + static_cast<double>(i) * row_h;
    svg +=
        "<text x=\"10\" y=\"" + Fmt("%.1f", y + 16) + "\">stage " + std::to_string(i) + "</text>\n";
    rect(0, total, y + 2, row_h - 4, "#eeeeee", "bubble / idle");  // idle background = bubble
  }
  for (const Op& op : ops) {
    const double y = top + static_cast<double>(op.stage) * row_h + 2;
    rect(op.start, op.compute, y, row_h - 4, op.forward ? "#4e79a7" : "#59a14f",
         op.forward ? "forward" : "backward");
    rect(op.start + op.compute, op.comm, y, row_h - 4, "#f28e2b", "communication (TP / p2p)");
  }
  double t = pipe_end;
  for (int64_t i = 0; i < p; ++i) {
    const double y = top + static_cast<double>(i) * row_h + 2;
    rect(t, tail, y, row_h - 4, "#e15759", "data-parallel collectives");
    rect(t + tail, bd.optimizer_s + bd.offload_s, y, row_h - 4, "#b07aa1",
         "optimizer step (+ offload)");
    rect(t + tail + bd.optimizer_s + bd.offload_s, bd.overhead_s, y, row_h - 4, "#bab0ac",
         "fixed overhead");
  }
  const double ly = top + static_cast<double>(p) * row_h + 25;
  const char* names[] = {"forward",        "backward",  "communication", "bubble",
                         "DP collectives", "optimizer", "overhead"};
  const char* colors[] = {"#4e79a7", "#59a14f", "#f28e2b", "#eeeeee",
                          "#e15759", "#b07aa1", "#bab0ac"};
  for (int k = 0; k < 7; ++k) {
    const double x = 10 + k * 135;
    svg += "<rect x=\"" + Fmt("%.0f", x) + "\" y=\"" + Fmt("%.0f", ly) +
           "\" width=\"12\" height=\"12\" fill=\"" + colors[k] + "\" stroke=\"#999\"/><text x=\"" +
           Fmt("%.0f", x + 16) + "\" y=\"" + Fmt("%.0f", ly + 10) + "\">" + names[k] + "</text>\n";
  }
  svg += "<text x=\"10\" y=\"" + Fmt("%.0f", ly + 32) + "\">0 s</text><text x=\"" +
         Fmt("%.0f", width - 80) + "\" y=\"" + Fmt("%.0f", ly + 32) + "\">" + Fmt("%.3f s", total) +
         "</text>\n</svg>\n";
  return svg;
}

}  // namespace fmte
