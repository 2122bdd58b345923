// fmte-advise recommend: search parallel layouts for a model and a GPU budget, ranked by predicted
// step time (and GPU-hours), each with its memory per GPU; the fastest layouts that do not fit say
// why.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "commands.h"
#include "fmte/estimator.h"
#include "fmte/recommend.h"
#include "job_options.h"
#include "output.h"
#include "time_output.h"

namespace fmte::advise {
namespace {

constexpr std::string_view kSummary =
    "Searches tensor/pipeline/data parallel degrees, micro-batch, activation checkpointing,\n"
    "ZeRO/FSDP mode and offload for a model on N GPUs (or a MIN-MAX range) at a fixed global "
    "batch,\n"
    "and lists the layouts that fit, fastest first. Example:\n"
    "  fmte-advise recommend --model meta-llama/Llama-3.1-70B --gpu H100-SXM --gpus 64 \\\n"
    "      --global-batch 512 --seq-len 4096 --precision mixed-bf16 --framework deepspeed";

int Fail(const Status& s) { return cli::ReportError("fmte-advise", s); }

// --gpus N or MIN-MAX. The job flags parser only knows N, so a range is taken out of `args`
// (replaced by its MIN) and returned separately.
Status TakeGpuRange(std::vector<std::string>* args, int64_t* lo, int64_t* hi) {
  for (size_t i = 1; i < args->size(); ++i) {
    std::string* value = nullptr;
    std::string& a = (*args)[i];
    std::string inline_value;
    if (a == "--gpus" && i + 1 < args->size())
      value = &(*args)[i + 1];
    else if (a.rfind("--gpus=", 0) == 0)
      value = &a;
    if (value == nullptr) continue;
    std::string text = value == &a ? a.substr(7) : *value;
    const size_t dash = text.find('-');
    if (dash == std::string::npos) return Status::Ok();
    auto l = tools::ParseInt(text.substr(0, dash), "--gpus", 1, 1 << 20);
    auto h = tools::ParseInt(text.substr(dash + 1), "--gpus", 1, 1 << 20);
    if (!l.ok() || !h.ok() || *h < *l)
      return Status::InvalidArgument("--gpus: expected N or MIN-MAX (1 <= MIN <= MAX), got '" +
                                     text + "'");
    *lo = *l;
    *hi = *h;
    *value = value == &a ? "--gpus=" + std::to_string(*l) : std::to_string(*l);
    return Status::Ok();
  }
  return Status::Ok();
}

std::string Layout(const TrainingJob& j) {
  std::string s = "tp" + std::to_string(j.tp) + " pp" + std::to_string(j.pp) + " dp" +
                  std::to_string(j.DataParallel()) + " mb" + std::to_string(j.micro_batch) + " " +
                  std::string(ToString(j.activation_checkpointing)) + " " +
                  std::string(ToString(j.sharding));
  if (j.offload_optimizer) s += "+off-opt";
  if (j.offload_params) s += "+off-param";
  if (j.sequence_parallel) s += " sp";
  return s;
}

nlohmann::json CandidateJson(const LayoutCandidate& c) {
  return {{"gpus", c.job.gpus},
          {"tp", c.job.tp},
          {"pp", c.job.pp},
          {"dp", c.job.DataParallel()},
          {"micro_batch", c.job.micro_batch},
          {"grad_accum", c.job.grad_accum},
          {"activation_checkpointing", ToString(c.job.activation_checkpointing)},
          {"sharding", ToString(c.job.sharding)},
          {"offload_optimizer", c.job.offload_optimizer},
          {"offload_params", c.job.offload_params},
          {"sequence_parallel", c.job.sequence_parallel},
          {"fits", c.fits},
          {"per_gpu_bytes", c.per_gpu_bytes},
          {"gpu_capacity_bytes", c.gpu_capacity_bytes},
          {"step_time_s", c.step_time_s},
          {"tokens_per_s_per_gpu", c.tokens_per_s_per_gpu},
          {"mfu", c.mfu},
          {"gpu_hours", c.gpu_hours},
          {"gpu_hours_scope", c.gpu_hours_whole_job ? "job" : "per 1000 steps"},
          {"why_not", c.why_not}};
}

}  // namespace

int RunRecommend(const std::vector<std::string>& args_in) {
  namespace po = tools::po;
  po::options_description desc("options");
  tools::AddJobOptions(&desc);
  tools::AddWorkOptions(&desc);
  tools::AddCommonOptions(&desc);
  desc.add_options()("top", po::value<std::string>()->default_value("10"), "layouts to list");
  std::vector<std::string> args = args_in;
  int64_t lo = 0, hi = 0;
  if (Status s = TakeGpuRange(&args, &lo, &hi); !s.ok()) return Fail(s);
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("recommend", kSummary, desc);
    return cli::kExitOk;
  }
  auto top = tools::ParseInt(tools::FlagString(vm, "top"), "--top", 1, 1000);
  if (!top.ok()) return Fail(top.status());
  auto job = tools::JobFromFlags(vm);
  if (!job.ok()) return Fail(job.status());
  if (job->global_batch <= 0)
    return Fail(Status::InvalidArgument("--global-batch: required (sequences per step)"));
  auto catalogs = LoadCatalogs();
  if (!catalogs.ok())
    return Fail(Status::IoError("cannot load the catalogs: " + catalogs.status().message()));
  if (Status s = tools::ApplyRegressorsDir(tools::WorkOutputsFromFlags(vm).regressors_dir,
                                           &catalogs.value());
      !s.ok())
    return Fail(s);
  if (!catalogs->has_time_model)
    return Fail(Status::IoError(
        "no step-time model (regressors/vtrain/efficiency.json); give --regressors DIR"));
  auto model = ResolveModel(catalogs->models, job->model);
  if (!model.ok()) return Fail(model.status());
  auto gpu = catalogs->gpus.Find(job->gpu);
  if (!gpu.ok()) return Fail(gpu.status().WithContext("--gpu"));
  auto cluster = ResolveCluster(catalogs->clusters, *job, **gpu);
  if (!cluster.ok()) return Fail(cluster.status());

