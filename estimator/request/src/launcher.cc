// DetectLauncher: finds the training launch among a script's commands (behind srun, env, exec,
// apptainer/singularity exec, ... prefixes), splits it into flags and positionals and hands it to
// the framework reader. The launch with the most recognised settings wins (setup and conversion
// steps before or after training name fewer).
#include "launcher.h"

#include <algorithm>
#include <array>
#include <charconv>

namespace fmte::internal {
namespace {

bool IsPython(std::string_view b) {
  return b == "python" || b == "python3" || (b.starts_with("python3.") && b.size() <= 10);
}

// Launcher name of a word, empty when it is none.
std::string_view LauncherName(std::string_view word) {
  const std::string_view b = Basename(word);
  if (b == "torchrun" || b == "accelerate" || b == "deepspeed" || b == "tune" || b == "trl")
    return b;
  if (b == "llamafactory-cli") return "llamafactory";
  if (IsPython(b)) return "python";
  if (b.ends_with(".py")) return "script";
  return {};
}

// Words that may stand before the launcher on the same command.
bool IsPrefix(std::string_view b) {
  static constexpr std::string_view kPrefixes[] = {
      "srun", "mpirun", "mpiexec", "env", "exec", "time", "nohup", "numactl", "taskset", "stdbuf",
      "apptainer", "singularity", "conda", "uv", "poetry", "pixi", "micromamba", "mamba", "nsys",
      "enroot", "ibrun", "timeout", "cd", "ray",  // ray job submit [OPTIONS] -- python3 -m ...
      // Shell keywords a command follows on the same line (`if ...; then composer ...; fi`).
      "then", "else", "do"};
  for (std::string_view p : kPrefixes)
    if (b == p) return true;
  return false;
}

// Flags whose value is optional (a bare flag means true): only an explicit boolean literal after
// them is consumed as their value.
constexpr std::string_view kBooleanFlags[] = {"add_qkv_bias",
                                              "bf16",
                                              "bnb_4bit_use_double_quant",
                                              "ddp_find_unused_parameters",
                                              "disable_bias_linear",
                                              "do_eval",
                                              "do_train",
                                              "fp16",
                                              "fp32",
                                              "fsdp_activation_checkpointing",
                                              "fsdp_offload_params",
                                              "gradient_checkpointing",
                                              "gradient_checkpointing_kwargs_use_reentrant",
                                              "group_query_attention",
                                              "load_in_4bit",
                                              "load_in_8bit",
                                              "multi_gpu",
                                              "no_gradient_accumulation_fusion",
                                              "no_masked_softmax_fusion",
                                              "no_python",
                                              "overlap_grad_reduce",
                                              "overlap_param_gather",
                                              "overwrite_output_dir",
                                              "packing",
                                              "recompute_activations",
                                              "remove_unused_columns",
                                              "report_to_none",
                                              "sequence_parallel",
                                              "standalone",
                                              "swiglu",
                                              "tf32",
                                              "torch_compile",
                                              "trust_remote_code",
                                              "untie_embeddings_and_output_weights",
                                              "use_bnb_nested_quant",
                                              "use_cpu",
                                              "use_deepspeed",
                                              "use_distributed_optimizer",
                                              "use_flash_attention_2",
                                              "use_flash_attn",
                                              "use_fsdp",
                                              "use_liger",
                                              "use_liger_kernel",
                                              "use_mcore_models",
                                              "use_peft",
                                              "use_reentrant",
                                              "use_rotary_position_embeddings"};

bool IsBooleanFlag(std::string_view n) {
  static const LengthGroups<48> kByLength = [] {
    LengthGroups<48> g;
    g.Build(std::size(kBooleanFlags), [](size_t i) { return kBooleanFlags[i]; });
    return g;
  }();
  for (const uint32_t i : kByLength.Candidates(n))
    if (kBooleanFlags[i] == n) return true;
  return false;
}

bool IsListFlag(std::string_view n) {
  return n == "lora_target_modules" || n == "target_modules" || n == "lora_target" ||
         n == "lora_modules_to_save" ||  // TRL ModelConfig: nargs='+'
         n == "recompute_modules" ||     // Megatron --recompute-modules core_attn moe_act ...
         n == "dataset" || n == "val_dataset";  // ms-swift --dataset a b (its lists are spaced)
}

// A byte of a flag name as NormalizeFlag writes it: lower case, '-' as '_'.
constexpr std::array<char, 256> kFlagNameByte = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = c == '-' ? '_' : LowerAscii(static_cast<char>(c));
  return t;
}();

}  // namespace

