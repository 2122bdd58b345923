// LoRA targets: module names, roles, all-linear, or the framework's default (fmte/lora.h).
#include "fmte/lora.h"

#include <cctype>
#include <string>
#include <utility>

#include "fmte/text.h"

namespace fmte {
namespace {

constexpr uint32_t Bit(LinearRole r) { return 1u << static_cast<uint32_t>(r); }

// Role names users may give instead of module names.
uint32_t RoleBits(std::string_view name) {
  if (name == "q") return Bit(LinearRole::kQ) | Bit(LinearRole::kQkv);
  if (name == "k") return Bit(LinearRole::kK) | Bit(LinearRole::kQkv);
  if (name == "v") return Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
  if (name == "qkv")
    return Bit(LinearRole::kQ) | Bit(LinearRole::kK) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
  if (name == "o" || name == "output_proj") return Bit(LinearRole::kO);  // torchtune: output_proj
  if (name == "gate") return Bit(LinearRole::kGate) | Bit(LinearRole::kGateUp);
  if (name == "up") return Bit(LinearRole::kUp) | Bit(LinearRole::kGateUp);
  if (name == "gate_up")
    return Bit(LinearRole::kGate) | Bit(LinearRole::kUp) | Bit(LinearRole::kGateUp);
  if (name == "down") return Bit(LinearRole::kDown);
  if (name == "router") return Bit(LinearRole::kRouter);
  return 0;
}

bool HasModule(const ModelArch& m, std::string_view name) {
  for (const BlockSpec& b : m.block_kinds)
    for (const LinearShape& l : b.linears)
      if (l.name == name) return true;
  return false;
}

// Dotted paths and patterns. PEFT (peft/tuners/tuners_utils.py, check_target_module_exists): an
// entry of a target_modules list matches a module whose path equals it or ends with "." + entry;
// a target_modules string is a regular expression the whole path must match (re.fullmatch). fmte
// knows a linear by its own name and by whether it is a routed expert, not by its path
// (model.layers.3.mlp.experts.7.up_proj), so a path or pattern is read by its last two
// components. The last names the linear; in a pattern, literals with (a|b|...) groups, optional
// groups and \. expand to every name it can match ((up|down|gate|q|k|v|o)_proj: seven names); a
// leading .* matches any path and any start of the name (.*_proj: every linear whose name ends in
// _proj, wherever it sits). The component before the last, when given, says where
// the linear sits: an index ([\d]+, 7) -> a routed expert (experts.7.up_proj); anything else
// (self_attn, mlp, shared_expert, experts) -> not one, as PEFT's suffix rule has it (neither
// mlp.up_proj nor experts.up_proj matches mlp.experts.7.up_proj). A last component with other
// syntax ([a-z]+, \w*) targets nothing fmte can name: when nothing at all is targeted,
// ValidateLayout lists the modules.
constexpr size_t kMaxExpanded = 64;

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// Splits at the dots outside () and [] that are not the start of ".*" ("\." splits too).
std::vector<std::string_view> Components(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (depth > 0) {
      if (c == '\\') ++i;
      continue;
    }
    const bool escaped_dot = c == '\\' && i + 1 < s.size() && s[i + 1] == '.';
    if ((c == '.' && !(i + 1 < s.size() && s[i + 1] == '*')) || escaped_dot) {
      out.push_back(s.substr(start, i - start));
      if (escaped_dot) ++i;
      start = i + 1;
    } else if (c == '.' || c == '\\') {
      ++i;  // ".*" or another escape: part of the component
    }
  }
  out.push_back(s.substr(start));
  return out;
}

// The strings a component of literals, (a|b|...) and (?:...) groups, optional groups and "\."
// can match, into *out; false for other syntax or more than kMaxExpanded strings.
bool Expand(std::string_view c, std::vector<std::string>* out) {
  std::vector<std::string> cur = {std::string()};
  for (size_t i = 0; i < c.size();) {
    if (IsNameChar(c[i])) {
      for (std::string& s : cur) s.push_back(c[i]);
      ++i;
      continue;
    }
    if (c[i] == '\\' && i + 1 < c.size() && c[i + 1] == '.') {
      for (std::string& s : cur) s.push_back('.');
      i += 2;
      continue;
    }
    if (c[i] != '(') return false;
    const size_t close = c.find(')', i);
    if (close == std::string_view::npos) return false;
    std::string_view inner = c.substr(i + 1, close - i - 1);
    if (inner.starts_with("?:")) inner.remove_prefix(2);
    std::vector<std::string> alternatives;
    for (size_t at = 0;;) {
      const size_t bar = inner.find('|', at);
      std::string alt;
      for (const char ch : inner.substr(at, bar == std::string_view::npos ? bar : bar - at)) {
        if (IsNameChar(ch) || ch == '.')
          alt.push_back(ch);
        else if (ch != '\\')
          return false;  // nested groups, classes, repetition
      }
      alternatives.push_back(std::move(alt));
      if (bar == std::string_view::npos) break;
      at = bar + 1;
    }
    i = close + 1;
    if (i < c.size() && c[i] == '?') {
      alternatives.emplace_back();
      ++i;
    }
    if (cur.size() * alternatives.size() > kMaxExpanded) return false;
    std::vector<std::string> next;
    next.reserve(cur.size() * alternatives.size());
    for (const std::string& s : cur)
      for (const std::string& a : alternatives) next.push_back(s + a);
    cur = std::move(next);
  }
  *out = std::move(cur);
  return true;
}

LoraTargets::Where WhereOf(std::string_view before) {
  using Where = LoraTargets::Where;
  const bool index =
      before.find("\\d") != std::string_view::npos || before.find("[0-9") != std::string_view::npos;
  bool digits = false, other = false;
  std::vector<std::string> names;
  if (Expand(before, &names)) {
    for (const std::string& n : names) {
      const std::string_view last = std::string_view(n).substr(n.rfind('.') + 1);
      if (!last.empty() && last.find_first_not_of("0123456789") == std::string_view::npos)
        digits = true;
      else
        other = true;
    }
  }
  if (!(index || digits)) return Where::kNotExpert;
  return other ? Where::kAny : Where::kExpert;
}

// Adds what a dotted path or a pattern targets (see above).
void AddPath(const ModelArch& m, std::string_view target, LoraTargets* t) {
  if (target.starts_with('^')) target.remove_prefix(1);
  if (target.ends_with('$')) target.remove_suffix(1);
  const std::vector<std::string_view> parts = Components(target);
  std::string_view last = parts.back();
  LoraTargets::Where where =
      parts.size() > 1 ? WhereOf(parts[parts.size() - 2]) : LoraTargets::Where::kAny;
  const bool any_start = last.starts_with(".*");
  if (any_start) last.remove_prefix(2);
  std::vector<std::string> names;
  if (!Expand(last, &names)) return;
  if (any_start) {  // every linear whose name ends with one of them, wherever it sits
    for (const BlockSpec& b : m.block_kinds)
      for (const LinearShape& l : b.linears)
        for (const std::string& n : names)
          if (!n.empty() && std::string_view(l.name).ends_with(n)) {
            t->names.push_back({l.name, LoraTargets::Where::kAny});
            break;
          }
    return;
  }
  for (std::string& n : names) {
    if (HasModule(m, n))
      t->names.push_back({std::move(n), where});
    else if (IsHeadModuleName(n) && where != LoraTargets::Where::kExpert)
      t->head = true;
    else
      t->roles |= RoleBits(n);
  }
}

}  // namespace

