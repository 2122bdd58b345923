// The seed's target_config/*.yml reader (a Python-dict literal with comments) and the mapping of
// an fmte job onto the same configuration.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "fmte/operator_time.h"

namespace fmte {
namespace {

using nlohmann::json;

// Python-dict literal -> JSON text: drop '#' comments, single quotes -> double quotes, trailing
// commas before '}' or ']' removed.
std::string DictLiteralToJson(std::string_view text) {
  std::string out;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      out += c == '\'' && quote == '\'' ? '"' : c;
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      out += '"';
      continue;
    }
    out += c;
  }
  std::string cleaned;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == ',') {
      size_t j = i + 1;
      while (j < out.size() && std::isspace(static_cast<unsigned char>(out[j]))) ++j;
      if (j < out.size() && (out[j] == '}' || out[j] == ']')) continue;
    }
    cleaned += out[i];
  }
  return cleaned;
}

// Counts in a DTE config (layers, syncs, parallel degrees, sizes) are bounded so that every product
// the operator model forms of two of them stays inside int64_t; 1e9 is far above any real value.
constexpr double kMaxConfigCount = 1e9;

Status ReadInt(const json& doc, const char* key, int64_t* out, bool required) {
  auto it = doc.find(key);
  if (it == doc.end()) {
    return required ? Status::InvalidArgument(std::string(key) + ": missing") : Status::Ok();
  }
  if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= kMaxConfigCount) ||
      it->get<double>() != std::floor(it->get<double>())) {
    return Status::InvalidArgument(std::string(key) + ": expected an integer in [0, 1e9], got " +
                                   it->dump());
  }
  *out = it->get<int64_t>();
  return Status::Ok();
}

Status ReadStrings(const json& doc, const char* key, std::vector<std::string>* out) {
  auto it = doc.find(key);
  if (it == doc.end()) return Status::Ok();
  if (!it->is_array())
    return Status::InvalidArgument(std::string(key) + ": expected a list of names");
  out->clear();
  for (const json& v : *it) {
    if (!v.is_string())
      return Status::InvalidArgument(std::string(key) + ": expected names, got " + v.dump());
    out->push_back(v.get<std::string>());
  }
  return Status::Ok();
}

}  // namespace

Result<PipelineConfig> ParsePipelineConfig(std::string_view text) {
  json doc;
  const std::string converted = DictLiteralToJson(text);
  try {
    doc = json::parse(converted);
  } catch (const json::parse_error& e) {
    // The conversion keeps the lines: name the line of the user's file, not the parser's jargon.
    const size_t at = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, converted.size());
    const auto line = 1 + std::count(converted.begin(), converted.begin() + at, '\n');
    return Status::ParseError(
        "training config: line " + std::to_string(line) +
        ": expected the seed's target_config, a Python dict literal such as "
        "{'training_config': [pp, mp, dp, b, h, l, dim, steps_per_update, gpus_per_node], "
        "'function_list': [...], ...}");
  } catch (const json::exception& e) {
    // Well-formed but not representable: a number beyond a double (5E5555) is nlohmann's
    // out_of_range 406, not a parse_error (found by fuzz_dte_config: it escaped as an uncaught
    // exception and ended fmte-advise).
    return Status::ParseError(std::string("training config: a number is out of range (") +
                              e.what() + ")");
  }
  if (!doc.is_object()) return Status::ParseError("training config: expected a {...} mapping");
  PipelineConfig c;
  auto tc = doc.find("training_config");
  if (tc == doc.end() || !tc->is_array() || tc->size() != 9) {
    return Status::InvalidArgument(
        "training_config: expected 9 integers [pp, mp, dp, b, h, l, dim, steps_per_update, "
        "gpus_per_node]");
  }
  int64_t* fields[9] = {&c.pp,           &c.tp,      &c.dp,     &c.micro_batch,
                        &c.heads,        &c.seq_len, &c.hidden, &c.micro_batches,
                        &c.gpus_per_node};
  static const char* kNames[9] = {
      "pp", "mp", "dp", "b", "h", "l", "dim", "steps_per_update", "gpus_per_node"};
  for (size_t i = 0; i < 9; ++i) {
    const json& v = (*tc)[i];
    if (!v.is_number_integer() || !(v.get<double>() >= 1 && v.get<double>() <= kMaxConfigCount)) {
      return Status::InvalidArgument(std::string("training_config[") + std::to_string(i) + "] (" +
                                     kNames[i] + "): expected an integer in [1, 1e9], got " +
                                     v.dump());
    }
    *fields[i] = v.get<int64_t>();
  }
  FMTE_RETURN_IF_ERROR(ReadInt(doc, "encoders", &c.encoders, true));
  FMTE_RETURN_IF_ERROR(ReadInt(doc, "fwd_syncs", &c.fwd_syncs, false));
  FMTE_RETURN_IF_ERROR(ReadInt(doc, "bwd_syncs", &c.bwd_syncs, false));
  if (auto it = doc.find("comm_bucket"); it != doc.end()) {
    if (!it->is_number() || !(it->get<double>() >= 1 && it->get<double>() <= 1e15)) {
      return Status::InvalidArgument("comm_bucket: expected a number of elements in [1, 1e15]");
    }
    c.comm_bucket = it->get<double>();
  }
  FMTE_RETURN_IF_ERROR(ReadStrings(doc, "function_list", &c.function_list));
  FMTE_RETURN_IF_ERROR(ReadStrings(doc, "encoder_function_list", &c.encoder_function_list));
  if (c.encoder_function_list.empty()) {
    return Status::InvalidArgument("encoder_function_list: expected the operators of one layer");
  }
  for (const char* key : {"layernorm_name", "gpu_name"}) {
    auto it = doc.find(key);
    if (it == doc.end()) continue;
    if (!it->is_string()) return Status::InvalidArgument(std::string(key) + ": expected a name");
    (std::string_view(key) == "gpu_name" ? c.gpu_name : c.layernorm_name) = it->get<std::string>();
  }
  if (c.encoders < 1) return Status::InvalidArgument("encoders: expected at least 1 layer");
  return c;
}