std::string NormalizedFlagName(std::string_view name) {
  std::string out(name.size(), '\0');
  for (size_t k = 0; k < name.size(); ++k)
    out[k] = kFlagNameByte[static_cast<unsigned char>(name[k])];
  return out;
}

namespace {

bool IsBoolLiteral(std::string_view v) {
  return EqualsIgnoreCase(v, "true") || EqualsIgnoreCase(v, "false") || v == "1" || v == "0" ||
         EqualsIgnoreCase(v, "yes") || EqualsIgnoreCase(v, "no");
}

// The flag name of `--Name-X=...` lower-cased with '-' as '_', kept in `text` (REQUIRES: capacity
// for it, so that earlier views into `text` stay valid).
std::string_view NormalizeFlag(std::string_view n, std::string* text) {
  const size_t at = text->size();
  text->resize(at + n.size());
  // Local pointers: a char store may alias the string's own fields, which would be reloaded per
  // byte.
  char* out = text->data() + at;
  const char* in = n.data();
  for (size_t k = 0, len = n.size(); k < len; ++k)
    out[k] = kFlagNameByte[static_cast<unsigned char>(in[k])];
  return std::string_view(out, n.size());
}

// Whether a launcher-table rule names `-<name>` as the folder of its config files (NeoX's -d).
bool IsDirectoryFlag(const LauncherTable& table, std::string_view name) {
  for (const LauncherRule& r : table.launchers)
    if (!r.directory_flag.empty() && r.directory_flag == name) return true;
  return false;
}

// Whether the launcher-table rule of `program` takes undotted `key=value` overrides (dotlist).
bool TakesDotlist(const LauncherTable* table, std::string_view program) {
  if (table == nullptr) return false;
  for (const LauncherRule& r : table->launchers)
    if (r.dotlist && std::find(r.programs.begin(), r.programs.end(), program) != r.programs.end())
      return true;
  return false;
}

// Whether `script`, a positional of a launch, is the script of a dotlist rule named with its
// folder (`torchrun ... src/train.py cfg.yaml cutoff_len=2048`: LLaMA-Factory's).
bool ScriptTakesDotlist(const LauncherTable* table, std::string_view script) {
  if (table == nullptr) return false;
  for (const LauncherRule& r : table->launchers) {
    if (!r.dotlist) continue;
    for (const std::string& p : r.programs)
      if (p.find('/') != std::string::npos && IsProgramPath(script, p)) return true;
  }
  return false;
}

// One option of an srun prefix (`--ntasks-per-node=8`, `-N 4`, `--nodes 4`; `joined`: the value is
// in `w` itself, else `value` is the next word, empty when unknown): the node and task counts it
// sets go to `l` (`unknown`: the value comes from an unknown variable). Returns whether `w` is an
// option that takes a value (whether or not fmte keeps it).
bool SrunOption(std::string_view w, std::string_view value, bool joined, bool unknown,
                LaunchLine* l) {
  std::string_view opt = w;
  if (joined) {
    const size_t eq = w.find('=');
    opt = eq == std::string_view::npos ? w.substr(0, 2) : w.substr(0, eq);
    value = eq == std::string_view::npos ? w.substr(2) : w.substr(eq + 1);
  }
  if (unknown) value = {};
  int64_t* slot = nullptr;
  if (opt == "--ntasks-per-node")
    slot = &l->srun_tasks_per_node;
  else if (opt == "-N" || opt == "--nodes")
    slot = &l->srun_nodes;
  else if (opt == "-n" || opt == "--ntasks")
    slot = &l->srun_tasks;
  if (slot != nullptr) {
    // "4-8" node ranges keep their minimum, as Slurm's min_nodes does.
    auto v = ParseBoundedInt(value.substr(0, value.find('-')), 1, 1 << 16, "");
    *slot = v.ok() ? *v : 0;
    return true;
  }
  // Boolean srun options (--exclusive, --kill-on-bad-exit without a value, -l, -u, ...) take no
  // word after them; every other short option and `--long` option without '=' does.
  static constexpr std::string_view kNoValue[] = {"--exclusive",
                                                  "--kill-on-bad-exit",
                                                  "--overlap",
                                                  "--unbuffered",
                                                  "--label",
                                                  "--verbose",
                                                  "--quiet",
                                                  "--pty",
                                                  "--no-kill",
                                                  "--wait-all-nodes",
                                                  "--overcommit",
                                                  "-l",
                                                  "-u",
                                                  "-v",
                                                  "-Q",
                                                  "-K",
                                                  "-k",
                                                  "-O",
                                                  "-X"};
  for (std::string_view nv : kNoValue)
    if (opt == nv) return false;
  return !joined;
}

// The launcher a word of a command names: LauncherName's, or a launcher-table program (only of a
// known word); empty when it is none.
std::string_view LauncherOf(const Word& w, const LauncherTable* table) {
  const std::string_view name = LauncherName(w.text);
  if (name.empty() && !w.unresolved && IsTableProgram(table, Basename(w.text)))
    return Basename(w.text);
  return name;
}

// Splits the words after the launcher. Returns false when the command is no launch.
bool Split(const Command& c, const LauncherTable* table, LaunchLine* l) {
  size_t i = 0;
  const size_t n = c.words.size();
  std::string_view name;
  // Skip prefixes and VAR=value words; stop at the first launcher word. The options of an srun
  // prefix are kept (SrunOption): the tasks it starts.
  bool after_srun = false;
  for (; i < n; ++i) {
    const std::string_view w = c.words[i].text;
    name = LauncherOf(c.words[i], table);
    if (!name.empty()) break;
    const std::string_view b = Basename(w);
    if (i == 0 && !IsPrefix(b) && w.find('=') == std::string::npos) return false;
    if (!after_srun && w.find('=') != std::string::npos && !w.starts_with("-") &&
        l->env_prefix.size() < 16)
      l->env_prefix.push_back(w);
    if (b == "srun") {
      after_srun = true;
    } else if (after_srun && w.starts_with("-")) {
      const bool joined =
          w.starts_with("--") ? w.find('=') != std::string_view::npos : w.size() > 2;
      // The next word is the option's value unless it is the launcher or another prefix (a
      // boolean option fmte does not list: --no-container-mount-home python ...).
      const Word* next = i + 1 < n ? &c.words[i + 1] : nullptr;
      const bool next_is_word =
          next != nullptr && LauncherOf(*next, table).empty() && !IsPrefix(Basename(next->text));
      const Word* value = joined ? &c.words[i] : (next_is_word ? next : nullptr);
      if (value != nullptr && SrunOption(w, value->text, joined, value->unresolved, l) && !joined)
        ++i;
    } else if (IsPrefix(b)) {
      after_srun = false;  // srun ... apptainer exec ...: the options after are not srun's
    }
  }
  if (name.empty()) return false;
  l->line = c.line;
  l->launcher = name;
  l->program = Basename(c.words[i].text);
  if (name == "script") {  // ./train.py or pretrain_gpt.py run directly
    l->launcher = "python";
    l->positionals.push_back(c.words[i].text);
  }
  ++i;
  // Names and list values are at most the words themselves plus one separator each.
  size_t text_bytes = 0;
  for (size_t k = i; k < n; ++k) text_bytes += c.words[k].text.size() + 1;
  l->text_.reserve(text_bytes);
  l->flags.reserve(n - i);
  const bool program_dotlist = TakesDotlist(table, l->program);
  bool dotlist = program_dotlist;
  for (; i < n; ++i) {
    const std::string_view w = c.words[i].text;
    if (w.size() > 2 && w[0] == '-' && w[1] == '-') {
      Flag f;
      f.index = static_cast<int>(i);
      const size_t eq = w.find('=');
      f.name = NormalizeFlag(
          w.substr(2, eq == std::string_view::npos ? std::string_view::npos : eq - 2), &l->text_);
      f.unresolved = c.words[i].unresolved;
      if (eq != std::string_view::npos) {
        f.value = w.substr(eq + 1);
      } else if (IsListFlag(f.name)) {
        // nargs='+' (PEFT/TRL lora_target_modules q_proj k_proj ...): the following plain words.
        const size_t at = l->text_.size();
        while (i + 1 < n && !c.words[i + 1].text.starts_with("-") &&
               l->text_.size() - at < kMaxValueBytes) {
          if (l->text_.size() > at) l->text_ += ',';
          l->text_ += c.words[++i].text;
          f.unresolved = f.unresolved || c.words[i].unresolved;
        }
        f.value =
            l->text_.size() > at ? std::string_view(l->text_).substr(at) : std::string_view("true");
      } else if (i + 1 < n && !(c.words[i + 1].text.starts_with("--")) &&
                 (!IsBooleanFlag(f.name) || IsBoolLiteral(c.words[i + 1].text))) {
        ++i;
        f.value = c.words[i].text;
        f.unresolved = f.unresolved || c.words[i].unresolved;
      } else {
        f.value = "true";
      }
      l->flags.push_back(f);
    } else if (w == "-m" && i + 1 < n && l->module.empty() && l->positionals.empty()) {
      l->module = c.words[++i].text;
    } else if (w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1]))) {
      // short options (python -u, tune -c cfg)
      const bool dir_flag = table != nullptr && i + 1 < n && IsDirectoryFlag(*table, w.substr(1));
      if ((w == "-c" || dir_flag) && i + 1 < n) {
        Flag f;
        f.name = dir_flag ? NormalizeFlag(w.substr(1), &l->text_) : "config";
        f.value = c.words[i + 1].text;
        f.unresolved = c.words[i + 1].unresolved;
        f.index = static_cast<int>(i);
        l->flags.push_back(f);
        ++i;
      }
    } else {
      // An unknown word is no positional, but an override of a known key with an unknown value
      // (model.tensor_model_parallel_size=$TP) is still a flag, whose value is unknown.
      const bool unknown = c.words[i].unresolved;
      if (!unknown) l->positionals.push_back(w);
      if (!dotlist && !unknown) dotlist = ScriptTakesDotlist(table, w);
      // A Hydra override of a dotted key (HALOs' ++model.name_or_path=ID, verl's
      // actor_rollout_ref.model.path=ID) is also a flag of that name; "+" adds a key, "++" adds
      // or overrides it, "~" deletes it. Undotted ones (model=llama) pick config groups: not flags,
      // except for a launcher whose overrides are an OmegaConf dotlist (LauncherRule::dotlist).
      const size_t eq = w.find('=');
      size_t start = 0;
      while (start < w.size() && w[start] == '+') ++start;
      const std::string_view key =
          eq == std::string_view::npos ? std::string_view() : w.substr(start, eq - start);
      if (!key.empty() && (key.find('.') != std::string_view::npos || dotlist) && w[0] != '~' &&
          (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_') &&
          key.find_first_of(" /\\\"'$") == std::string_view::npos) {
        Flag f;
        f.index = static_cast<int>(i);
        f.name = NormalizeFlag(key, &l->text_);
        f.value = w.substr(eq + 1);
        f.unresolved = unknown;
        f.script_dotlist = !program_dotlist && key.find('.') == std::string_view::npos;
        l->flags.push_back(f);
      }
    }
  }
  // python -m torch.distributed.run / accelerate.commands.launch / deepspeed.launcher.runner
  if (l->launcher == "python" && !l->module.empty()) {
    if (l->module.starts_with("torch.distributed"))
      l->launcher = "torchrun";
    else if (l->module.starts_with("accelerate"))
      l->launcher = "accelerate";
    else if (l->module.starts_with("deepspeed"))
      l->launcher = "deepspeed";
    else if (l->module.starts_with("torchtune"))
      l->launcher = "tune";
    else if (l->module.starts_with("trl"))
      l->launcher = "trl";
  }
  l->Index();
  return true;
}

