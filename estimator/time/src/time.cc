// Analytic step time (docs/formulas.md §5) composed from time_parts; the learned constants come
// from TimeEfficiency (regressors/vtrain/efficiency.json) and the in-step kernel measurements of
// time_parts.h, never from literals here.
#include "fmte/time.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "fmte/memory.h"
#include "time_groups.h"
#include "time_parts.h"

namespace fmte {
namespace {

using time_parts::KindWork;
using time_parts::StageWork;

// max(a, b) smoothed with a 4-norm: within 19% of the sum when a == b, the larger one otherwise.
double SmoothMax(double a, double b) {
  const double hi = std::max(a, b);
  if (hi <= 0) return 0;
  const double x = a / hi, y = b / hi;
  return hi * std::pow(x * x * x * x + y * y * y * y, 0.25);
}

// The step `f` times as long: its breakdown with it, throughput and utilisation the other way.
void ScaleStep(double f, TimeEstimate* est) {
  est->step_time_s *= f;
  TimeBreakdown& bd = est->breakdown;
  for (double* x : {&bd.compute_s, &bd.communication_s, &bd.bubble_s, &bd.optimizer_s,
                    &bd.offload_s, &bd.overhead_s})
    *x *= f;
  est->tokens_per_s_per_gpu /= f;
  est->mfu /= f;
}

}  // namespace

double MegatronGptFlops(double B, double s, double L, double h, double V) {
  return 72.0 * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * L * h));
}

const std::vector<std::string>& StepTimeFeatureNames() {
  static const std::vector<std::string> kNames = {"log_flops_per_gpu",
                                                  "tp",
                                                  "pp",
                                                  "dp",
                                                  "micro_batch",
                                                  "micro_batches",
                                                  "bubble_fraction",
                                                  "comm_to_compute",
                                                  "hidden_per_tp",
                                                  "log_analytic_step_s"};
  return kNames;
}

