#include "time_parts.h"

#include <algorithm>
#include <string>

#include "time_groups.h"

namespace fmte::time_parts {

GemmShape LinearGemmShape(const LinearShape& l, int64_t tp, double tokens) {
  GemmShape s{tokens, static_cast<double>(l.in_features), static_cast<double>(l.out_features)};
  const double t = static_cast<double>(std::max<int64_t>(tp, 1));
  if (RowParallel(l.role)) {
    s.k /= t;
  } else if (l.role != LinearRole::kRouter) {  // the router is replicated
    s.n /= t;
  }
  return s;
}

double FwdWeighted(const TimeEfficiency& eff, double flops, const GemmShape& s) {
  if (!eff.gemm_fwd.valid()) return flops;
  return flops / eff.gemm_fwd.Factor(s.m, s.k, s.n);
}

double BwdWeighted(const TimeEfficiency& eff, double flops, const GemmShape& s) {
  if (!eff.gemm_fwd.valid() || !eff.gemm_bwd.valid()) return flops;
  const double ratio = eff.gemm_bwd.peak_fraction / eff.gemm_fwd.peak_fraction;
  return flops / (ratio * eff.gemm_bwd.Factor(s.m, s.k, s.n));
}

BlockFlops BlockFlopsPerToken(const ModelArch& model, const BlockSpec& block,
                              const TrainingJob& job, const LoraTargets& lora_targets,
                              double context, double tokens_mb, const TimeEfficiency& eff) {
  BlockFlops f;
  const bool frozen_base = !job.TrainsLanguageModel();
  // Megatron's FP8 linears (Transformer Engine) run their forward and both backward products on FP8
  // tensor cores, whose dense peak is twice the bf16 one on every generation that has them
  // (H100/H200 1979 vs 989 TFLOP/s, B200 4500 vs 2250, MI300X 2615 vs 1307; datasheets): the same
  // shape efficiency at twice the rate (Fp8LinearSpeedup). Casts are not counted (Transformer
  // Engine fuses them into the norm and activation kernels); attention and the LM head stay 16-bit.
  const double fp8_speed = Fp8LinearSpeedup(job, eff);
  const bool lora = job.method == Method::kLora || job.method == Method::kQlora;
  const bool op_sac = job.OpLevelSac(block);
  int64_t matmuls = 0;  // in forward order, each copy its own (TrainingJob::OpLevelSac)
  for (const LinearShape& l : block.linears) {
    // A matrix product of a token with an (in x out) weight is in*out multiply-adds: 2*in*out
    // FLOPs. Routed experts: only experts_per_token of the `copies` run for a token.
    const double active_copies =
        l.expert && block.experts_per_token > 0
            ? static_cast<double>(std::min<int64_t>(block.experts_per_token, l.copies))
            : static_cast<double>(l.copies);
    const double elems = static_cast<double>(l.in_features) * static_cast<double>(l.out_features);
    const double flops = 2.0 * elems * active_copies;
    f.linear += flops;
    f.weight_elements += elems * static_cast<double>(l.copies);
    const GemmShape shape = LinearGemmShape(
        l, job.tp, tokens_mb * active_copies / static_cast<double>(std::max<int64_t>(l.copies, 1)));
    const double fwd_weighted = FwdWeighted(eff, flops, shape) / fp8_speed;
    f.linear_fwd_weighted += fwd_weighted;
    if (op_sac) {
      // Dense blocks only (OpLevelSac): every copy runs, each 1/copies of the linear's work.
      const int64_t copies = std::max<int64_t>(l.copies, 1);
      for (int64_t c = 0; c < copies; ++c) {
        if (++matmuls % 2 != 0) continue;  // saved
        f.op_sac_fwd += flops / static_cast<double>(copies);
        f.op_sac_fwd_weighted += fwd_weighted / static_cast<double>(copies);
      }
    }
    const bool mlp_part = l.role == LinearRole::kGate || l.role == LinearRole::kUp ||
                          l.role == LinearRole::kGateUp || l.role == LinearRole::kDown ||
                          l.role == LinearRole::kRouter;
    if (mlp_part) {
      f.mlp_fwd += flops;
      f.mlp_fwd_weighted += fwd_weighted;
      if (block.experts_per_token > 0 && !l.expert && l.role != LinearRole::kRouter) {
        f.shared_fwd += flops;
        f.shared_fwd_weighted += fwd_weighted;
      }
    }
    const double bwd = BwdWeighted(eff, flops, shape) / fp8_speed;
    f.linear_bwd_weighted += bwd;
    if (frozen_base) {
      f.frozen_linear += flops;
      f.frozen_bwd_weighted += bwd;
    }
    if (lora && lora_targets.Matches(l)) {
      const double r = static_cast<double>(job.lora_r);
      const double a_flops = 2.0 * r * static_cast<double>(l.in_features) * active_copies;
      const double b_flops = 2.0 * r * static_cast<double>(l.out_features) * active_copies;
      f.adapter += a_flops + b_flops;
      // lora_A: (tokens, in) x (in, r); lora_B: (tokens, r) x (r, out), replicated under TP.
      const GemmShape a_shape{shape.m, static_cast<double>(l.in_features), r};
      const GemmShape b_shape{shape.m, r, static_cast<double>(l.out_features)};
      f.adapter_fwd_weighted +=
          FwdWeighted(eff, a_flops, a_shape) + FwdWeighted(eff, b_flops, b_shape);
      f.adapter_bwd_weighted +=
          BwdWeighted(eff, a_flops, a_shape) + BwdWeighted(eff, b_flops, b_shape);
    }
  }
  if (block.ssm.heads > 0) {
    // Mamba-2's scan (state-space duality, mamba_chunk_scan_combined) in chunks of Q tokens, per
    // token: within its chunk the causal C.B scores (Q/2 x groups x state) and their product with
    // x (Q/2 x d_inner), across chunks the chunk state and its readout (2 x d_inner x state); 2
    // FLOPs per multiply-add. Run by the scan's own kernels: counted like attention, at the GEMM
    // rate.
    const BlockSpec::Ssm& m = block.ssm;
    const double q = static_cast<double>(m.chunk > 0 ? m.chunk : 128);
    const double inner = static_cast<double>(m.Inner()), state = static_cast<double>(m.state);
    f.attention_full =
        2.0 * (q / 2 * (static_cast<double>(m.groups) * state + inner) + 2 * inner * state);
    f.attention_executed = f.attention_weighted = f.attention_full;
  }
  if (!block.HasAttention()) return f;
  // Attention scores: QK^T and (softmax)V, each 2 x ctx x head_dim multiply-adds per head per token
  // (docs/formulas.md §5: 12*L*s*h per token for fwd+bwd = 3 x 4*s*h).
  const double head_dim = model.head_dim > 0
                              ? static_cast<double>(model.head_dim)
                              : static_cast<double>(model.hidden_size) /
                                    static_cast<double>(std::max<int64_t>(1, model.num_heads));
  f.attention_full = 4.0 * context * static_cast<double>(model.num_heads) * head_dim;
  // Fused causal kernels (FlashAttention, SDPA) skip the masked upper triangle: about half. Under
  // transformers a context reaching the model's sliding window makes it pass SDPA an explicit
  // mask: the memory-efficient kernel then computes every score.
  const bool fused = AttentionUsed(model, job) == Attention::kFused;
  const bool masked = HfMasksAttention(model, job, context);
  f.attention_executed = fused && !masked ? f.attention_full / 2 : f.attention_full;
  f.attention_weighted = f.attention_executed;
  const double attn_fraction = !fused   ? 0
                               : masked ? MaskedSdpaPeakFraction(eff)
                                        : FusedAttentionPeakFraction(eff, context, head_dim);
  if (attn_fraction > 0 && eff.gemm_efficiency > 0)
    f.attention_weighted = f.attention_executed * eff.gemm_efficiency / attn_fraction;
  return f;
}

double Fp8LinearSpeedup(const TrainingJob& job, const TimeEfficiency& eff) {
  // Megatron's Transformer Engine only: torchao's float8 (torchtitan, HF) casts in separate
  // kernels and measured 1.10-1.25x end to end on 8 H100 (pytorch/ao rowwise and tensorwise against
  // bf16), which the doubled rate over-predicts; left at 1 until its casts are modelled.
  if (job.fp8 == Fp8::kNone || job.framework != Framework::kMegatron) return 1;
  // The job's GPU where it names one (a B200 borrows another family's efficiency constants).
  const std::string_view gen = time_groups::Generation(job.gpu.empty() ? eff.gpu : job.gpu);
  return gen == "hopper" || gen == "blackwell" || gen == "cdna3" ? 2.0 : 1.0;
}

double MaskedSdpaPeakFraction(const TimeEfficiency& eff) {
  return time_groups::Generation(eff.gpu) == "hopper" ? 0.195 : 0;
}

double FusedAttentionPeakFraction(const TimeEfficiency& eff, double context, double head_dim) {
  if (time_groups::Generation(eff.gpu) != "hopper" || context <= 0 || head_dim <= 0) return 0;
  return 1.0 / (1.0 + 2338.0 / context + 92.5 / head_dim);
}

double AllReduceSeconds(double bytes, int64_t ranks, int64_t ranks_per_node, const Links& links,
                        const TimeEfficiency& eff) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const int64_t r = std::clamp<int64_t>(ranks_per_node, 1, ranks);
  const int64_t nodes = (ranks + r - 1) / r;
  double t = eff.comm_latency_s;
  const double eta = std::max(eff.comm_efficiency, 1e-3);
  // Inside the node: reduce-scatter + all-gather, 2(r-1)/r of the buffer per GPU.
  if (r > 1)
    t += 2.0 * static_cast<double>(r - 1) / static_cast<double>(r) * bytes /
         (links.intra_bytes_per_s * eta);
  // Between nodes: each GPU carries 1/r of the buffer over its share of the node's network.
  if (nodes > 1) {
    t += 2.0 * static_cast<double>(nodes - 1) / static_cast<double>(nodes) *
         (bytes / static_cast<double>(r)) / (links.inter_bytes_per_s * eta);
  }
  return t;
}