bool IsMegatronScript(const LaunchLine& l) {
  for (std::string_view p : l.positionals) {
    const std::string_view b = Basename(p);
    if (b.starts_with("pretrain_") && b.ends_with(".py")) return true;
  }
  for (const Flag& f : l.flags)
    if (f.name == "tensor_model_parallel_size" || f.name == "num_layers_per_virtual_pipeline_stage")
      return true;
  return false;
}

}  // namespace

void LaunchLine::Index() {
  // The readers look up some 60 names: group the flags once by name length.
  by_length_.Build(flags.size(), [this](size_t i) { return flags[i].name; });
}

void LaunchLine::AddFileFlags(std::vector<std::pair<std::string, std::string>> name_values,
                              std::string_view origin_prefix, std::vector<std::string> origins) {
  std::vector<Flag> added;
  added.reserve(name_values.size());
  for (size_t k = 0; k < name_values.size(); ++k) {
    Flag f;
    f.index = -1;
    f.name = file_text_.emplace_back(std::move(name_values[k].first));
    f.value = file_text_.emplace_back(std::move(name_values[k].second));
    f.origin = file_text_.emplace_back(std::string(origin_prefix) + ": " + origins[k]);
    added.push_back(f);
  }
  flags.insert(flags.begin(), added.begin(), added.end());
  Index();
}