bool IsHeadModuleName(std::string_view name) {
  return name == "lm_head" || name == "output" || name == "output_layer" || name == "embed_out";
}

bool IsEmbeddingModuleName(std::string_view name) {
  return name == "embed_tokens" || name == "wte" || name == "tok_embeddings" ||
         name == "word_embeddings" || name == "embed_in" || name == "embedding";
}

Status ParseModulesToSave(std::string_view v, std::string_view shown, TrainingJob* job) {
  // Read whole before anything is set: a value in error leaves the job as it was.
  constexpr std::string_view kExpected =
      "embed_tokens and/or lm_head (the embeddings and the output head, trained in full beside the "
      "adapters), or none";
  std::string_view rest = Trim(v);
  if (rest.empty() || EqualsIgnoreCase(rest, "none") || EqualsIgnoreCase(rest, "null") ||
      rest == "[]") {
    job->save_embedding = job->save_head = false;
    return Status::Ok();
  }
  bool embedding = false, head = false;
  int items = 0;
  while (!rest.empty()) {
    const size_t cut = rest.find_first_of(", []'\"");
    const std::string_view item = rest.substr(0, cut);
    if (!item.empty()) {
      if (++items > 16) return Expected(shown, "at most 16 module names", v);
      const std::string_view name = item.substr(item.rfind('.') + 1);
      if (IsEmbeddingModuleName(name))
        embedding = true;
      else if (IsHeadModuleName(name))
        head = true;
      else
        return Expected(shown, std::string(kExpected) + "; '" + Shown(item, 32) + "' is neither",
                        v);
    }
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + 1);
  }
  if (items == 0) return Expected(shown, kExpected, v);
  job->save_embedding = embedding;
  job->save_head = head;
  return Status::Ok();
}

bool IsLoraTargetPattern(std::string_view value) {
  return value.find_first_of("()|\\*+?^$") != std::string_view::npos;
}

