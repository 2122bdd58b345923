#include "output.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace fmte::tools {
namespace {

std::string Printf2(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, unit);
  return buf;
}

// A share such as 0.3 or 0.45, as a user writes it.
std::string FormatShare(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", share);
  return buf;
}

std::string Joined(const std::vector<int>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + std::to_string(v[i]);
  return out;
}

}  // namespace

std::string FormatGiB(int64_t bytes) {
  return Printf2(static_cast<double>(bytes) / (1ull << 30), "GiB");
}

std::string FormatBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024 && bytes > -1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while ((v >= 1024 || v <= -1024) && u + 1 < std::size(kUnits)) v /= 1024, ++u;
  return Printf2(v, kUnits[u]);
}

std::string FormatCount(double n) {
  if (n >= 1e12) return Printf2(n / 1e12, "T");
  if (n >= 1e9) return Printf2(n / 1e9, "B");
  if (n >= 1e6) return Printf2(n / 1e6, "M");
  if (n >= 1e4) return Printf2(n / 1e3, "K");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

std::string ModelTypeText(const ModelArch& model) {
  return model.multimodal_type.empty() ? model.model_type
                                       : model.multimodal_type + ": " + model.model_type;
}

void TextTable::Print(std::ostream& os) const {
  std::vector<size_t> width;
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      if (i > 0) line += "  ";
      line += i < align_.size() && align_[i] == 'r' ? pad + row[i] : row[i] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

nlohmann::json JobJson(const TrainingJob& job) {
  nlohmann::json j;
  j["model"] = job.model;
  j["method"] = ToString(job.method);
  j["precision"] = ToString(job.precision);
  j["optimizer"] = ToString(job.optimizer);
  j["framework"] = ToString(job.framework);
  j["micro_batch"] = job.micro_batch;
  j["eval_batch"] = job.eval_batch;
  j["seq_len"] = job.seq_len;
  if (job.seq_len_is_cap) j["seq_len_is_cap"] = true;  // a truncation limit (job.h)
  j["grad_accum"] = job.grad_accum;
  j["gpus"] = job.gpus;
  j["gpus_per_node"] = job.EffectiveGpusPerNode();
  j["nodes"] = job.Nodes();
  j["gpu"] = job.gpu;
  j["sharding"] = ToString(job.sharding);
  j["offload_optimizer"] = job.offload_optimizer;
  j["offload_params"] = job.offload_params;
  j["tp"] = job.tp;
  j["pp"] = job.pp;
  j["vpp"] = job.vpp;
  j["ep"] = job.ep;
  j["etp"] = job.ExpertTensorParallel();
  j["cp"] = job.cp;
  j["fp8"] = ToString(job.fp8);
  j["moe_dispatcher"] = ToString(job.moe_dispatcher);
  j["objective"] = ToString(job.objective);
  j["precompute_ref"] = job.reference_precomputed;
  j["kl_reference"] = job.kl_reference;
  j["critic"] = job.critic;
  j["completion_len"] = job.completion_len;
  j["generation_memory"] = job.generation_memory;
  j["generation_sleeps"] = job.generation_sleeps;
  j["generation_batch"] = job.generation_batch;
  j["generation_gathers"] = job.generation_gathers;
  j["fp8_param_gather"] = job.fp8_params;
  j["grad_reduce_in_bf16"] = job.grad_reduce_bf16;
  j["optimizer_states_bf16"] = job.optimizer_states_bf16;
  j["sync_each_batch"] = job.sync_each_batch;
  j["kbit_upcast"] = job.kbit_upcast;
  j["freeze_vision"] = job.freeze_vision;
  j["freeze_language"] = job.freeze_language;
  j["fsdp_frozen_grads"] = job.fsdp_frozen_grads;
  j["bnb_ctx_inputs"] = job.bnb_ctx_inputs;
  j["quantize_experts"] = job.quantize_experts;
  j["dp"] = job.DataParallel();
  j["sp"] = job.sequence_parallel;
  j["activation_checkpointing"] = ToString(job.activation_checkpointing);
  j["recompute_method"] = ToString(job.recompute_method);
  j["recompute_num_layers"] = job.recompute_num_layers;
  j["recompute_modules"] =
      job.recompute_modules != 0 ? RecomputeModulesText(job.recompute_modules) : "core_attn";
  j["attention"] = ToString(job.attention);
  j["state_dict"] = ToString(job.state_dict);
  j["optimizer_impl"] = ToString(job.optimizer_impl);
  j["chunked_loss"] = job.chunked_loss;
  j["compile"] = job.compile;
  j["activation_offload"] = job.activation_offload;
  j["optimizer_in_backward"] = job.optimizer_in_backward;
  if (job.method == Method::kLora || job.method == Method::kQlora) {
    j["lora_r"] = job.lora_r;
    j["lora_dropout"] = job.lora_dropout;
    j["lora_targets"] = job.lora_targets;
  }
  if (job.save_embedding || job.save_head) {
    nlohmann::json saved = nlohmann::json::array();
    if (job.save_embedding) saved.push_back("embed_tokens");
    if (job.save_head) saved.push_back("lm_head");
    j["modules_to_save"] = std::move(saved);
  }
  if (job.method == Method::kQlora) {
    j["quant"] = ToString(job.quant == Quant::kNone ? Quant::kNf4 : job.quant);
    j["double_quant"] = job.double_quant;
  }
  if (job.method == Method::kPromptTuning || job.method == Method::kPrefixTuning)
    j["virtual_tokens"] = job.virtual_tokens;
  // Amount of work, when given.
  if (job.tokens > 0) j["tokens"] = job.tokens;
  if (job.samples > 0) j["samples"] = job.samples;
  if (job.epochs > 0) j["epochs"] = job.epochs;
  if (job.steps > 0) j["steps"] = job.steps;
  if (job.save_every.unit != Every::Unit::kUnset) j["save_every"] = ToString(job.save_every);
  if (job.eval_every.unit != Every::Unit::kUnset) j["eval_every"] = ToString(job.eval_every);
  if (job.eval_samples > 0) j["eval_samples"] = job.eval_samples;
  if (job.global_batch > 0) j["global_batch"] = job.global_batch;
  if (!job.cluster.empty()) j["cluster"] = job.cluster;
  if (job.inter_node_gbps > 0) j["inter_node_gbps"] = job.inter_node_gbps;
  return j;
}

nlohmann::json EstimateJson(const ModelArch& model, const TrainingJob& job, const GpuSpec& gpu,
                            const JobEstimate& estimate) {
  const MemoryEstimate& m = estimate.memory;
  nlohmann::json doc;
  doc["model"] = {{"id", model.id},
                  {"model_type", model.model_type},
                  {"layers", model.num_layers},
                  {"hidden_size", model.hidden_size},
                  {"heads", model.num_heads},
                  {"kv_heads", model.num_kv_heads},
                  {"vocab_size", model.vocab_size}};
  if (!model.multimodal_type.empty()) doc["model"]["multimodal_type"] = model.multimodal_type;
  doc["job"] = JobJson(job);
  doc["job"]["attention"] = ToString(AttentionUsed(model, job));  // a config may pin eager
  doc["gpu"] = {{"name", gpu.name}, {"memory_bytes", gpu.memory_bytes}};
  doc["params"] = {{"total", m.params.total},         {"trainable", m.trainable_params},
                   {"embedding", m.params.embedding}, {"lm_head", m.params.lm_head},
                   {"blocks", m.params.blocks},       {"vision", m.params.vision},
                   {"active", m.params.active},       {"largest_module", m.params.largest_module}};
  nlohmann::json mem;
  mem["per_gpu_bytes"] = m.per_gpu_bytes;
  mem["allocator_peak_bytes"] = m.allocator_peak_bytes;
  mem["allocated_peak_bytes"] = m.allocated_peak_bytes;
  mem["cuda_context_bytes"] = m.cuda_context_bytes;
  mem["gpu_capacity_bytes"] = m.gpu_capacity_bytes;
  mem["fits"] = m.fits;
  mem["bound_bytes"] = m.bound_bytes;
  mem["low_bytes"] = m.low_bytes;
  mem["cpu_bytes_per_node"] = m.cpu_bytes_per_node;
  mem["peak_phase"] = m.peak_phase;
  auto breakdown = [](const MemoryBreakdown& b) {
    return nlohmann::json{
        {"weights", b.weights},         {"gradients", b.gradients}, {"optimizer", b.optimizer},
        {"activations", b.activations}, {"logits", b.logits},       {"other", b.other},
        {"reference", b.reference},     {"critic", b.critic},       {"generation", b.generation}};
  };
  mem["breakdown"] = breakdown(m.breakdown);
  mem["layers_per_stage"] = m.layers_per_stage;
  mem["heaviest_stage"] = m.heaviest_stage;
  mem["ranks"] = nlohmann::json::array();
  for (const MemoryRank& r : m.ranks)
    mem["ranks"].push_back({{"stage", r.stage},
                            {"layers", r.layers},
                            {"embedding", r.embedding},
                            {"head", r.head},
                            {"per_gpu_bytes", r.per_gpu_bytes},
                            {"peak_phase", r.peak_phase},
                            {"breakdown", breakdown(r.breakdown)}});
  mem["phases"] = nlohmann::json::array();
  for (const MemoryPhase& p : m.phases)
    mem["phases"].push_back({{"name", p.name},
                             {"per_gpu_bytes", p.per_gpu_bytes},
                             {"allocated_bytes", p.allocated_bytes},
                             {"host_bytes", p.host_bytes}});
  doc["memory"] = std::move(mem);
  AddTimeJson(doc, job, estimate);  // output_time.cc
  return doc;
}

void PrintEstimate(std::ostream& os, const ModelArch& model, const TrainingJob& job,
                   const GpuSpec& gpu, const JobEstimate& estimate) {
  const MemoryEstimate& m = estimate.memory;
  TextTable head;
  head.AddRow({"model", model.id + " (" + ModelTypeText(model) + ", " +
                            std::to_string(model.num_layers) + " layers, hidden " +
                            std::to_string(model.hidden_size) + ")"});
  std::string params = FormatCount(static_cast<double>(m.params.total)) + " total, " +
                       FormatCount(static_cast<double>(m.trainable_params)) + " trainable";
  if (m.params.vision > 0)
    params += "; vision encoder " + FormatCount(static_cast<double>(m.params.vision)) +
              " (image activations not counted: images are in the data)";
  head.AddRow({"params", params});
  std::string method(ToString(job.method));
  if (job.method == Method::kLora || job.method == Method::kQlora)
    method += " r=" + std::to_string(job.lora_r);
  if (job.method == Method::kQlora)
    method += std::string(" ") +
              std::string(ToString(job.quant == Quant::kNone ? Quant::kNf4 : job.quant)) +
              (job.double_quant ? "+dq" : "");
  std::string objective;
  if (job.objective != Objective::kSft) {
    objective = ", objective " + std::string(ToString(job.objective));
    const bool reference =
        UsesReference(job.objective) || (GeneratesCompletions(job.objective) && job.kl_reference);
    if (job.KeepsReferenceModel())
      objective += " (reference model)";
    else if (UsesReference(job.objective) && job.reference_precomputed)
      objective += " (reference precomputed)";
    else if (reference)
      objective += " (reference: the base, adapters off)";
  }
  head.AddRow({"job", method + ", " + std::string(ToString(job.precision)) + ", " +
                          std::string(ToString(job.optimizer)) + ", framework " +
                          std::string(ToString(job.framework)) + objective});
  head.AddRow({"batch", "micro-batch " + std::to_string(job.micro_batch) +
                            (job.SequencesPerSample() > 1 ? " pairs (chosen + rejected)" : "") +
                            " x seq-len " + std::to_string(job.seq_len) + ", grad-accum " +
                            std::to_string(job.grad_accum)});
  std::string layout = std::to_string(job.gpus) + " x " + gpu.name + " (" +
                       std::to_string(job.Nodes()) + (job.Nodes() > 1 ? " nodes" : " node") +
                       " x " + std::to_string(job.EffectiveGpusPerNode()) + "), tp " +
                       std::to_string(job.tp) +
                       (job.cp > 1 ? " cp " + std::to_string(job.cp) : std::string()) + " pp " +
                       std::to_string(job.pp) + " dp " + std::to_string(job.DataParallel()) +
                       ", sharding " + std::string(ToString(job.sharding));
  if (job.vpp > 1) layout += ", vpp " + std::to_string(job.vpp);
  if (job.ep > 1) layout += ", ep " + std::to_string(job.ep);
  if (job.etp > 0 && job.etp != job.tp) layout += ", etp " + std::to_string(job.etp);
  if (job.sequence_parallel) layout += ", sp";
  if (job.offload_optimizer) layout += ", offload optimizer";
  if (job.offload_params) layout += ", offload params";
  head.AddRow({"layout", layout});
  std::string savers = "checkpointing " + std::string(ToString(job.activation_checkpointing));
  if (job.activation_checkpointing == Checkpointing::kFull &&
      (job.recompute_method != RecomputeMethod::kUniform || job.recompute_num_layers != 1))
    savers += " (" + std::string(ToString(job.recompute_method)) + " " +
              std::to_string(job.recompute_num_layers) + ")";
  if (job.activation_checkpointing == Checkpointing::kSelective && job.recompute_modules != 0)
    savers += " (" + RecomputeModulesText(job.recompute_modules) + ")";
  savers += ", attention " + std::string(ToString(AttentionUsed(model, job)));
  if (job.chunked_loss) savers += ", chunked loss";
  if (job.compile) savers += ", compile";
  if (job.fp8 != Fp8::kNone) savers += ", fp8 " + std::string(ToString(job.fp8));
  if (job.fp8_params) savers += ", fp8 weights";
  if (job.grad_reduce_bf16) savers += ", bf16 gradients";
  if (job.optimizer_states_bf16) savers += ", bf16 optimizer states";
  if (job.activation_offload) savers += ", activation offload";
  if (job.optimizer_in_backward) savers += ", optimizer in backward";
  head.AddRow({"memory savers", savers});
  head.Print(os);

  os << "\nmemory per GPU (busiest GPU" << (m.peak_phase.empty() ? "" : ", peak at " + m.peak_phase)
     << ")\n";
  TextTable t("lrl");
  t.AddRow({"  weights", FormatGiB(m.breakdown.weights)});
  t.AddRow({"  gradients", FormatGiB(m.breakdown.gradients)});
  t.AddRow({"  optimizer", FormatGiB(m.breakdown.optimizer)});
  t.AddRow({"  activations", FormatGiB(m.breakdown.activations)});
  t.AddRow({"  logits + loss", FormatGiB(m.breakdown.logits)});
  t.AddRow({"  other", FormatGiB(m.breakdown.other)});
  if (m.breakdown.reference > 0)
    t.AddRow({"  reference model", FormatGiB(m.breakdown.reference), "(frozen, no gradients)"});
  if (m.breakdown.critic > 0)
    t.AddRow({"  critic (value model)", FormatGiB(m.breakdown.critic),
              "(weights and optimizer, resident)"});
  if (m.breakdown.generation > 0)
    t.AddRow({"  generation engine", FormatGiB(m.breakdown.generation),
              "(" + FormatShare(job.generation_memory) + " of the GPU" +
                  (job.generation_sleeps ? ", while it generates)" : ", held throughout)")});
  t.AddRow({"  allocator peak", FormatGiB(m.allocator_peak_bytes), "(max_memory_reserved)"});
  t.AddRow({"  CUDA context, NCCL", FormatGiB(m.cuda_context_bytes)});
  t.AddRow({"  total per GPU", FormatGiB(m.per_gpu_bytes),
            "of " + FormatGiB(m.gpu_capacity_bytes) + " on " + gpu.name});
  t.AddRow({"  fits", m.fits ? "yes" : "no"});
  t.AddRow({"  range", FormatGiB(m.low_bytes) + " - " + FormatGiB(m.bound_bytes),
            "(measured peaks of published runs vs fmte)"});
  if (job.MayCoverFrozenWeights() && !job.GradientsCoverFrozenWeights())
    t.AddRow({"", "", "(top: litgpt <= 0.5.8, whole blocks per FSDP unit: --fsdp-frozen-grads)"});
  if (m.cpu_bytes_per_node > 0)
    t.AddRow({"  host memory per node", FormatGiB(m.cpu_bytes_per_node), "(offloaded state)"});
  for (const MemoryPhase& p : m.phases)
    if (p.host_bytes > 0)
      t.AddRow({"  checkpoint save", FormatGiB(p.host_bytes),
                "host memory of rank 0's node (full state dict; --state-dict sharded: none)"});
  t.Print(os);
  if (m.layers_per_stage.size() > 1) {
    os << "\npipeline: " << m.layers_per_stage.size() << " stages holding "
       << Joined(m.layers_per_stage, ", ") << " layers; heaviest (reported) stage "
       << m.heaviest_stage << "\n";
    TextTable ranks("lrrrrrrl");
    ranks.AddRow(
        {"  stage", "layers", "weights", "grads", "optimizer", "activations", "total", "holds"});
    for (const MemoryRank& r : m.ranks)
      ranks.AddRow({"  " + std::to_string(r.stage), std::to_string(r.layers),
                    FormatGiB(r.breakdown.weights + r.breakdown.reference),
                    FormatGiB(r.breakdown.gradients), FormatGiB(r.breakdown.optimizer),
                    FormatGiB(r.breakdown.activations + r.breakdown.logits),
                    FormatGiB(r.per_gpu_bytes),
                    std::string(r.embedding ? "embedding " : "") + (r.head ? "head, loss" : "")});
    ranks.Print(os);
  }
  std::ostringstream time;
  PrintTime(time, job, estimate);  // output_time.cc (prints nothing without a time)
  if (!time.str().empty()) os << "\n" << time.str();
}

}  // namespace fmte::tools