void Sink::SetWithOrigin(std::string_view key, std::string_view value, std::string origin) {
  out_->values.push_back(Assignment{std::string(key), std::string(value), std::move(origin)});
}

void Sink::Set(std::string_view key, std::string_view value, std::string_view flag) {
  Add(key, value, "", flag);
}

void Sink::SetFromFlag(std::string_view key, std::string_view value, std::string_view flag_name) {
  Add(key, value, "--", flag_name);
}

void Sink::Add(std::string_view key, std::string_view value, std::string_view prefix,
               std::string_view flag) {
  // "line N: --flag", built in one allocation (this runs for every recognised flag).
  char line[32] = "line ";
  char* end = std::to_chars(line + 5, line + sizeof(line) - 2, line_).ptr;
  *end++ = ':';
  *end++ = ' ';
  std::string origin;
  origin.reserve(static_cast<size_t>(end - line) + prefix.size() + flag.size());
  origin.append(line, end).append(prefix).append(flag);
  out_->values.push_back(Assignment{std::string(key), std::string(value), std::move(origin)});
}

const Assignment* Sink::Last(std::string_view key) const {
  for (auto it = out_->values.rbegin(); it != out_->values.rend(); ++it)
    if (it->key == key) return &*it;
  return nullptr;
}

bool Sink::Has(std::string_view key) const { return Last(key) != nullptr; }

