// ModelArch: a decoder-only transformer's architecture, read from a Hugging Face config.json, as
// the list of weight matrices each block holds. One representation serves every consumer:
// parameter counting (sum of shapes), LoRA (adapters on named linears), QLoRA (quantised linears),
// activations and FLOPs (shapes per token), ZeRO-3 live parameters (largest module).
//
// Parameter counts are exact: they must equal the published checkpoint's tensor sizes.
// An architecture the parser does not know is an error naming the missing keys, never a guess.
// Thread-safety: ModelArch and ModelCatalog are immutable after construction.
#ifndef FMTE_MODEL_H_
#define FMTE_MODEL_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte {

enum class NormKind { kRms, kLayer };  // RMSNorm: weight (h); LayerNorm: weight + bias (2h)

// What a linear does, independent of how the family names it. LoRA targets and TP splitting use it.
enum class LinearRole {
  kQ,
  kK,
  kV,
  kQkv,  // attention input projections (kQkv: fused, e.g. Falcon, GPT-2, NeoX)
  kO,    // attention output projection
  kGate,
  kUp,
  kGateUp,
  kDown,    // MLP (kUp is also a plain MLP's first linear, kDown its second)
  kRouter,  // MoE router (gate)
  kSsmIn,   // a Mamba-2 mixer's input projection (in_proj: z, x, B, C, dt), column-parallel
  kSsmOut,  // a Mamba-2 mixer's output projection (out_proj), row-parallel
  kOther,   // anything else (MLA low-rank projections, ...)
};

// Tensor parallelism splits a row-parallel linear's input dimension (Megatron RowParallelLinear:
// the attention and SSM output projections, the MLP's down projection); the others split their
// output (column-parallel), except the replicated MoE router.
constexpr bool RowParallel(LinearRole r) {
  return r == LinearRole::kO || r == LinearRole::kDown || r == LinearRole::kSsmOut;
}

// One weight matrix of a block (torch.nn.Linear or equivalent).
struct LinearShape {
  std::string
      name;  // the module's name in the HF implementation: q_proj, query_key_value, fc1, ...
  LinearRole role = LinearRole::kOther;
  int64_t in_features = 0;
  int64_t out_features = 0;
  bool has_bias = false;
  int64_t copies = 1;    // routed experts (or shared experts) with this same shape
  bool expert = false;   // routed expert weights: only experts_per_token of `copies` run per token
  bool stacked = false;  // all `copies` live in one module as a 3-D tensor (gpt-oss experts)

  int64_t Params() const {
    return copies * (in_features * out_features + (has_bias ? out_features : 0));
  }
  // Parameters of one torch module: one copy, or all copies when stacked.
  int64_t ModuleParams() const { return stacked ? Params() : Params() / (copies > 0 ? copies : 1); }
};

// The weights of one kind of transformer block (a model may mix dense and MoE blocks).
struct BlockSpec {
  std::vector<LinearShape> linears;
  int64_t norm_params = 0;        // all norms inside the block
  int64_t num_norms = 0;          // how many norm modules (each saves its fp32 input for backward)
  int64_t other_params = 0;       // parameters not in linears (attention sinks, ...)
  int64_t experts_per_token = 0;  // 0 for dense blocks
  // A Mamba-2 mixer in place of attention (Nemotron-H's "M" layers): `heads` x `head_dim` inner
  // channels, B and C of `groups` x `state`, a causal conv1d of `conv_kernel` taps, the scan in
  // chunks of `chunk` tokens. Its in_proj and out_proj are in `linears`, conv1d, dt_bias, A_log
  // and D in other_params, its gated RMSNorm in norm_params. heads == 0: no mixer.
  struct Ssm {
    int64_t heads = 0, head_dim = 0, state = 0, groups = 0, conv_kernel = 0, chunk = 0;
    int64_t Inner() const { return heads * head_dim; }
  } ssm;
  // Whether the block attends (has q, k, v or fused qkv projections): Nemotron-H's Mamba and MoE
  // layers do not.
  bool HasAttention() const;
  int64_t Params() const;
  int64_t ActiveParams() const;  // per token: routed experts count experts_per_token times
};