double AllGatherSeconds(double bytes, int64_t ranks, int64_t ranks_per_node, const Links& links,
                        const TimeEfficiency& eff) {
  if (ranks <= 1 || bytes <= 0) return 0;
  // Half of an all-reduce's traffic (an all-reduce is a reduce-scatter followed by an all-gather).
  const double full =
      AllReduceSeconds(bytes, ranks, ranks_per_node, links, eff) - eff.comm_latency_s;
  return eff.comm_latency_s + full / 2;
}

double ExpertAllToAllSeconds(double bytes, int64_t ep, int64_t stride, int64_t domain,
                             const Links& links, const TimeEfficiency& eff) {
  if (ep <= 1 || bytes <= 0) return 0;
  const int64_t local = std::clamp<int64_t>(domain / std::max<int64_t>(stride, 1), 1, ep);
  const double eta = std::max(eff.comm_efficiency, 1e-3);
  const double per_peer = bytes / static_cast<double>(ep);
  const double intra = static_cast<double>(local - 1) * per_peer / (links.intra_bytes_per_s * eta);
  const double inter = static_cast<double>(ep - local) * per_peer / (links.inter_bytes_per_s * eta);
  return eff.comm_latency_s + std::max(intra, inter);
}

double ExpertDispatchSeconds(const ModelArch& model, const TrainingJob& job, double local_tokens,
                             double copies, double act_bytes, int64_t domain, const Links& links,
                             const TimeEfficiency& eff) {
  const int64_t ep = job.ep, etp = job.ExpertTensorParallel();
  if (ep <= 1 || local_tokens <= 0) return 0;
  const double token_bytes = local_tokens * static_cast<double>(model.hidden_size) * act_bytes;
  // `bytes` of every rank of `ranks` consecutive ones gathered to all of them, and as much
  // reduce-scattered back.
  const auto gather_and_scatter = [&](double bytes, int64_t ranks) {
    return 2 * AllGatherSeconds(bytes * static_cast<double>(ranks), ranks,
                                std::min<int64_t>(ranks, domain), links, eff);
  };
  if (job.moe_dispatcher == MoeDispatcher::kAllgather)
    return gather_and_scatter(token_bytes, etp * ep);
  double sent = copies;
  if (job.moe_dispatcher == MoeDispatcher::kFlex && model.num_experts > 0) {
    // P(none of a token's k experts on a given rank): the k drawn from the E - E/ep elsewhere.
    const double e = static_cast<double>(model.num_experts);
    const double on_rank = e / static_cast<double>(ep);
    // (At most E draws, and none once no rank can be missed: bounded whatever a config says.)
    double miss = 1;
    const double draws = std::min(copies, e);
    for (double i = 0; i < draws && miss > 0; ++i)
      miss *= std::max(0.0, (e - on_rank - i) / (e - i));
    sent = std::min(copies, static_cast<double>(ep) * (1 - miss));
  }
  const double bytes = token_bytes * sent;
  return 2 * ExpertAllToAllSeconds(bytes, ep, etp, domain, links, eff) +
         (etp > 1 ? gather_and_scatter(bytes, etp) : 0.0);
}