std::string_view Sink::Get(std::string_view key) const {
  const Assignment* a = Last(key);
  return a == nullptr ? std::string_view() : std::string_view(a->value);
}

void Sink::MarkUnread(std::string_view key, std::string_view flag, std::string_view file) {
  out_->unread.push_back(UnreadSetting{
      std::string(key),
      "line " + std::to_string(line_) + ": " + std::string(flag) + " " + Shown(file)});
}

void Sink::Unread(std::string_view key, std::string_view flag, std::string_view file,
                  std::string_view what) {
  Warn(flag, what);
  MarkUnread(key, flag, file);
}

void Sink::UnreadUnknown(std::string_view key, std::string_view flag) {
  Unread(key, flag, "(unknown value)", "value depends on the environment; read favourably");
}

void Sink::Warn(std::string_view flag, std::string_view what) {
  out_->warnings.push_back("line " + std::to_string(line_) + ": " + std::string(flag) + ": " +
                           std::string(what));
}

const Flag* LaunchLine::Find(std::string_view name) const {
  // The flags of this length, searched from the last (the last occurrence wins).
  const std::span<const uint32_t> same_length = by_length_.Candidates(name);
  for (auto it = same_length.rbegin(); it != same_length.rend(); ++it)
    if (flags[*it].name == name) return &flags[*it];
  return nullptr;
}

