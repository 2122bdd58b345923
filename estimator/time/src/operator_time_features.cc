// Features and analytic work of each sampled operator (shapes after TP splitting, as the seed's
// Estimator/layer_input_to_predictor_input.py maps its sampling grid (mp, b, h, l, dim) to kernel
// shapes). One definition serves training (learn/src/operator_data.cc) and prediction.
#include <algorithm>
#include <cmath>

#include "fmte/operator_time.h"

namespace fmte {
namespace {

float L2(double v) { return static_cast<float>(std::log2(std::max(v, 1e-30))); }

enum class Kind {
  kEmbedding,
  kRowwise,
  kGemm,
  kRope,
  kFlash,
  kBmm,
  kScores,
  kFillmask,
  kCrossEntropy,
  kGelu,
  kOptimizer,
};

struct OpInfo {
  const char* name;
  Kind kind;
  bool passes;  // fwd/bwd (else one "dur" regressor)
};

constexpr OpInfo kOps[] = {
    {"embedding", Kind::kEmbedding, true},
    {"layernorm", Kind::kRowwise, true},
    {"RMSlayernorm", Kind::kRowwise, true},
    {"res_add", Kind::kRowwise, true},
    {"linear1", Kind::kGemm, true},
    {"linear2", Kind::kGemm, true},
    {"linear3", Kind::kGemm, true},
    {"linear4", Kind::kGemm, true},
    {"linear_final", Kind::kGemm, true},
    {"RoPE", Kind::kRope, true},
    {"flash_atten", Kind::kFlash, true},
    {"baddbmm", Kind::kBmm, true},
    {"bmm", Kind::kBmm, true},
    {"softmax", Kind::kScores, true},
    {"ScaledUpperTriangMaskedSoftmax", Kind::kScores, true},
    {"fillmask", Kind::kFillmask, true},
    {"parallel_cross_entropy_128", Kind::kCrossEntropy, true},
    {"gelu", Kind::kGelu, true},
    {"firstStage_optimizer", Kind::kOptimizer, false},
    {"middleStage_optimizer", Kind::kOptimizer, false},
    {"lastStage_optimizer", Kind::kOptimizer, false},
};

const OpInfo* Find(std::string_view op) {
  for (const OpInfo& o : kOps) {
    if (op == o.name) return &o;
  }
  return nullptr;
}

// Parameters of one layer on one GPU as the seed counts them (mml_3d_prediction.py
// get_encoder_parameters: two norms of 2*dim, biased QKV/out/MLP linears split by tp).
double SeedLayerParams(const OperatorConfig& c) {
  const double d = c.hidden, t = c.tp, f = c.Ffn();
  const double up = c.gated_mlp ? 2 * f : f;
  return 2 * (2 * d) + std::floor(c.QkvOut() * (d + 1) / t) + std::floor(d * (d + 1) / t) +
         std::floor(up * (d + 1) / t) + std::floor(d * (f + 1) / t);
}

// GEMM (m, k, n) of a linear, per GPU.
void GemmShape(std::string_view op, const OperatorConfig& c, double* m, double* k, double* n) {
  const double tokens = c.micro_batch * c.seq_len, d = c.hidden, t = c.tp, f = c.Ffn();
  *m = tokens;
  if (op == "linear1") {
    *k = d, *n = c.QkvOut() / t;
  } else if (op == "linear2") {
    *k = d / t, *n = d;
  } else if (op == "linear3") {
    *k = d, *n = (c.gated_mlp ? 2 * f : f) / t;
  } else if (op == "linear4") {
    *k = f / t, *n = d;
  } else {  // linear_final
    *k = d, *n = c.VocabPartition();
  }
}

}  // namespace

double OperatorConfig::VocabPartition() const { return std::ceil(vocab / (128 * tp)) * 128; }

const std::vector<std::string>& KnownOperators() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const OpInfo& o : kOps) v.emplace_back(o.name);
    return v;
  }();
  return names;
}

bool OperatorHasPasses(std::string_view op) {
  const OpInfo* o = Find(op);
  return o != nullptr && o->passes;
}

std::string_view ToString(Pass p) {
  switch (p) {
    case Pass::kFwd:
      return "fwd";
    case Pass::kBwd:
      return "bwd";
    case Pass::kDur:
      return "dur";
  }
  return "dur";
}

std::vector<std::string> OperatorFeatureNames(std::string_view op) {
  const OpInfo* o = Find(op);
  if (o == nullptr) return {};
  switch (o->kind) {
    case Kind::kEmbedding:
      return {"log2_tokens", "log2_vocab_per_gpu", "log2_hidden"};
    case Kind::kRowwise:
      return {"log2_tokens", "log2_hidden", "log2_micro_batch"};
    case Kind::kGemm:
      return {"log2_m", "log2_k", "log2_n"};
    case Kind::kRope:
      return {"log2_tokens", "log2_heads_per_gpu", "log2_head_dim"};
    case Kind::kFlash:
      return {"log2_micro_batch", "log2_seq", "log2_heads_per_gpu", "log2_head_dim"};
    case Kind::kBmm:
      return {"log2_batch_heads", "log2_seq", "log2_head_dim"};
    case Kind::kScores:
      return {"log2_batch_heads", "log2_seq"};
    case Kind::kFillmask:
      return {"log2_batch_heads", "log2_seq", "log2_hidden"};
    case Kind::kCrossEntropy:
      return {"log2_tokens", "log2_vocab_per_gpu"};
    case Kind::kGelu:
      return {"log2_tokens", "log2_ffn_per_gpu"};
    case Kind::kOptimizer:
      return {"log2_params", "log2_tp", "log2_hidden", "layers"};
  }
  return {};
}