struct ParamCounts {
  int64_t total = 0;
  int64_t embedding = 0;  // token embeddings (+ learned position embeddings)
  int64_t lm_head = 0;    // 0 when tied to the embeddings
  int64_t blocks = 0;     // all transformer blocks
  int64_t final_norm = 0;
  int64_t vision =
      0;  // a multimodal model's vision encoder and projector (ModelArch::vision_params)
  int64_t active = 0;          // parameters used per token (MoE: only routed experts that fire)
  int64_t largest_module = 0;  // largest single module (embedding, head, or one block's linear):
                               // DeepSpeed's "largest layer params"
};

struct ModelArch {
  std::string id;           // catalog id ("meta-llama/Llama-3.1-8B") or the path it was read from
  std::string model_type;   // config.json model_type
  std::string torch_dtype;  // dtype the checkpoint is published in ("bfloat16", ...)

  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;  // dense MLP width (MoE: per expert width where dense is absent)
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;

  NormKind norm = NormKind::kRms;
  bool gated_mlp = true;
  bool tie_word_embeddings = false;
  bool parallel_attn_mlp = false;  // GPT-J, Falcon, Phi-2: attention and MLP read the same input
  // The plain MLP's activation is transformers' NewGELUActivation (hidden_act / activation_function
  // "gelu_new": GPT-2, GPT-J, Phi-1/1.5/2), a chain of separate elementwise ops.
  bool gelu_new = false;
  // The attention window of config.json's sliding_window (Mistral-7B-v0.1, Phi-3, StarCoder2,
  // Gemma-2; Qwen2/3 only with use_sliding_window): tokens a query attends back; 0 = all. With a
  // window transformers hands SDPA an explicit mask, which rules out the flash kernel.
  int64_t sliding_window = 0;
  // How many layers attend through that window: config.json's layer_types ("sliding_attention"
  // entries; gpt-oss), Gemma-2's every other layer (transformers Gemma2Config: layer i slides when
  // i + 1 is odd), Gemma-3's all but every sliding_window_pattern-th, OLMo-3's all but every
  // 4th; all layers otherwise.
  int64_t sliding_window_layers = 0;
  // config.json's _attn_implementation is "eager" (Gemma-2-27B's published config): transformers
  // then builds the model with eager attention unless the caller asks for another (measured: the
  // HF Trainer runs of tests/data/memory-measured/measured-h100-hf.jsonl record "eager" for it).
  bool config_eager_attention = false;
  // config.json's final_logit_softcapping (Gemma-2: 30): the logits pass through
  // tanh(x / cap) * cap in the model's forward; 0 = none.
  double final_logit_softcapping = 0;
  // config.json's attn_logit_softcapping (Gemma-2: 50): attention scores pass through
  // tanh(x / cap) * cap, which SDPA kernels do not do; 0 = none.
  double attn_logit_softcapping = 0;

  int64_t num_experts = 0;  // routed experts per MoE block; 0 = dense model
  int64_t experts_per_token = 0;
  int64_t expert_intermediate_size = 0;  // width of one routed expert's MLP (0 for dense models)
  int64_t num_shared_experts = 0;        // always-on experts (DeepSeek, Qwen2-MoE), 0 if none
  // transformers 5 stores this model type's routed experts as stacked 3-D parameters: gpt-oss and
  // Llama 4 always, and the types its conversion_mapping.py converts from per-expert checkpoints
  // (_MODEL_TO_CONVERSION_PATTERN: mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, ...),
  // which this catalog describes with per-expert linears. Remote-code models (deepseek's MoE-16B)
  // keep nn.Linear experts. What follows for PEFT and bitsandbytes: fmte::LoraTargets
  // (peft_converts_experts), memory_params.cc Quantizable, the time model's delta weights.
  bool transformers_stacks_experts = false;

  int64_t embedding_params = 0;           // V * h
  int64_t position_embedding_params = 0;  // learned absolute positions (GPT-2): max_pos * h
  int64_t final_norm_params = 0;
  int64_t lm_head_params = 0;  // 0 when tied; includes its bias if any