bool FlagTrue(const Flag* f) {
  if (f == nullptr || f->unresolved) return false;
  auto r = ParseBool(f->value, "");
  return r.ok() && *r;
}

const Flag* KnownFlag(const LaunchLine& l, std::initializer_list<std::string_view> names,
                      std::string_view* which) {
  for (std::string_view n : names) {
    const Flag* f = l.Find(n);
    if (f == nullptr || f->unresolved) continue;
    if (which != nullptr) *which = n;
    return f;
  }
  return nullptr;
}

void SetFlagsWithDefaults(const LaunchLine& l, std::span<const FlagDefault> flags,
                          std::string_view program, Sink* sink) {
  for (const FlagDefault& m : flags) {
    const Flag* f = sink->Find(l, m.flag);
    const std::string shown = "--" + std::string(m.flag);
    if (f != nullptr && f->unresolved) {
      sink->Warn(shown, "value depends on the environment; ignored");
    } else if (f != nullptr) {
      sink->Set(m.key, f->value, shown);
    } else if (!m.fallback.empty()) {
      sink->Set(m.key, m.fallback, std::string(program) + " (default " + shown + ")");
    }
  }
}

int64_t ProcCount(const Flag* f) {
  if (f == nullptr || f->unresolved) return 0;
  std::string_view v = f->value;
  const size_t colon = v.find(':');
  if (colon != std::string_view::npos) v = v.substr(colon + 1);
  auto r = ParseBoundedInt(v, 1, 1 << 16, "");
  return r.ok() ? *r : 0;
}

namespace {

// A value set from a flag that came from a config file names the file and key, not the line.
void FileOrigins(const LaunchLine& l, LauncherFindings* f) {
  for (Assignment& a : f->values) {
    const size_t dashes = a.origin.find(": --");
    if (!a.origin.starts_with("line ") || dashes == std::string::npos) continue;
    const Flag* flag = l.Find(std::string_view(a.origin).substr(dashes + 4));
    if (flag != nullptr && flag->index < 0) a.origin = std::string(flag->origin);
  }
}

}  // namespace

