// Composition of operator and collective times into one optimizer step of a 3D-parallel job, as
// the seed composes it (Estimator/mml_3d_prediction.py get_operator_statistics / all_F_all_B;
// docs/formulas.md §5): checked against the seed's own per-operator trace in
// tests/estimator/operator_time_test.cc.
#include "fmte/operator_time.h"

#include <algorithm>
#include <cmath>

namespace fmte {
namespace {

enum { kFirst = 0, kMiddle = 1, kLast = 2 };

// Layers per stage. The seed's split (pp_partitions) treats the embedding as ~2 layers and the
// output head as ~3: first = ceil((L+5)/p) - 2, middle = floor((L+5)/p), last = floor((L+5)/p) - 3;
// used when it adds up to L, else an even split (Megatron's uniform partition).
void Partition(const PipelineConfig& c, int64_t layers[3]) {
  const int64_t L = c.encoders, p = c.pp;
  layers[0] = layers[1] = layers[2] = 0;
  if (p == 1) {
    layers[kLast] = L;
    return;
  }
  if (c.seed_partition && p >= 3) {
    const int64_t t = L + 5;
    const int64_t f = (t + p - 1) / p - 2, m = t / p, l = t / p - 3;
    if (f >= 0 && l >= 0 && f + (p - 2) * m + l == L) {
      layers[kFirst] = f, layers[kMiddle] = m, layers[kLast] = l;
      return;
    }
  }
  const int64_t per = (L + p - 1) / p;  // the first stages take the remainder
  layers[kFirst] = per;
  layers[kMiddle] = p > 2 ? per : 0;
  layers[kLast] = L - per * (p - 1);
  if (layers[kLast] <= 0) layers[kLast] = std::max<int64_t>(1, L / p);
}

}  // namespace

Result<OperatorTimeEstimate> ComposeBatchTime(const PipelineConfig& c,
                                              const OperatorPredictor& pr) {
  if (c.pp < 1 || c.tp < 1 || c.dp < 1 || c.micro_batches < 1 || c.gpus_per_node < 1) {
    return Status::InvalidArgument("pp, tp, dp, micro-batches and gpus per node must be >= 1");
  }
  if (c.encoders < c.pp) {
    return Status::InvalidArgument("pp: " + std::to_string(c.pp) + " stages for " +
                                   std::to_string(c.encoders) + " layers");
  }
  OperatorTimeEstimate e;
  OperatorConfig oc;
  oc.tp = static_cast<double>(c.tp);
  oc.micro_batch = static_cast<double>(c.micro_batch);
  oc.heads = static_cast<double>(c.heads);
  oc.seq_len = static_cast<double>(c.seq_len);
  oc.hidden = static_cast<double>(c.hidden);
  oc.ffn = c.ffn, oc.qkv_out = c.qkv_out, oc.vocab = c.vocab, oc.gated_mlp = c.gated_mlp;

  auto op = [&](const std::string& name, Pass pass) -> Result<double> {
    Result<double> r = pr.OperatorUs(name, pass, oc);
    if (r.ok()) e.trace.emplace_back(name + "_" + std::string(ToString(pass)), *r);
    return r;
  };
  auto coll = [&](const char* name, const char* label, int64_t nodes, int64_t gpn,
                  double elements) -> Result<double> {
    Result<double> r = pr.CollectiveUs(name, nodes, gpn, elements);
    if (r.ok()) e.trace.emplace_back(label, *r);
    return r;
  };

  const double act = static_cast<double>(c.micro_batch * c.seq_len * c.hidden);  // elements
  // TP all-reduce inside a node when tp <= gpus per node (seed predictor.mp_allreduce).
  if (c.tp > 1) {
    const int64_t gpn = std::min(c.tp, c.gpus_per_node), nodes = (c.tp + gpn - 1) / gpn;
    Result<double> r = coll("allreduce", "mp_allreduce", nodes, gpn, act);
    if (!r.ok()) return r.status();
    e.tp_allreduce_us = *r;
  }
  // Pipeline p2p of one micro-batch's activations (split by tp): across nodes when the tp x dp
  // ranks of one stage fill a node (seed predictor.pp_p2p).
  if (c.pp > 1) {
    const bool inter = c.tp * c.dp >= c.gpus_per_node;
    Result<double> r = coll("p2p", "pp_p2p", inter ? 2 : 1, inter ? 1 : 2,
                            std::floor(act / static_cast<double>(c.tp)));
    if (!r.ok()) return r.status();
    e.pp_p2p_us = *r;
  }

  double enc_fwd = 0, enc_bwd = 0;
  for (const std::string& f : c.encoder_function_list) {
    Result<double> a = op(f, Pass::kFwd);
    if (!a.ok()) return a.status();
    Result<double> b = op(f, Pass::kBwd);
    if (!b.ok()) return b.status();
    enc_fwd += *a, enc_bwd += *b;
  }
  const double tp_fwd = static_cast<double>(c.fwd_syncs) * e.tp_allreduce_us;
  const double tp_bwd = static_cast<double>(c.bwd_syncs) * e.tp_allreduce_us;
  enc_fwd += tp_fwd;
  enc_bwd += tp_bwd + (c.recompute ? enc_fwd : 0);
  e.encoder_fwd_us = enc_fwd, e.encoder_bwd_us = enc_bwd;

  Result<double> emb_f = op("embedding", Pass::kFwd), emb_b = op("embedding", Pass::kBwd);
  Result<double> ln_f = op(c.layernorm_name, Pass::kFwd), ln_b = op(c.layernorm_name, Pass::kBwd);
  Result<double> lf_f = op("linear_final", Pass::kFwd), lf_b = op("linear_final", Pass::kBwd);
  Result<double> ce_f = op("parallel_cross_entropy_128", Pass::kFwd);
  Result<double> ce_b = op("parallel_cross_entropy_128", Pass::kBwd);
  for (const Result<double>* r : {&emb_f, &emb_b, &ln_f, &ln_b, &lf_f, &lf_b, &ce_f, &ce_b}) {
    if (!r->ok()) return r->status();
  }
  Partition(c, e.layers);
  const double head_f = *emb_f + e.tp_allreduce_us, head_b = *emb_b;  // vocab-parallel embedding
  const double tail_f = *ln_f + *lf_f + *ce_f, tail_b = *ln_b + *lf_b + *ce_b;
  for (int s = 0; s < 3; ++s) {
    e.stage_fwd_us[s] = enc_fwd * static_cast<double>(e.layers[s]);
    e.stage_bwd_us[s] = enc_bwd * static_cast<double>(e.layers[s]);
  }
  e.stage_fwd_us[kFirst] += head_f, e.stage_bwd_us[kFirst] += head_b;
  e.stage_fwd_us[kLast] += tail_f, e.stage_bwd_us[kLast] += tail_b;
  if (c.pp == 1) {  // one stage holds everything
    e.stage_fwd_us[kLast] += e.stage_fwd_us[kFirst],
        e.stage_bwd_us[kLast] += e.stage_bwd_us[kFirst];
    e.stage_fwd_us[kFirst] = e.stage_bwd_us[kFirst] = 0;
  }

  // Data parallel: gradient all-reduce in buckets of comm_bucket elements, parameter all-gather of
  // params/dp (ZeRO-1), optimizer per stage (seed dp_allreduce_cost / dp_allgather_cost).
  const char* kOpt[3] = {"firstStage_optimizer", "middleStage_optimizer", "lastStage_optimizer"};
  const int64_t dp_gpn = std::max<int64_t>(1, std::min(c.dp, c.gpus_per_node / c.tp));
  const int64_t dp_nodes = (c.dp + dp_gpn - 1) / dp_gpn;
  double update[3] = {0, 0, 0};
  for (int s = 0; s < 3; ++s) {
    const bool exists = c.pp == 1 ? s == kLast : (s != kMiddle || c.pp > 2);
    if (!exists) continue;
    OperatorConfig sc = oc;
    sc.layers = static_cast<double>(e.layers[s]);
    float x[kMaxOperatorFeatures];
    double params = 0;
    Result<int> n = OperatorFeatures(kOpt[s], sc, x, &params);
    if (!n.ok()) return n.status();
    if (c.pp == 1) {  // the one stage also holds the embedding: last-stage count + V_part x h
      params += sc.VocabPartition() * sc.hidden;
      sc.params = params;
    }
    if (c.dp > 1) {
      // The seed walks the buckets one by one; every full bucket costs the same, so the full ones
      // are priced once and counted (a tiny comm_bucket made that walk billions of predictions:
      // found by fuzz_dte_config as a timeout), then the last, partial one.
      const auto bucketed = [&](const char* op, const char* name, double total,
                                double* out) -> Status {
        const double full = total > 0 ? std::floor(total / c.comm_bucket) : 0;
        const double rest = total - full * c.comm_bucket;
        if (full > 0) {
          Result<double> r = coll(op, name, dp_nodes, dp_gpn, c.comm_bucket);
          if (!r.ok()) return r.status();
          *out += full * *r;
        }
        if (rest > 0) {
          Result<double> r = coll(op, name, dp_nodes, dp_gpn, rest);
          if (!r.ok()) return r.status();
          *out += *r;
        }
        return Status::Ok();
      };
      FMTE_RETURN_IF_ERROR(
          bucketed("allreduce_large", "dp_allreduce", params, &e.dp_allreduce_us[s]));
      FMTE_RETURN_IF_ERROR(bucketed("allgather_large", "dp_allgather",
                                    std::floor(params / static_cast<double>(c.dp)),
                                    &e.dp_allgather_us[s]));
    }
    Result<double> o = pr.OperatorUs(kOpt[s], Pass::kDur, sc);
    if (!o.ok()) return o.status();
    e.trace.emplace_back(std::string(kOpt[s]) + "_dur", *o);
    e.optimizer_us[s] = *o;
    update[s] = e.dp_allgather_us[s] + e.optimizer_us[s];
  }

  // 1F1B: (m - 1 + p) x (slowest stage forward + slowest stage backward) (seed all_F_all_B); the
  // p2p send is charged to the sender: forward on all but the last stage, backward on all but the
  // first.
  double fwd[3], bwd[3];
  for (int s = 0; s < 3; ++s) {
    const bool exists = c.pp == 1 ? s == kLast : (s != kMiddle || c.pp > 2);
    fwd[s] = exists ? e.stage_fwd_us[s] + (s != kLast ? e.pp_p2p_us : 0) : 0;
    bwd[s] = exists ? e.stage_bwd_us[s] + (s != kFirst ? e.pp_p2p_us : 0) : 0;
  }
  const int sf = static_cast<int>(std::max_element(fwd, fwd + 3) - fwd);
  const int sb = static_cast<int>(std::max_element(bwd, bwd + 3) - bwd);
  const int su = static_cast<int>(std::max_element(update, update + 3) - update);
  const double per_micro = fwd[sf] + bwd[sb];
  const double m = static_cast<double>(c.micro_batches), p = static_cast<double>(c.pp);
  const int first_dp = c.pp == 1 ? kLast : kFirst;
  e.batch_us = (m - 1 + p) * per_micro + e.dp_allreduce_us[first_dp] + update[su];

  // Breakdown: communication on the critical stages (TP all-reduces, p2p), the DP collectives,
  // the bubble (p - 1 micro-batch slots), the optimizer.
  auto layer_comm = [&](int s, bool backward) {
    double t = static_cast<double>(e.layers[s]) *
               (backward ? tp_bwd + (c.recompute ? tp_fwd : 0) : tp_fwd);
    if (!backward && s == kFirst) t += e.tp_allreduce_us;
    return t;
  };
  const double comm_micro = layer_comm(sf, false) + (fwd[sf] - e.stage_fwd_us[sf]) +
                            layer_comm(sb, true) + (bwd[sb] - e.stage_bwd_us[sb]);
  e.bubble_s = (p - 1) * per_micro * 1e-6;
  e.communication_s = (m * comm_micro + e.dp_allreduce_us[first_dp] + e.dp_allgather_us[su]) * 1e-6;
  e.optimizer_s = e.optimizer_us[su] * 1e-6;
  e.compute_s = e.batch_us * 1e-6 - e.bubble_s - e.communication_s - e.optimizer_s;
  return e;
}

Result<OperatorTimeEstimate> EstimateStepTimeFromOperators(const ModelArch& model,
                                                           const TrainingJob& job,
                                                           const OperatorModels& models) {
  Result<PipelineConfig> c = PipelineConfigFor(model, job);
  if (!c.ok()) return c.status();
  return ComposeBatchTime(*c, models);
}

}  // namespace fmte