Result<int> OperatorFeatures(std::string_view op, const OperatorConfig& c,
                             std::span<float, kMaxOperatorFeatures> x, double* work) {
  const OpInfo* o = Find(op);
  if (o == nullptr) {
    std::string known;
    for (const OpInfo& k : kOps) known += std::string(known.empty() ? "" : ", ") + k.name;
    return Status::NotFound("operator '" + std::string(op) + "': expected one of " + known);
  }
  if (!(c.tp >= 1 && c.micro_batch >= 1 && c.heads >= 1 && c.seq_len >= 1 && c.hidden >= 1)) {
    return Status::InvalidArgument("operator '" + std::string(op) +
                                   "': tp, micro_batch, heads, seq_len and hidden must be >= 1");
  }
  const double tokens = c.micro_batch * c.seq_len;
  const double heads_per_gpu = std::max(1.0, std::floor(c.heads / c.tp));
  const double head_dim = c.hidden / c.heads;
  switch (o->kind) {
    case Kind::kEmbedding:
      x[0] = L2(tokens), x[1] = L2(c.VocabPartition()), x[2] = L2(c.hidden);
      *work = tokens * c.hidden + c.VocabPartition() * c.hidden;  // gather + weight-gradient
      return 3;
    case Kind::kRowwise:
      x[0] = L2(tokens), x[1] = L2(c.hidden), x[2] = L2(c.micro_batch);
      *work = tokens * c.hidden;
      return 3;
    case Kind::kGemm: {
      double m, k, n;
      GemmShape(op, c, &m, &k, &n);
      x[0] = L2(m), x[1] = L2(k), x[2] = L2(n);
      *work = 2 * m * k * n;  // FLOPs
      return 3;
    }
    case Kind::kRope:
      x[0] = L2(tokens), x[1] = L2(heads_per_gpu), x[2] = L2(head_dim);
      *work = tokens * heads_per_gpu * head_dim;
      return 3;
    case Kind::kFlash:
      x[0] = L2(c.micro_batch), x[1] = L2(c.seq_len), x[2] = L2(heads_per_gpu), x[3] = L2(head_dim);
      *work = 4 * c.micro_batch * heads_per_gpu * c.seq_len * c.seq_len * head_dim;  // QK^T + PV
      return 4;
    case Kind::kBmm:
      x[0] = L2(c.micro_batch * heads_per_gpu), x[1] = L2(c.seq_len), x[2] = L2(head_dim);
      *work = 2 * c.micro_batch * heads_per_gpu * c.seq_len * c.seq_len * head_dim;
      return 3;
    case Kind::kScores:
      x[0] = L2(c.micro_batch * heads_per_gpu), x[1] = L2(c.seq_len);
      *work = c.micro_batch * heads_per_gpu * c.seq_len * c.seq_len;
      return 2;
    case Kind::kFillmask:
      x[0] = L2(c.micro_batch * heads_per_gpu), x[1] = L2(c.seq_len), x[2] = L2(c.hidden);
      *work = c.micro_batch * heads_per_gpu * c.seq_len * c.seq_len;
      return 3;
    case Kind::kCrossEntropy:
      x[0] = L2(tokens), x[1] = L2(c.VocabPartition());
      *work = tokens * c.VocabPartition();
      return 2;
    case Kind::kGelu: {
      const double f = c.Ffn() / c.tp;
      x[0] = L2(tokens), x[1] = L2(f);
      *work = tokens * f;
      return 2;
    }
    case Kind::kOptimizer: {
      double params = c.params;
      if (params <= 0) {
        // The seed's stage parameter counts (mml_3d_prediction.py: head = embedding + layers,
        // tail = layers + final norm (2*dim) + output layer).
        params = c.layers * SeedLayerParams(c);
        if (op == "firstStage_optimizer") params += c.VocabPartition() * c.hidden;
        if (op == "lastStage_optimizer") params += 2 * c.hidden + c.VocabPartition() * c.hidden;
      }
      x[0] = L2(params), x[1] = L2(c.tp), x[2] = L2(c.hidden), x[3] = static_cast<float>(c.layers);
      *work = params;
      return 4;
    }
  }
  return Status::Internal("unhandled operator kind");
}

int CollectiveFeatures(double elements, int64_t nodes, int64_t gpus_per_node, bool pooled,
                       std::span<float, kMaxOperatorFeatures> x, double* work) {
  x[0] = L2(elements);
  *work = std::max(elements, 1.0);
  if (!pooled) return 1;
  x[1] = static_cast<float>(nodes);
  x[2] = static_cast<float>(gpus_per_node);
  x[3] = L2(static_cast<double>(nodes * gpus_per_node));
  return 4;
}

}  // namespace fmte
