// The time part of an estimate's output: the `time` JSON object (contract names:
// step_time_s, tokens_per_s_per_gpu, mfu, wall_time_s, time_limit_s, breakdown.{compute,
// communication, bubble, optimizer, offload, overhead}) and the human lines.
#include <cstdio>

#include "output.h"

namespace fmte::tools {
namespace {

std::string Duration(double s) {
  char buf[64];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s < 2 * 3600)
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else
    std::snprintf(buf, sizeof buf, "%.2f h", s / 3600);
  return buf;
}

}  // namespace

void AddTimeJson(nlohmann::json& doc, const TrainingJob& job, const JobEstimate& estimate) {
  if (!estimate.has_step_time && !estimate.has_time) return;
  nlohmann::json& t = doc["time"];
  // The online objectives' step time is their update's alone (TrainingJob::objective).
  if (GeneratesCompletions(job.objective)) t["generation_modelled"] = false;
  const TimeEstimate& s = estimate.time.step;
  if (estimate.has_step_time) {
    t["step_time_s"] = s.step_time_s;
    t["analytic_step_time_s"] = s.analytic_step_time_s;
    t["correction_factor"] = s.correction_factor;
    t["measured_factor"] = s.measured_factor;
    t["tokens_per_s_per_gpu"] = s.tokens_per_s_per_gpu;
    t["mfu"] = s.mfu;
    t["model_flops_per_step"] = s.model_flops_per_step;
    t["global_batch"] = s.global_batch;
    t["micro_batches"] = s.micro_batches;
    t["breakdown"] = {
        {"compute", s.breakdown.compute_s}, {"communication", s.breakdown.communication_s},
        {"bubble", s.breakdown.bubble_s},   {"optimizer", s.breakdown.optimizer_s},
        {"offload", s.breakdown.offload_s}, {"overhead", s.breakdown.overhead_s}};
    t["efficiency_source"] = s.efficiency_source;
  }
  if (estimate.has_time) {
    const WallTimeEstimate& w = estimate.time;
    t["steps"] = w.steps;
    t["wall_time_s"] = w.wall_time_s;
    t["time_limit_s"] = w.time_limit_s;
    t["wall_time_bound_s"] = estimate.wall_time_bound_s;
    t["time_limit_quantile"] = w.quantile;
    t["error_group"] = w.error_group;
    t["wall_breakdown"] = {{"startup", w.startup_s},     {"load", w.load_s},
                           {"train", w.train_s},         {"eval", w.eval_s},
                           {"reference", w.reference_s}, {"checkpoint", w.checkpoint_s}};
    const PeriodicWork& p = w.periodic;
    t["checkpoints"] = {{"count", p.checkpoints},
                        {"every_steps", p.checkpoint_every_steps},
                        {"bytes", w.checkpoint_bytes}};
    t["evaluations"] = {{"count", p.evaluations},
                        {"every_steps", p.eval_every_steps},
                        {"samples", p.eval_samples},
                        {"size_unknown", p.eval_size_unknown}};
    if (w.sequence_tokens > 0) {  // over a dataset (--contract)
      t["dataset"] = {{"sequence_tokens", w.sequence_tokens},
                      {"padding_fraction", w.padding_fraction},
                      {"tokens", w.dataset_tokens}};
    }
  }
}

void PrintTime(std::ostream& os, const TrainingJob& job, const JobEstimate& estimate) {
  if (!estimate.has_step_time && !estimate.has_time) return;
  char buf[256];
  const TimeEstimate& s = estimate.time.step;
  if (estimate.has_step_time) {
    const TimeBreakdown& b = s.breakdown;
    std::snprintf(buf, sizeof buf,
                  "%s%s  (%.0f tokens/s per GPU, MFU %.1f%%, %lld micro-batches)\n",
                  GeneratesCompletions(job.objective) ? "update step     " : "step time       ",
                  Duration(s.step_time_s).c_str(), s.tokens_per_s_per_gpu, 100 * s.mfu,
                  static_cast<long long>(s.micro_batches));
    os << buf;
    auto pct = [&](double x) { return s.step_time_s > 0 ? 100 * x / s.step_time_s : 0.0; };
    std::snprintf(
        buf, sizeof buf,
        "  compute %.1f%%  communication %.1f%%  bubble %.1f%%  optimizer %.1f%%  offload %.1f%%  "
        "overhead %.1f%%\n",
        pct(b.compute_s), pct(b.communication_s), pct(b.bubble_s), pct(b.optimizer_s),
        pct(b.offload_s), pct(b.overhead_s));
    os << buf;
  }
  if (estimate.has_time) {
    const WallTimeEstimate& w = estimate.time;
    std::snprintf(buf, sizeof buf,
                  "wall time       %s for %lld steps (time limit %s at the %.0f%% quantile)\n",
                  Duration(w.wall_time_s).c_str(), static_cast<long long>(w.steps),
                  Duration(w.time_limit_s).c_str(), 100 * w.quantile);
    os << buf;
    os << "  bound from " << w.error_group << "\n";
    if (estimate.has_step_time) os << "  efficiency: " << s.efficiency_source << "\n";
    std::snprintf(buf, sizeof buf, "  start-up %s, load %s, train %s, eval %s, checkpoints %s\n",
                  Duration(w.startup_s).c_str(), Duration(w.load_s).c_str(),
                  Duration(w.train_s).c_str(), Duration(w.eval_s).c_str(),
                  Duration(w.checkpoint_s).c_str());
    os << buf;
    if (w.reference_s > 0)
      os << "  reference log-probabilities precomputed before training: " << Duration(w.reference_s)
         << "\n";
    const PeriodicWork& p = w.periodic;
    if (p.checkpoint_every_steps > 0)
      std::snprintf(buf, sizeof buf, "  checkpoint saves: %lld, every %lld steps (%.1f GiB each)\n",
                    static_cast<long long>(p.checkpoints),
                    static_cast<long long>(p.checkpoint_every_steps),
                    static_cast<double>(w.checkpoint_bytes) / (1 << 30));
    else
      std::snprintf(buf, sizeof buf, "  checkpoint saves: one at the end (%.1f GiB)\n",
                    static_cast<double>(w.checkpoint_bytes) / (1 << 30));
    os << buf;
    if (p.evaluations > 0) {
      if (p.eval_size_unknown)
        std::snprintf(buf, sizeof buf,
                      "  evaluation: %lld passes, every %lld steps, not counted: the size of its "
                      "set is unknown (--eval-samples)\n",
                      static_cast<long long>(p.evaluations),
                      static_cast<long long>(p.eval_every_steps));
      else
        std::snprintf(buf, sizeof buf, "  evaluation: %lld passes, every %lld steps, of %.0f %s\n",
                      static_cast<long long>(p.evaluations),
                      static_cast<long long>(p.eval_every_steps), p.eval_samples,
                      job.SequencesPerSample() > 1 ? "pairs" : "sequences");
      os << buf;
    }
    if (w.sequence_tokens > 0) {
      std::snprintf(
          buf, sizeof buf,
          "  dataset: %.0f tokens over all epochs, steps at %lld tokens per row (%.1f%% padding)\n",
          w.dataset_tokens, static_cast<long long>(w.sequence_tokens), 100 * w.padding_fraction);
      os << buf;
    }
  } else if (GeneratesCompletions(job.objective)) {
    os << "wall time       not estimated: " << ToString(job.objective)
       << " generates its completions in every step, which fmte does not model\n";
  } else {
    os << "wall time       give --tokens, --samples (with --epochs) or --steps\n";
  }
}

}  // namespace fmte::tools