LauncherFindings DetectLauncher(const std::vector<Command>& commands, const ScriptContext* ctx,
                                const std::vector<std::pair<std::string, std::string>>* written,
                                const std::vector<std::string>* exported) {
  LauncherFindings best;
  size_t best_score = 0;
  const LauncherTable* table = ctx != nullptr ? ctx->launchers : nullptr;
  for (const Command& c : commands) {
    LaunchLine l;
    if (!Split(c, table, &l)) continue;
    l.exported = exported;
    if (NotTrainingLaunch(table, l)) continue;  // chat, serve, export, swift infer, ...
    LauncherFindings f;
    f.values.reserve(32);  // a launch line gives up to some 30 values
    Sink sink(&f, l.line);
    const LauncherRule* rule = ReadConfigFiles(FileContext{ctx, written}, &l, &sink);
    // Undotted overrides after a dotlist rule's script are its flags only if that rule applied.
    if (rule == nullptr || !rule->dotlist) {
      const size_t before = l.flags.size();
      std::erase_if(l.flags, [](const Flag& f) { return f.script_dotlist; });
      if (l.flags.size() != before) l.Index();
    }
    const std::string_view reader = rule != nullptr ? std::string_view(rule->reader) : "";
    if (reader == "keys") {
      f.launcher = rule->name;
    } else if (l.launcher == "tune") {
      ReadTorchtune(l, &sink);
      f.launcher = "tune";
    } else if (reader == "megatron" || IsMegatronScript(l)) {
      ReadMegatronFlags(l, &sink);
      if (rule != nullptr && rule->name == "megatron-swift") ReadMegatronSwiftFlags(l, &sink);
      f.launcher = rule != nullptr ? rule->name : "megatron";
    } else if (IsFmsFsdpScript(l)) {
      ReadFmsFsdpFlags(l, &sink);
      f.launcher = "fms-fsdp";
    } else if (IsFsdpQloraScript(l)) {
      ReadFsdpQloraFlags(l, &sink);
      f.launcher = "fsdp_qlora";
    } else if (IsVerlLaunch(l)) {
      ReadVerlOverrides(l, &sink);
      f.launcher = "verl";
    } else if (IsOpenRlhfLaunch(l)) {
      ReadOpenRlhfFlags(l, &sink);
      f.launcher = "openrlhf";
    } else {
      ReadHfFlags(l, &sink);
      if (rule != nullptr && rule->name == "swift") ReadSwiftFlags(l, &sink);
      f.launcher = rule != nullptr ? std::string_view(rule->name) : l.launcher;
    }
    FileOrigins(l, &f);
    ArchFromKeys(f.launcher, &f);
    bool has_model = false;
    for (const Assignment& a : f.values) has_model = has_model || a.key == "model";
    // An LLM trainer's launch whose files named no readable model (launchers.json trains_llms)
    // counts too: its model stays unread.
    bool model_unread = false;
    for (const UnreadSetting& u : f.unread) model_unread = model_unread || u.key == "model";
    if (!has_model && !model_unread) continue;
    // Processes per node and nodes the launcher starts.
    if (l.launcher == "torchrun" || l.launcher == "tune") {
      const Flag* p = sink.Find(l, "nproc_per_node");
      f.procs_per_node = ProcCount(p);
      f.nodes = ProcCount(sink.Find(l, "nnodes"));
    } else if (l.launcher == "deepspeed") {
      f.procs_per_node = ProcCount(sink.Find(l, "num_gpus"));
      f.nodes = ProcCount(sink.Find(l, "num_nodes"));
    } else if (l.launcher == "accelerate") {
      f.nodes = ProcCount(sink.Find(l, "num_machines"));
      const int64_t total = ProcCount(sink.Find(l, "num_processes"));
      f.procs_per_node = total > 0 ? total / std::max<int64_t>(1, f.nodes) : 0;
    } else if (l.srun_tasks_per_node > 0 || l.srun_tasks > 0) {
      // `srun --nodes=4 --ntasks-per-node=8 python train.py`: one rank per task (a launcher that
      // starts its own processes says how many above).
      f.nodes = l.srun_nodes;
      f.procs_per_node = l.srun_tasks_per_node > 0
                             ? l.srun_tasks_per_node
                             : l.srun_tasks / std::max<int64_t>(1, l.srun_nodes);
      f.procs_origin = "line " + std::to_string(l.line) + ": srun " +
                       (l.srun_tasks_per_node > 0 ? "--ntasks-per-node" : "--ntasks") +
                       (l.srun_nodes > 0 ? " and --nodes" : "");
    }
    // The line that says the most; on a tie, one that says how many processes it starts (a
    // script with a local and a Slurm launch of the same trainer).
    const size_t score = 1 + 2 * f.values.size() + (f.procs_per_node > 0 ? 1 : 0);
    if (score > best_score) {
      best_score = score;
      best = std::move(f);
    }
  }
  return best;
}

}  // namespace fmte::internal