double P2pSeconds(double bytes, bool cross_node, const Links& links, const TimeEfficiency& eff) {
  if (bytes <= 0) return 0;
  const double bw = cross_node ? links.inter_bytes_per_s : links.intra_bytes_per_s;
  return eff.comm_latency_s + bytes / (bw * std::max(eff.comm_efficiency, 1e-3));
}

RingSeconds RingAttentionSeconds(const ModelArch& model, const TrainingJob& job, double tokens_mb,
                                 double context, double attention_rate, bool cross_node,
                                 const Links& links, const TimeEfficiency& eff) {
  RingSeconds out;
  if (job.cp <= 1 || attention_rate <= 0) return out;
  const double cp = static_cast<double>(job.cp);
  const double t = static_cast<double>(std::max<int64_t>(1, job.tp));
  const double heads = static_cast<double>(std::max<int64_t>(1, model.num_heads));
  const double kv_heads = model.num_kv_heads > 0 ? static_cast<double>(model.num_kv_heads) : heads;
  const double head_dim = model.head_dim > 0 ? static_cast<double>(model.head_dim)
                                             : static_cast<double>(model.hidden_size) / heads;
  const double act = job.precision == Precision::kFp32 ? 4 : 2;
  // This rank's keys and values (a tensor-parallel rank holds its share of the KV heads, at least
  // one).
  const double kv_bytes = tokens_mb * 2 * std::max(1.0, kv_heads / t) * head_dim * act;
  const double hop = P2pSeconds(kv_bytes, cross_node, links, eff);
  // Attention of the local queries against one chunk of keys (a cp-th of the context); causal
  // fused kernels skip the masked half.
  const double per_chunk = tokens_mb * 4 * (context / cp) * (heads / t) * head_dim *
                           (AttentionUsed(model, job) == Attention::kFused ? 0.5 : 1.0) /
                           attention_rate;
  out.fwd = (cp - 1) * std::max(0.0, hop - per_chunk);
  out.bwd = (cp - 1) * std::max(0.0, 2 * hop - 2 * per_chunk);  // K, V and dK, dV; 2x the FLOPs
  return out;
}