namespace {

// EstimateStepTimeAnalytic into `estimate` (default-constructed; written only when valid), so that
// an estimate can be built in its final place instead of moved there.
Status StepTimeAnalyticInto(const ModelArch& model, const TrainingJob& job_in, const GpuSpec& gpu,
                            const ClusterSpec& cluster, const TimeEfficiency& eff,
                            TimeEstimate* estimate) {
  // A pairwise objective's model runs two sequences per sample (TrainingJob::ModelPass): the step
  // is timed in sequences, its global batch reported in samples.
  std::optional<TrainingJob> pass;
  const TrainingJob& job = job_in.ModelPass(&pass);
  const int64_t per_sample = job_in.SequencesPerSample();
  // Forward passes under no_grad beside the policy's (the reference model's, KTO's KL set):
  // forward work and the forward's collectives again, without recomputation.
  const double extra_fwd = static_cast<double>(job_in.ExtraForwardPasses());
  const int64_t L = model.num_layers;
  if (L <= 0 || model.hidden_size <= 0 || model.num_heads <= 0 ||
      static_cast<int64_t>(model.block_kind_of_layer.size()) != L)
    return Status::InvalidArgument("model: architecture has no layers/hidden size/heads");
  const int64_t t = job.tp, p = job.pp, v = std::max<int64_t>(1, job.vpp);
  const int64_t cp = std::max<int64_t>(1, job.cp);
  if (t <= 0 || p <= 0 || job.gpus % (t * p * cp) != 0)
    return Status::InvalidArgument("--gpus: must be a multiple of tp*cp*pp");
  if (p > L)
    return Status::InvalidArgument("--pp: " + std::to_string(p) + " stages for " +
                                   std::to_string(L) + " layers");
  if (model.num_heads % t != 0)
    return Status::InvalidArgument("--tp: " + std::to_string(t) + " does not divide " +
                                   std::to_string(model.num_heads) + " attention heads");
  const int64_t d = job.gpus / (t * p * cp);
  // The ranks that hold the same weights and reduce gradients together: data x context parallel.
  const int64_t dc = d * cp;
  const int64_t b = job.micro_batch;
  int64_t m = job.grad_accum;
  if (job.global_batch > 0) {
    if (job.global_batch % (b * d) != 0)
      return Status::InvalidArgument(
          "--global-batch: " + std::to_string(job_in.global_batch) +
          " is not a multiple of micro-batch x dp = " + std::to_string(job_in.micro_batch * d));
    m = job.global_batch / (b * d);
  }
  const double peak =
      (job.precision == Precision::kFp32 ? gpu.PeakTflops(true) / 2  // TF32 = bf16/2
                                         : gpu.PeakTflops(job.precision != Precision::kAmpFp16 &&
                                                          job.precision != Precision::kMixedFp16)) *
      1e12;
  if (peak <= 0 || gpu.hbm_gbps <= 0)
    return Status::InvalidArgument("--gpu: " + gpu.name + " has no peak FLOPS or bandwidth");
  if (eff.gemm_efficiency <= 0)
    return Status::InvalidArgument("time model: efficiency must be positive");

  // The GPUs that reach each other over NVLink: a node, or an NVLink domain that spans nodes
  // (GB200/GB300 NVL72: 72 GPUs over 4-GPU trays, GpuSpec::nvlink_domain), whose traffic between
  // trays runs at NVLink's rate, not the network's.
  const double node_gpus =
      static_cast<double>(std::clamp<int64_t>(cluster.gpus_per_node, 1, job.gpus));
  const double n = static_cast<double>(
      std::clamp<int64_t>(std::max(cluster.gpus_per_node, gpu.nvlink_domain), 1, job.gpus));
  const int64_t n_int = static_cast<int64_t>(n);
  time_parts::Links links;
  links.intra_bytes_per_s = std::max(cluster.IntraNodeGbps(gpu), 1.0) * 1e9;
  links.inter_bytes_per_s = cluster.InterNodeGbps(job) * 1e9 / 8.0 / node_gpus;
  const double hbm = gpu.hbm_gbps * 1e9;
  const double pcie = cluster.pcie_gbps * 1e9;

  // Sequence: prompt tuning prepends virtual tokens; prefix tuning lengthens the attended context.
  const double s = static_cast<double>(
      job.seq_len + (job.method == Method::kPromptTuning ? job.virtual_tokens : 0));
  const double context =
      s + (job.method == Method::kPrefixTuning ? static_cast<double>(job.virtual_tokens) : 0);
  // Context parallelism: a rank computes s / cp tokens of each sequence, attending to all of it.
  const double tokens_mb = static_cast<double>(b) * s / static_cast<double>(cp);
  const double act_elem_bytes = job.element_bytes.activation >= 0   ? job.element_bytes.activation
                                : job.precision == Precision::kFp32 ? 4
                                                                    : 2;
  const double tp_bytes = tokens_mb * static_cast<double>(model.hidden_size) * act_elem_bytes;
  const int64_t tp_per_node = std::min<int64_t>(t, n_int);
  const double ft = static_cast<double>(t);

  TimeEstimate& out = *estimate;
  out.tp = t;
  out.pp = p;
  out.dp = d;
  out.vpp = v;
  out.micro_batches = m;
  out.global_batch = b * d * m;
  out.peak_flops_per_gpu = peak;
  // "<gpu>: <source>", built in one allocation.
  out.efficiency_source.reserve(eff.gpu.size() + 2 + eff.source.size());
  out.efficiency_source.append(eff.gpu);
  if (!eff.source.empty()) out.efficiency_source.append(": ").append(eff.source);

  // Megatron splits layers evenly over stages (the first stages take the remainder).
  double max_total = 0, model_flops_token = 0, hw_flops_token = 0;
  StageTime worst;
  double dp_exposed = 0, optimizer = 0, offload = 0, act_offload = 0;
  int64_t first = 0;
  const LoraTargets lora = ResolveLoraTargets(model, job);
  KindWork kind_work(model.block_kinds.size());
  out.stages.reserve(static_cast<size_t>(p));
  const std::vector<int> stage_layers = PipelineStageLayers(L, job);
  for (int64_t i = 0; i < p; ++i) {
    const int64_t layers = stage_layers[static_cast<size_t>(i)];
    const StageWork w = time_parts::StageWorkOf(model, job, lora, kind_work, first, layers, i == 0,
                                                i == p - 1, context, tokens_mb, eff);
    first += layers;
    model_flops_token += w.model_flops;
    hw_flops_token += (1 + extra_fwd) * w.fwd_flops + w.bwd_flops + w.recompute_flops;
    const double gemm = peak * eff.gemm_efficiency;
    // Memory-bound kernels, one forward pass (backward: twice that). Eager PyTorch writes and
    // reads every intermediate tensor: its traffic follows the bytes each layer saves for
    // backward (the memory model's op chain for this framework and architecture) times the
    // kEagerTraffic measured inside real steps, plus the logits and loss; fused kernels
    // (Megatron's Transformer Engine, torch.compile) move the Korthikanti activation bytes times
    // the fitted memory_traffic.
    const bool eager = time_parts::EagerKernels(job);
    const double passes_mem = eager ? (tokens_mb * w.logit_bytes_per_token +
                                       time_parts::kEagerTraffic / 3 * w.eager_saved_bytes) /
                                          hbm
                                    : tokens_mb * w.act_bytes_per_token * eff.memory_traffic / hbm;
    // The recomputed forward of full checkpointing runs the layers' elementwise chain again.
    const double recompute_mem =
        eager ? w.recomputed_share * time_parts::kEagerRecomputeTraffic * w.eager_saved_bytes / hbm
              : 0;
    // PEFT's LoRA modules: their casts, scaling, sums and gradient accumulation
    // (memory_internal.h PeftChainBytes), at the bandwidth those kernels reached
    // (kPeftChainTraffic), and again in the recomputed forward of full checkpointing.
    const double peft_fwd = time_parts::kPeftChainTraffic * w.peft_forward_bytes / hbm;
    const double peft_bwd =
        time_parts::kPeftChainTraffic * w.peft_backward_bytes / hbm + w.recomputed_share * peft_fwd;
    // PEFT's LoRA on stacked experts: every expert's delta weight built and added in each forward
    // (the recomputed one too) and taken back in the backward (time_parts.h kExpertDeltaTraffic).
    const double expert_delta = time_parts::kExpertDeltaTraffic * w.expert_delta_elems / hbm;
    double dequant = 0;
    if (job.method == Method::kQlora) {
      // bitsandbytes dequantises each 4/8-bit weight to 16 bits before every matmul, in the
      // forward and again in the backward: read quantised + write and read 16-bit, per pass.
      // Routed experts loaded by transformers 5 stay 16-bit (fmte::KeepsExpertsUnquantized).
      const double qbytes = job.quant == Quant::kInt8 ? 1.0 : 0.5;
      const double passes = 2.0 + w.recomputed_share;
      const double quantized =
          w.weight_elems - (KeepsExpertsUnquantized(model, job) ? w.expert_elems : 0);
      dequant = passes * (quantized / ft) * (qbytes + 4.0) / hbm;
    }
    const double overhead_pass = eff.layer_overhead_s * w.layer_passes;
    StageTime st;
    st.layers = layers;
    const double fwd_share = 1.0 / (1.0 + 2.0 + (w.recompute_flops > 0 ? 1.0 : 0.0));
    // The host launches kernels while the GPU runs earlier ones: a pass costs the larger of its GPU
    // work and its launch time (smoothed so the fit has gradients), not their sum.
    st.fwd_s = SmoothMax(
        tokens_mb * w.fwd_weighted / ft / gemm + passes_mem + peft_fwd + dequant / 3 + expert_delta,
        overhead_pass * fwd_share);
    st.bwd_s = SmoothMax(tokens_mb * (w.bwd_weighted + w.recompute_weighted) / ft / gemm +
                             2 * passes_mem + recompute_mem + peft_bwd + dequant * 2 / 3 +
                             (1 + w.recomputed_share) * expert_delta,
                         overhead_pass * (1 - fwd_share));
    if (eager) {
      // The GPU's idle gaps between eager kernels (time_parts.h kEagerLayerGap), on top of the
      // kernels' time whatever it is.
      const double gaps = time_parts::kEagerLayerGap * w.layer_passes +
                          time_parts::kPeftModuleGap * w.peft_module_passes;
      st.fwd_s += gaps * fwd_share;
      st.bwd_s += gaps * (1 - fwd_share);
    }
    if (eff.layer_fwd_s > 0) st.fwd_s = static_cast<double>(layers) * eff.layer_fwd_s;
    if (eff.layer_bwd_s > 0) st.bwd_s = static_cast<double>(layers) * eff.layer_bwd_s;
    st.fwd_s *= 1 + extra_fwd;
    const double ar = time_parts::AllReduceSeconds(tp_bytes, t, tp_per_node, links, eff);
    const double fwd_ar = w.tp_fwd_allreduces * ar;
    st.fwd_comm_s = fwd_ar * (1 + extra_fwd);
    st.bwd_comm_s = std::max(0.0, w.tp_allreduces * ar - fwd_ar);
    if (cp > 1) {
      // Context-parallel ranks follow the tensor-parallel ones (Megatron order tp-cp-ep-dp-pp).
      const time_parts::RingSeconds ring = time_parts::RingAttentionSeconds(
          model, job, tokens_mb, context, gemm, t * cp > n_int, links, eff);
      st.fwd_comm_s += w.attention_layers * ring.fwd;
      st.bwd_comm_s += w.attention_layers * ring.bwd;
    }
    if (job.ep > 1 && w.moe_layers > 0) {
      // Expert parallelism's token dispatch, per MoE layer and pass (ExpertDispatchSeconds): the
      // forward's, the backward's again (the gradients travel the same way back), and the
      // forward's once more where a recomputed forward reruns it (full checkpointing, or
      // Megatron's selective `moe` module). Not overlapped with compute (Megatron's default).
      const double per_layer = time_parts::ExpertDispatchSeconds(
          model, job, tokens_mb / (job.sequence_parallel ? ft : 1.0),
          w.routed_copies / w.moe_layers, act_elem_bytes, n_int, links, eff);
      const double rerun = job.Recomputes(RecomputeModule::kMoe) ? 1.0 : w.recomputed_share;
      st.fwd_comm_s += w.moe_layers * per_layer * (1 + extra_fwd);
      st.bwd_comm_s += w.moe_layers * per_layer * (1 + rerun);
    }
    if (p > 1) {
      // 1F1B sends the activation forward and its gradient back once per micro-batch per
      // boundary (v times with interleaving); stages are t*cp*d ranks apart (Megatron order
      // tp-cp-dp-pp).
      const double p2p_bytes = tp_bytes / (job.sequence_parallel ? ft : 1.0);
      const int64_t stride = t * dc;
      const bool cross = (i * stride) / n_int != ((i + 1) % p * stride) / n_int;
      const double p2p =
          static_cast<double>(v) * time_parts::P2pSeconds(p2p_bytes, cross, links, eff);
      st.fwd_comm_s += p2p;
      st.bwd_comm_s += p2p;
    }

    // Data-parallel gradient reduction / sharded state collectives, per step, over `ranks` replicas
    // of `grad_bytes` and `weight_bytes`, `per_node` of them on one node.
    const auto dp_seconds = [&](double grad_bytes, double weight_bytes, int64_t ranks,
                                int64_t per_node) {
      if (ranks <= 1) return 0.0;
      const bool overlaps =
          job.framework != Framework::kMegatron && job.framework != Framework::kDeepspeed;
      const double window = overlaps ? st.bwd_s : 0;  // buckets reduce during the last backward
      switch (job.sharding) {
        case Sharding::kZero3:
        case Sharding::kFsdpFull:
        case Sharding::kFsdpHybrid: {
          // FSDP / ZeRO-3: all-gather weights for forward and again for backward, reduce-scatter
          // gradients, every micro-batch (about 3x the weight bytes, docs/formulas.md §5),
          // prefetched under compute; the first unit cannot hide.
          const bool hybrid = job.sharding == Sharding::kFsdpHybrid;
          const int64_t shard_ranks = hybrid ? std::min<int64_t>(ranks, per_node) : ranks;
          // (Each forward under no_grad gathers a model's weights once more: the reference's,
          // sharded as the policy's, or the policy's own for KTO's KL pass.)
          const double mb =
              (2 + extra_fwd) *
                  time_parts::AllGatherSeconds(weight_bytes, shard_ranks, per_node, links, eff) +
              time_parts::AllGatherSeconds(grad_bytes, shard_ranks, per_node, links, eff);
          const double hide = st.fwd_s + st.bwd_s;
          double out = static_cast<double>(m) *
                       (std::max(0.0, mb - hide) + mb / std::max(1.0, static_cast<double>(layers)));
          if (hybrid && ranks > shard_ranks) {
            // Replicas across nodes all-reduce the shards. PyTorch FSDP issues that all-reduce
            // per unit right after the unit's reduce-scatter, on a stream of its own (FSDP1
            // _runtime_utils._reduce_grad: _all_reduce_stream over _inter_node_pg; FSDP2's
            // foreach_reduce likewise), so it runs over the network while backward computes
            // the units before it: only what outlasts backward and the last unit's share show.
            const double ar = time_parts::AllReduceSeconds(
                grad_bytes / static_cast<double>(shard_ranks), ranks / shard_ranks, 1, links, eff);
            out += std::max(0.0, ar - window) +
                   (window > 0 ? ar / std::max(1.0, static_cast<double>(layers)) : 0);
          }
          return out;
        }
        case Sharding::kZero1:
        case Sharding::kZero2:
        case Sharding::kFsdpGradOp:
          // Reduce-scatter gradients + all-gather updated weights: an all-reduce's volume.
          return std::max(0.0,
                          time_parts::AllGatherSeconds(grad_bytes, ranks, per_node, links, eff) -
                              window) +
                 time_parts::AllGatherSeconds(weight_bytes, ranks, per_node, links, eff);
        default:
          return std::max(
              time_parts::AllReduceSeconds(grad_bytes, ranks, per_node, links, eff) - window, 0.0);
      }
    };
    const int64_t dp_per_node = std::clamp<int64_t>(n_int / std::min<int64_t>(t, n_int), 1, dc);
    const double gb = time_parts::GradBytes(job.precision);
    const double wb = time_parts::ComputeWeightBytes(job.precision);
    // Expert parallelism: a rank holds 1/ep of the routed experts, each split over etp ranks;
    // their gradients reduce over the expert-data-parallel group, t x dc / (etp x ep) ranks
    // etp x ep apart (Megatron's expert parallel groups: consecutive ranks, EP inside the node
    // first). The dense weights reduce over the data-parallel group as without EP.
    const bool ep_split = job.ep > 1 && w.expert_elems > 0;
    const double e_split = ep_split ? static_cast<double>(job.ExpertTensorParallel() * job.ep) : ft;
    const int64_t edp =
        ep_split ? std::max<int64_t>(1, t * dc / static_cast<int64_t>(e_split)) : dc;
    const int64_t edp_per_node =
        ep_split ? std::clamp<int64_t>(
                       n_int / std::min<int64_t>(static_cast<int64_t>(e_split), n_int), 1, edp)
                 : dp_per_node;
    const double dense_weights = (w.weight_elems - w.expert_elems) / ft;
    const double expert_weights = w.expert_elems / e_split;
    const double weight_bytes = (dense_weights + expert_weights) * wb;
    double dp_s = 0;
    if (ep_split) {
      dp_s = dp_seconds((w.grad_elems - w.expert_grad_elems) / ft * gb, dense_weights * wb, dc,
                        dp_per_node) +
             dp_seconds(w.expert_grad_elems / e_split * gb, expert_weights * wb, edp, edp_per_node);
    } else {
      dp_s = dp_seconds(w.grad_elems / ft * gb, weight_bytes, dc, dp_per_node);
    }
    // Optimizer step: elementwise, memory-bound over this GPU's share of the trainable parameters.
    const bool shards = ShardsOptimizer(job.sharding);
    const double expert_trainable = std::min(w.expert_grad_elems, w.trainable_elems);
    const double opt_params =
        (w.trainable_elems - expert_trainable) / ft / (shards ? static_cast<double>(dc) : 1.0) +
        expert_trainable / e_split / (shards ? static_cast<double>(edp) : 1.0);
    // Outside Megatron (whose vTrain-fitted constants hold its step) the trainers clip gradients by
    // their global norm by default (HF Trainer max_grad_norm 1.0, torchtitan max_norm 1.0, litgpt
    // and DeepSpeed as configured): a read of every gradient for the norm and a read + write to
    // scale it; and the fused/foreach kernels reach kOptimizerBandwidth of HBM bandwidth.
    const bool pytorch_step = job.framework != Framework::kMegatron;
    const double opt_bytes = opt_params *
                             (time_parts::OptimizerBytesPerParam(job.optimizer, job.precision,
                                                                 job.ForeachOptimizerStep()) +
                              (pytorch_step ? 3 * time_parts::GradBytes(job.precision) : 0)) /
                             (pytorch_step ? time_parts::kOptimizerBandwidth : 1.0);
    double opt_s = 0, off_s = 0;
    if (job.offload_optimizer) {
      // ZeRO-Offload: 16-bit gradients down, updated 16-bit weights up over PCIe, the update on the
      // CPU at host memory bandwidth shared by the node's GPUs.
      off_s += opt_params * (time_parts::GradBytes(job.precision) + 2.0) / pcie +
               opt_bytes / (cluster.host_memory_gbps * 1e9 / node_gpus);
    } else {
      opt_s = opt_bytes / hbm;
    }
    if (job.offload_params)
      off_s += static_cast<double>(m) * 2.0 * (weight_bytes / static_cast<double>(dc)) / pcie;
    double act_off = 0;
    if (job.activation_offload) {
      const double bytes = tokens_mb * static_cast<double>(layers) *
                           static_cast<double>(model.hidden_size) * act_elem_bytes;
      act_off = static_cast<double>(m) * std::max(0.0, 2 * bytes / pcie - (st.fwd_s + st.bwd_s));
    }
    if (st.Total() > max_total) {
      max_total = st.Total();
      worst = st;
    }
    dp_exposed = std::max(dp_exposed, dp_s);
    optimizer = std::max(optimizer, opt_s);
    offload = std::max(offload, off_s);
    act_offload = std::max(act_offload, act_off);
    out.stages.push_back(st);
  }

  // 1F1B: m micro-batches through the slowest stage plus (p-1)/v of fill and drain
  // (docs/formulas.md §5: bubble fraction (p-1)/m; interleaved: /v).
  const double fm = static_cast<double>(m);
  TimeBreakdown& bd = out.breakdown;
  bd.compute_s = fm * (worst.fwd_s + worst.bwd_s);
  bd.communication_s = fm * (worst.fwd_comm_s + worst.bwd_comm_s) + dp_exposed;
  bd.bubble_s = static_cast<double>(p - 1) / static_cast<double>(v) * max_total;
  bd.optimizer_s = optimizer;
  bd.offload_s = offload + act_offload;
  bd.overhead_s = eff.step_overhead_s;
  out.dp_comm_s = dp_exposed;
  out.analytic_step_time_s = bd.Total();
  out.step_time_s = out.analytic_step_time_s;

  const double tokens_step =
      static_cast<double>(out.global_batch) * static_cast<double>(job.seq_len);
  const double tokens_compute = static_cast<double>(out.global_batch) * s;
  out.global_batch /= per_sample;  // samples (pairs), as the job counts its batch
  out.model_flops_per_step = model_flops_token * tokens_compute;
  out.hardware_flops_per_step = hw_flops_token * tokens_compute;
  out.tokens_per_s_per_gpu = tokens_step / out.step_time_s / static_cast<double>(job.gpus);
  out.mfu = out.model_flops_per_step / (out.step_time_s * static_cast<double>(job.gpus) * peak);

  const double comm_total = bd.communication_s;
  out.features = {
      static_cast<float>(std::log(out.hardware_flops_per_step / static_cast<double>(job.gpus))),
      static_cast<float>(t),
      static_cast<float>(p),
      static_cast<float>(d),
      static_cast<float>(b),
      static_cast<float>(m),
      static_cast<float>(static_cast<double>(p - 1) / (static_cast<double>(v) * fm)),
      static_cast<float>(comm_total / std::max(bd.compute_s, 1e-12)),
      static_cast<float>(static_cast<double>(model.hidden_size) / ft),
      static_cast<float>(std::log(out.analytic_step_time_s))};
  return Status::Ok();
}

}  // namespace

