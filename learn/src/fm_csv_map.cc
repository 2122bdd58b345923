// FM Training Estimator rows as fmte jobs (fm_csv.h): model, GPU, method and layout the FM
// estimator assumes, and the measured step time and memory.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "fmte/learn/fm_csv.h"
#include "fmte/text.h"

namespace fmte::learn {
namespace {

// HF architecture class -> config model_type, and the vocabulary size of that config class's
// defaults in transformers (used only when no catalog model has the row's shape). Dense families
// only: MoE rows lack the expert columns.
struct ArchClass {
  const char* architecture;
  const char* model_type;
  int64_t default_vocab;
};
constexpr ArchClass kArchClasses[] = {
    {"LlamaForCausalLM", "llama", 32000},     {"MistralForCausalLM", "mistral", 32000},
    {"GraniteForCausalLM", "granite", 32000}, {"Qwen2ForCausalLM", "qwen2", 151936},
    {"Qwen3ForCausalLM", "qwen3", 151936},    {"GemmaForCausalLM", "gemma", 256000},
    {"Gemma2ForCausalLM", "gemma2", 256000},  {"Phi3ForCausalLM", "phi3", 32064},
};

std::string ArchList() {
  std::string s;
  for (const ArchClass& a : kArchClasses)
    s += (s.empty() ? "" : ", ") + std::string(a.architecture);
  return s;
}

Result<ModelArch> ArchFromName(const FmCsvRow& row, const Catalogs& catalogs, std::string* source) {
  Result<const ModelArch*> found = catalogs.models.Find(row.model_name);
  if (found.ok()) {
    *source = "catalog " + (*found)->id;
    return **found;
  }
  // Suggest by edit distance on the whole id and on the name after the organisation.
  std::vector<std::pair<size_t, std::string>> scored;
  const std::string_view name =
      std::string_view(row.model_name).substr(row.model_name.rfind('/') + 1);
  for (const std::string& id : catalogs.models.Ids()) {
    const std::string_view short_id = std::string_view(id).substr(id.rfind('/') + 1);
    scored.emplace_back(std::min(EditDistance(row.model_name, id), EditDistance(name, short_id)),
                        id);
  }
  std::sort(scored.begin(), scored.end());
  std::string near;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) near += (i ? ", " : "") + scored[i].second;
  return Status::NotFound("model_name: '" + row.model_name + "' is not in the model catalog" +
                          (near.empty() ? "" : "; closest: " + near) +
                          " (add its config.json under etc/models/<org>/<name>/)");
}

Result<ModelArch> ArchFromColumns(const FmCsvRow& row, const Catalogs& catalogs, int64_t vocab_flag,
                                  std::string* source) {
  const ArchClass* cls = nullptr;
  for (const ArchClass& a : kArchClasses) {
    if (row.model_arch == a.architecture) cls = &a;
  }
  if (cls == nullptr) {
    return Status::Unsupported("model_arch: '" + row.model_arch +
                               "' is not a dense architecture fmte can build from "
                               "these columns (" +
                               ArchList() + ")");
  }
  const struct {
    const char* column;
    int64_t value;
  } dims[] = {{"model_hidden_size", row.hidden_size},
              {"model_intermediate_size", row.intermediate_size},
              {"model_num_attn_heads", row.num_heads},
              {"model_num_hidden_layers", row.num_layers}};
  for (const auto& d : dims) {
    if (d.value <= 0)
      return Status::InvalidArgument(std::string(d.column) + ": unknown (-1); the shape is needed");
  }
  const int64_t kv =
      row.num_kv_heads > 0 ? row.num_kv_heads : row.num_heads;  // utils/model.py default
  // A catalog model of this shape is the model itself (vocabulary, head_dim, tying included). When
  // several share the shape (Llama-2-7B, LLaMA-7B, CodeLlama-7B), prefer one with the class's
  // default vocabulary (the base model rather than a fine-tune with added tokens).
  const ModelArch* match = nullptr;
  for (const std::string& id : catalogs.models.Ids()) {
    Result<const ModelArch*> m = catalogs.models.Find(id);
    if (!m.ok()) continue;
    const ModelArch& a = **m;
    if (a.model_type == cls->model_type && a.hidden_size == row.hidden_size &&
        a.intermediate_size == row.intermediate_size && a.num_heads == row.num_heads &&
        a.num_layers == row.num_layers && a.num_kv_heads == kv && a.num_experts == 0 &&
        (match == nullptr ||
         (match->vocab_size != cls->default_vocab && a.vocab_size == cls->default_vocab))) {
      match = &a;
    }
  }
  if (match != nullptr && vocab_flag <= 0) {
    *source = "catalog " + match->id + " (same shape)";
    return *match;
  }
  const int64_t vocab = vocab_flag > 0 ? vocab_flag : cls->default_vocab;
  nlohmann::json config = {{"architectures", {row.model_arch}},
                           {"model_type", cls->model_type},
                           {"hidden_size", row.hidden_size},
                           {"intermediate_size", row.intermediate_size},
                           {"num_attention_heads", row.num_heads},
                           {"num_hidden_layers", row.num_layers},
                           {"num_key_value_heads", kv},
                           {"vocab_size", vocab},
                           {"max_position_embeddings", std::max<int64_t>(row.seq_len, 4096)}};
  const std::string id = row.model_arch + "-h" + std::to_string(row.hidden_size) + "-l" +
                         std::to_string(row.num_layers);
  Result<ModelArch> arch = ParseModelConfig(config.dump(), id);
  if (!arch.ok()) return arch.status().WithContext("model_arch columns");
  *source = "columns (vocab " + std::to_string(vocab) +
            (vocab_flag > 0 ? ": --vocab)" : ": transformers' default for " + row.model_arch + ")");
  return arch;
}

// The FM estimator's technique names (FMArguments.technique, default "full").
Result<Method> MethodOf(const std::string& technique) {
  if (technique.empty() || technique == "full") return Method::kFull;
  if (technique == "lora") return Method::kLora;
  if (technique == "qlora") return Method::kQlora;
  if (technique == "pt" || technique == "prompt_tuning" || technique == "prompt-tuning")
    return Method::kPromptTuning;
  return Status::InvalidArgument("method: '" + technique + "' is not one of full, lora, qlora, pt");
}

}  // namespace