double GradBytes(Precision p) {
  // AMP and fp32 keep fp32 weights, so fp32 gradients; Megatron/DeepSpeed mixed precision reduce
  // 16-bit gradients (docs/formulas.md §2).
  switch (p) {
    case Precision::kFp32:
    case Precision::kAmpBf16:
    case Precision::kAmpFp16:
      return 4;
    default:
      return 2;
  }
}

double ComputeWeightBytes(Precision p) { return p == Precision::kFp32 ? 4 : 2; }

double OptimizerBytesPerParam(Optimizer opt, Precision p, bool foreach) {
  // Read + write of every state the update touches (an elementwise, memory-bound kernel).
  const double master = p == Precision::kPureBf16 ? 2 : 4;  // fp32 weights or master copy
  const double grad = GradBytes(p);
  const double copy16 = (p == Precision::kMixedBf16 || p == Precision::kMixedFp16) ? 2 : 0;
  double states = 0;  // bytes of optimizer state per parameter
  switch (opt) {
    case Optimizer::kAdamW:
      states = p == Precision::kPureBf16 ? 4 : 8;
      break;
    case Optimizer::kAdamW8bit:
      states = 2;
      break;
    case Optimizer::kSgd:
      states = master;
      break;
    case Optimizer::kAdafactor:
      states = 0.1;
      break;  // factored row/column statistics
  }
  if (opt == Optimizer::kAdamW && foreach) {
    // torch's foreach AdamW (torch/optim/adamw.py, _multi_tensor_adamw) runs each op over every
    // tensor in turn: the weight decay (read + write the weights), lerp of exp_avg with the
    // gradient, exp_avg_sq scaled then addcmul'ed with the gradient, its square root into a new
    // tensor, divided by the bias correction, plus eps, and addcdiv into the weights: 4 weight
    // passes, 14 of one state's size, 2 gradient reads.
    return 4 * master + 7 * states + 2 * grad + copy16;
  }
  return 2 * master + grad + 2 * states + copy16;
}

}  // namespace fmte::time_parts