bool LoraTargets::Matches(const LinearShape& l) const {
  // PEFT's conversion maps every target named like an expert projection to the stacked experts'
  // parameters and drops it from the modules (transformers_weight_conversion.py
  // _convert_peft_config_moe: remaining_target_modules keeps the others), so a dense layer's or
  // a shared expert's gate_proj, up_proj and down_proj (Mixtral-style w1, w3, w2) get no adapter.
  if (peft_converts_experts && !l.expert &&
      (l.name == "gate_proj" || l.name == "up_proj" || l.name == "down_proj" || l.name == "w1" ||
       l.name == "w2" || l.name == "w3"))
    return false;
  if (all_linear) return true;
  if (roles & Bit(l.role)) return true;
  for (const Name& n : names)
    if (n.name == l.name && (n.where == Where::kAny || (n.where == Where::kExpert) == l.expert))
      return true;
  return false;
}

int64_t LoraBRank(const BlockSpec& block, const LinearShape& l, const TrainingJob& j,
                  const LoraTargets& t) {
  const auto fusable = [](const LinearShape& x, LinearRole role) {
    return x.expert && !x.stacked && x.role == role;
  };
  if (!t.peft_converts_experts || !(fusable(l, LinearRole::kGate) || fusable(l, LinearRole::kUp)))
    return j.lora_r;
  bool gate = false, up = false;
  for (const LinearShape& x : block.linears) {
    if (!t.Matches(x)) continue;
    gate = gate || fusable(x, LinearRole::kGate);
    up = up || fusable(x, LinearRole::kUp);
  }
  return gate && up ? 2 * j.lora_r : j.lora_r;
}

bool MayKeepExpertsUnquantized(const ModelArch& m, const TrainingJob& j) {
  return j.method == Method::kQlora && j.PeftLoraOnTransformers() && m.transformers_stacks_experts;
}

bool KeepsExpertsUnquantized(const ModelArch& m, const TrainingJob& j) {
  return MayKeepExpertsUnquantized(m, j) && !j.quantize_experts;
}

namespace {

// The targets as the job writes them, or the framework's default.
LoraTargets TargetsAsWritten(const ModelArch& m, const TrainingJob& j) {
  LoraTargets t;
  if (!j.lora_targets.empty()) {
    // Several targets are usually module names: one allocation for all (a single one, often
    // all-linear or a role, may need none).
    if (j.lora_targets.size() > 1) t.names.reserve(j.lora_targets.size());
    for (const std::string& s : j.lora_targets) {
      if (s == "all-linear") {
        t.all_linear = true;
      } else if (IsLoraTargetPattern(s) || s.find('.') != std::string::npos) {
        AddPath(m, s, &t);
      } else if (HasModule(m, s)) {
        t.names.push_back({s});  // a module name wins over a role of the same spelling
      } else if (IsHeadModuleName(s)) {
        t.head = true;
      } else {
        t.roles |= RoleBits(s);
      }
    }
    return t;
  }
  const std::string& mt = m.model_type;
  switch (j.framework) {
    case Framework::kTorchtune:
      // torchtune's llama3_1/8B_lora.yaml: lora_attn_modules [q_proj, v_proj, output_proj],
      // apply_lora_to_mlp: True.
      t.roles = Bit(LinearRole::kQ) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv) |
                Bit(LinearRole::kO) | Bit(LinearRole::kGate) | Bit(LinearRole::kUp) |
                Bit(LinearRole::kGateUp) | Bit(LinearRole::kDown);
      return t;
    case Framework::kLitgpt:
      // litgpt/finetune/lora.py setup(): lora_query and lora_value on, the other parts off, in
      // every model family (its own LoRA, not PEFT's per-family mapping).
      t.roles = Bit(LinearRole::kQ) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
      return t;
    case Framework::kMegatron:
      // NeMo's LoRA default target: the fused attention_qkv (linear_qkv).
      t.roles =
          Bit(LinearRole::kQ) | Bit(LinearRole::kK) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
      return t;
    default:
      break;
  }
  // PEFT's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (peft/utils/constants.py):
  // llama-style families q_proj,v_proj; gpt2 c_attn; gpt_neox/falcon query_key_value;
  // phi q_proj,v_proj,fc1,fc2. Families it lacks fall back to the q/v (or fused qkv) roles.
  if (mt == "phi") {
    t.names = {{"q_proj"}, {"v_proj"}, {"fc1"}, {"fc2"}};
  } else {
    t.roles = Bit(LinearRole::kQ) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
  }
  return t;
}

}  // namespace

LoraTargets ResolveLoraTargets(const ModelArch& m, const TrainingJob& j) {
  LoraTargets t = TargetsAsWritten(m, j);
  bool per_expert = false;  // experts this catalog describes one linear per expert
  for (const BlockSpec& b : m.block_kinds)
    for (const LinearShape& l : b.linears) per_expert = per_expert || (l.expert && !l.stacked);
  t.peft_converts_experts =
      j.PeftLoraOnTransformers() && m.transformers_stacks_experts && per_expert;
  return t;
}

}  // namespace fmte