  RecommendRequest req;
  req.base = *job;
  req.min_gpus = lo > 0 ? lo : job->gpus;
  req.max_gpus = hi > 0 ? hi : job->gpus;
  req.global_batch = job->global_batch;
  req.top = static_cast<size_t>(*top);
  const auto t0 = std::chrono::steady_clock::now();
  auto rec = Recommend(*model, **gpu, *cluster, catalogs->time_model, req);
  if (!rec.ok()) return Fail(rec.status());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  if (tools::FlagSet(vm, "json")) {
    nlohmann::json j = {{"model", model->id},
                        {"gpu", (*gpu)->name},
                        {"cluster", cluster->name},
                        {"global_batch", req.global_batch},
                        {"gpus_min", req.min_gpus},
                        {"gpus_max", req.max_gpus},
                        {"evaluated", rec->evaluated},
                        {"feasible_count", rec->feasible_count},
                        {"search_ms", ms},
                        {"feasible", nlohmann::json::array()},
                        {"infeasible", nlohmann::json::array()}};
    for (const auto& c : rec->feasible) j["feasible"].push_back(CandidateJson(c));
    for (const auto& c : rec->infeasible) j["infeasible"].push_back(CandidateJson(c));
    cli::Out() << j.dump(2) << "\n";
    return cli::kExitOk;
  }
  std::printf(
      "%s on %s (%s), global batch %lld x %lld tokens: %lld layouts estimated, %lld fit (%.1f "
      "ms)\n\n",
      model->id.c_str(), (*gpu)->name.c_str(), cluster->name.c_str(),
      static_cast<long long>(req.global_batch), static_cast<long long>(job->seq_len),
      static_cast<long long>(rec->evaluated), static_cast<long long>(rec->feasible_count), ms);
  tools::TextTable table;
  table.AddRow(
      {"#", "gpus", "layout", "step", "tok/s/GPU", "MFU",
       rec->feasible.empty() || rec->feasible[0].gpu_hours_whole_job ? "GPU-h" : "GPU-h/1k steps",
       "mem/GPU"});
  char buf[64];
  int rank = 1;
  for (const auto& c : rec->feasible) {
    std::vector<std::string> row = {std::to_string(rank++), std::to_string(c.job.gpus),
                                    Layout(c.job)};
    std::snprintf(buf, sizeof buf, "%.3f s", c.step_time_s);
    row.push_back(buf);
    std::snprintf(buf, sizeof buf, "%.0f", c.tokens_per_s_per_gpu);
    row.push_back(buf);
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * c.mfu);
    row.push_back(buf);
    std::snprintf(buf, sizeof buf, "%.1f", c.gpu_hours);
    row.push_back(buf);
    row.push_back(tools::FormatGiB(c.per_gpu_bytes));
    table.AddRow(std::move(row));
  }
  table.Print(cli::Out());
  if (rec->feasible.empty()) cli::Out() << "no layout fits.\n";
  if (!rec->infeasible.empty()) {
    cli::Out() << "\nfaster layouts that do not fit:\n";
    for (const auto& c : rec->infeasible) {
      std::snprintf(buf, sizeof buf, "%.3f s", c.step_time_s);
      cli::Out() << "  " << c.job.gpus << " GPUs, " << Layout(c.job) << " (" << buf
                 << "): " << c.why_not << "\n";
    }
  }
  return cli::kExitOk;
}

}  // namespace fmte::advise