Result<TimeEstimate> EstimateStepTimeAnalytic(const ModelArch& model, const TrainingJob& job,
                                              const GpuSpec& gpu, const ClusterSpec& cluster,
                                              const TimeEfficiency& eff) {
  TimeEstimate out;
  FMTE_RETURN_IF_ERROR(StepTimeAnalyticInto(model, job, gpu, cluster, eff, &out));
  return out;
}

const std::vector<std::string>& CorrectionDomainFeatures() {
  static const std::vector<std::string> kNames = {"log_flops_per_gpu", "hidden_per_tp"};
  return kNames;
}

double CorrectionWeight(const std::vector<float>& features,
                        const std::vector<FeatureRange>& domain) {
  double w = 1;
  for (const FeatureRange& r : domain) {
    if (r.index >= features.size()) continue;
    const double x = features[r.index];
    const double width = std::max(r.max - r.min, 1e-9);
    const double outside = x < r.min ? r.min - x : (x > r.max ? x - r.max : 0.0);
    w = std::min(w, std::max(0.0, 1.0 - outside / width));
  }
  return w;
}

Result<TimeEstimate> EstimateStepTime(const ModelArch& model, const TrainingJob& job,
                                      const GpuSpec& gpu, const ClusterSpec& cluster,
                                      const TimeModel& time_model) {
  TimeEstimate out;
  FMTE_RETURN_IF_ERROR(EstimateStepTimeInto(model, job, gpu, cluster, time_model, &out));
  return out;
}