Result<PipelineConfig> PipelineConfigFor(const ModelArch& model, const TrainingJob& job) {
  Status v = ValidateJob(job);
  if (!v.ok()) return v;
  if (job.cp > 1)
    return Status::Unsupported(
        "--cp: the operator-level model (the Distributed Training Estimator's) has no context "
        "parallelism");
  // The online objectives' update is one sequence per completion with no other forward: timed as
  // a supervised step (their generation is not modelled anywhere).
  if (job.SequencesPerSample() != 1 || job.ExtraForwardPasses() != 0)
    return Status::Unsupported(
        "--objective: the operator-level model (the Distributed Training Estimator's) times "
        "supervised steps, not " +
        std::string(ToString(job.objective)) + "'s pairs and reference forwards");
  if (model.hidden_size <= 0 || model.num_heads <= 0 || model.num_layers <= 0) {
    return Status::InvalidArgument("model " + model.id + ": hidden size, heads and layers needed");
  }
  PipelineConfig c;
  c.pp = job.pp;
  c.tp = job.tp;
  c.dp = job.DataParallel();
  c.micro_batch = job.micro_batch;
  c.heads = model.num_heads;
  c.seq_len = job.seq_len;
  c.hidden = model.hidden_size;
  // Micro-batches per step per pipeline (Megatron: global batch / (micro-batch x dp)).
  c.micro_batches =
      job.global_batch > 0 ? job.global_batch / (job.micro_batch * c.dp) : job.grad_accum;
  if (c.micro_batches < 1) {
    return Status::InvalidArgument("--global-batch: expected at least micro-batch x dp sequences");
  }
  c.gpus_per_node = job.EffectiveGpusPerNode();
  c.encoders = model.num_layers;
  c.ffn = static_cast<double>(model.intermediate_size > 0 ? model.intermediate_size
                                                          : 4 * model.hidden_size);
  c.gated_mlp = model.gated_mlp;
  const int64_t head_dim =
      model.head_dim > 0 ? model.head_dim : model.hidden_size / model.num_heads;
  const int64_t kv = model.num_kv_heads > 0 ? model.num_kv_heads : model.num_heads;
  c.qkv_out = static_cast<double>((model.num_heads + 2 * kv) * head_dim);
  c.vocab = static_cast<double>(model.vocab_size > 0 ? model.vocab_size : 50257);
  c.layernorm_name = model.norm == NormKind::kRms ? "RMSlayernorm" : "layernorm";
  const bool fused = AttentionUsed(model, job) == Attention::kFused;
  const std::string attention = fused ? "flash_atten" : "baddbmm";
  c.encoder_function_list = {c.layernorm_name, "linear1",        "RoPE",    attention,
                             "linear2",        c.layernorm_name, "res_add", "linear3",
                             "gelu",           "linear4",        "res_add"};
  if (!fused) {
    // Eager attention: scores (baddbmm), masked softmax, weighted values (bmm).
    c.encoder_function_list.insert(c.encoder_function_list.begin() + 4,
                                   {"ScaledUpperTriangMaskedSoftmax", "bmm"});
  }
  c.recompute = job.activation_checkpointing == Checkpointing::kFull;
  c.seed_partition = false;
  c.fwd_syncs = c.bwd_syncs = 2;  // Megatron TP: 2 all-reduces/layer each way (docs/formulas.md §5)
  return c;
}

}  // namespace fmte