  // A multimodal model (Gemma-3, Qwen2-VL, Qwen2.5-VL, Mistral-3, LLaVA, Llama-3.2-Vision, Llama 4,
  // InternVL): the config's own
  // model_type ("gemma3") while model_type above is its language model's ("gemma3_text"), and the
  // parameters of its vision encoder and the projector into the language model. They live with the
  // embeddings (first pipeline stage), are trained in full fine-tuning and frozen under adapters;
  // what images add to activations and time is not modelled (the number of image tokens is a
  // property of the data; they count in the sequence length the language model sees).
  std::string multimodal_type;
  int64_t vision_params = 0;

  // Tensors the published checkpoint holds but the HF model class does not load, so they are not in
  // Counts(): DeepSeek-V3's multi-token-prediction layer (num_nextn_predict_layers).
  int64_t unloaded_checkpoint_params = 0;

  std::vector<BlockSpec> block_kinds;    // distinct block layouts
  std::vector<int> block_kind_of_layer;  // size num_layers: index into block_kinds

  const BlockSpec& Block(int64_t layer) const { return block_kinds[block_kind_of_layer[layer]]; }
  ParamCounts Counts() const;
  // Counts() with the layers of each block kind already counted: layers_of_kind[k] layers use
  // block_kinds[k] (the memory model counts them once per estimate).
  ParamCounts CountsWithLayers(std::span<const int> layers_of_kind) const;
};

// Parses a config.json text. `id` is recorded as ModelArch::id. Errors name the missing or
// malformed keys and the model_type/architectures seen.
Result<ModelArch> ParseModelConfig(std::string_view json_text, std::string id);

// Reads and parses a config.json file, or a directory holding one.
Result<ModelArch> LoadModelConfigFile(const std::string& path);

// The models shipped in etc/models/ (config.json files stored under their Hugging Face ids:
// etc/models/<org>/<name>/config.json). Loaded once; lookups are read-only.
class ModelCatalog {
 public:
  // Loads every config under `dir`, and `dir`/aliases.tsv when present (alias TAB catalog id TAB
  // why: ids of models with the same tensors, such as instruct variants). Files that fail to parse
  // are an error naming the file; so is an alias line that is malformed, names a catalog id as an
  // alias, or points at no catalog model.
  static Result<ModelCatalog> LoadDir(const std::string& dir);
  // The directory compiled in (FMTE_ETC_DIR/models), or $FMTE_ETC_DIR/models when set.
  static std::string DefaultDir();

  // Exact id or alias (case-insensitive); an alias gives its catalog model; a path ending in a
  // catalog id its copy; a bare name the one catalog model of that name. NotFound names the
  // closest ids.
  Result<const ModelArch*> Find(std::string_view id) const;
  // A catalog model that a local path (starting with '/', '.' or '~', or of three or more
  // components) not in the catalog is named after: its last component starts
  // with the model's name (or an alias's), '-', '_' and '.' alike, followed by a separator and more
  // (a fine-tuned copy's folder: "../ckpt/Qwen2-VL-2B-Instruct_EVQA-LoRA-SFT",
  // "work_dirs/internvl2_5_8b_stage1"). The longest such name wins; a remainder that starts with a
  // size ("gpt2-xl", "bloom-560m") names another model and gives none. NotFound when none is.
  Result<const ModelArch*> NamedAfter(std::string_view path) const;
  // The `n` ids closest to `id` (edit distance on the name), best first.
  std::vector<std::string> Closest(std::string_view id, size_t n = 3) const;
  std::vector<std::string> Ids() const;
  size_t size() const { return models_.size(); }

  void Add(ModelArch arch);
  // `alias` resolves to the catalog model `id`. Errors as for aliases.tsv.
  Status AddAlias(std::string_view alias, std::string_view id);
  size_t alias_count() const { return aliases_.size(); }

 private:
  std::map<std::string, ModelArch> models_;     // key: lower-case id
  std::map<std::string, std::string> aliases_;  // lower-case alias -> lower-case catalog id
};

// Resolves what a user typed: a catalog id, a config.json path or a model directory.
Result<ModelArch> ResolveModel(const ModelCatalog& catalog, std::string_view id_or_path);

}  // namespace fmte

#endif  // FMTE_MODEL_H_