Status EstimateStepTimeInto(const ModelArch& model, const TrainingJob& job, const GpuSpec& gpu,
                            const ClusterSpec& cluster, const TimeModel& time_model,
                            TimeEstimate* estimate) {
  bool exact = false;
  const TimeEfficiency& eff = time_model.For(gpu, &exact);
  FMTE_RETURN_IF_ERROR(StepTimeAnalyticInto(model, job, gpu, cluster, eff, estimate));
  TimeEstimate& est = *estimate;  // corrected in place
  est.gpu = gpu.name;
  est.moe = model.num_experts > 0;
  if (!exact) est.efficiency_source = eff.gpu + " constants (no entry for " + gpu.name + ")";
  if (const StepTimeCorrection* c = time_model.correction(); c != nullptr) {
    const double clamp = time_model.correction_clamp();
    est.correction_weight = CorrectionWeight(est.features, time_model.correction_domain());
    const double log_ratio =
        est.correction_weight > 0
            ? est.correction_weight * std::clamp(c->PredictLogRatio(est.features), -clamp, clamp)
            : 0.0;
    est.correction_factor = std::exp(log_ratio);
    ScaleStep(est.correction_factor, &est);
  }
  // What the measured runs of the job's group say the model misses (time_groups.cc).
  const double r = time_model.measured_groups()
                       ? time_groups::MeasuredGroupOf(gpu.name, job.framework, est.moe).residual
                       : 1.0;
  if (r != 1) {
    est.measured_factor = r;
    ScaleStep(r, &est);
  }
  return Status::Ok();
}

}  // namespace fmte