Result<FmJob> MapFmRow(const FmCsvRow& row, FmCsvFormat format, const Catalogs& catalogs,
                       const FmJobOptions& options) {
  FmJob out;
  Result<ModelArch> arch =
      format == FmCsvFormat::kV1
          ? ArchFromName(row, catalogs, &out.arch_source)
          : ArchFromColumns(row, catalogs, options.vocab_size, &out.arch_source);
  if (!arch.ok()) return arch.status();
  out.arch = std::move(arch).value();

  const std::string gpu_name = !row.gpu_model.empty() ? row.gpu_model : options.gpu;
  if (gpu_name.empty()) {
    return Status::InvalidArgument(
        "gpu: " + std::string(ToString(format)) +
        " rows carry no gpu_model; give --gpu NAME (the FM Training Estimator's "
        "default is an 80 GB A100: --gpu A100-SXM4-80GB)");
  }
  Result<const GpuSpec*> gpu = catalogs.gpus.Find(gpu_name);
  if (!gpu.ok()) return gpu.status().WithContext(row.gpu_model.empty() ? "--gpu" : "gpu_model");
  out.gpu = *gpu;

  Result<Method> method = MethodOf(row.method);
  if (!method.ok()) return method.status();
  TrainingJob& j = out.job;
  j.model = out.arch.id;
  j.method = *method;
  j.precision = options.precision;
  j.framework = Framework::kHf;  // fms-hf-tuning: HF Trainer
  j.micro_batch = row.batch_size;
  j.seq_len = row.seq_len;
  j.grad_accum = 1;  // not recorded; the throughput is per step of one micro-batch per GPU
  j.gpus = row.number_gpus;
  j.gpus_per_node = row.number_gpus;  // one pod (numGpusPerPod)
  j.gpu = (*gpu)->name;
  // memory/hybrid/hybrid.py: more than one GPU means FSDP, fsdp defaulting to ["full_shard"].
  j.sharding = row.number_gpus > 1 ? Sharding::kFsdpFull : Sharding::kNone;
  if (j.method == Method::kQlora) j.quant = Quant::kNf4;
  if (Status s = ValidateJob(j); !s.ok()) return s;

  const double tokens_per_step =
      static_cast<double>(row.number_gpus * row.batch_size * row.seq_len);
  const double job_tps = options.tps_per_gpu
                             ? row.tokens_per_second * static_cast<double>(row.number_gpus)
                             : row.tokens_per_second;
  out.step_time_s = tokens_per_step / job_tps;
  out.tokens_per_s_per_gpu = job_tps / static_cast<double>(row.number_gpus);
  out.memory_bytes = row.memory_bytes;
  out.group = out.arch.id + "|" + std::to_string(row.number_gpus) + "|" + j.gpu + "|" +
              std::string(ToString(j.method));
  return out;
}

}  // namespace fmte::learn
