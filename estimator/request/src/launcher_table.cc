// Launchers as data: the table of config-file formats and the launches that name them
// (etc/launchers.json, fmte/launchers.h), and the reading of a launch line's config files under it.
// A file's keys become flags of the launch line, placed before the line's own flags, so that the
// framework readers (launcher_hf.cc, launcher_megatron.cc) read a file the way the trainer does:
// a flag on the command line wins over the file. Formats without such a reader set request keys.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fmte/text.h"
#include "launcher.h"

namespace fmte {

const ConfigFormat* LauncherTable::Format(std::string_view name) const {
  for (const ConfigFormat& f : formats)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {

using nlohmann::json;

Status TableError(std::string_view origin, const std::string& where, std::string_view expected,
                  const json& got) {
  return Status::ParseError(std::string(origin) + ": " + where + ": expected " +
                            std::string(expected) + ", got " + Shown(got.dump(), 80));
}

Result<std::vector<std::string>> Strings(const json& j, std::string_view origin,
                                         const std::string& where) {
  std::vector<std::string> out;
  if (j.is_string()) {
    out.push_back(j.get<std::string>());
    return out;
  }
  if (!j.is_array()) return TableError(origin, where, "a string or a list of strings", j);
  for (const json& e : j) {
    if (!e.is_string()) return TableError(origin, where, "a list of strings", j);
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> StringMap(const json& j,
                                                                   std::string_view origin,
                                                                   const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!j.is_object()) return TableError(origin, where, "an object of strings", j);
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string()) return TableError(origin, where + "." + k, "a string", v);
    out.emplace_back(k, v.get<std::string>());
  }
  return out;
}

Result<std::vector<ConfigKeyRule>> KeyRules(const json& j, std::string_view origin,
                                            const std::string& where) {
  std::vector<ConfigKeyRule> out;
  if (!j.is_array()) return TableError(origin, where, "a list of key rules", j);
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const json& e = j[i];
    if (!e.is_object()) return TableError(origin, at, "an object", e);
    ConfigKeyRule r;
    if (e.contains("path")) {
      auto p = Strings(e["path"], origin, at + ".path");
      if (!p.ok()) return p.status();
      r.paths = std::move(p).value();
    }
    if (e.contains("flag")) {
      if (!e["flag"].is_string()) return TableError(origin, at + ".flag", "a string", e["flag"]);
      r.flag = e["flag"].get<std::string>();
    }
    if (e.contains("key")) {
      if (!e["key"].is_string()) return TableError(origin, at + ".key", "a string", e["key"]);
      r.key = e["key"].get<std::string>();
    }
    if (r.flag.empty() == r.key.empty())
      return TableError(origin, at, "exactly one of \"flag\" and \"key\"", e);
    if (e.contains("values")) {
      auto v = StringMap(e["values"], origin, at + ".values");
      if (!v.ok()) return v.status();
      r.values = std::move(v).value();
    }
    if (r.paths.empty() && r.values.size() != 1)
      return TableError(origin, at, "a \"path\", or one constant in \"values\" ({\"*\": V})", e);
    out.push_back(std::move(r));
  }
  return out;
}

// o[key] as a string (`fallback` when absent); another type is an error naming the field (a
// json::value() with a string default throws on one: found by fuzz_launcher_table).
Result<std::string> StringAt(const json& o, const char* key, const char* fallback,
                             std::string_view origin, const std::string& at) {
  if (!o.contains(key)) return std::string(fallback);
  if (!o[key].is_string()) return TableError(origin, at + "." + key, "a string", o[key]);
  return o[key].get<std::string>();
}

Result<bool> BoolAt(const json& o, const char* key, std::string_view origin,
                    const std::string& at) {
  if (!o.contains(key)) return false;
  if (!o[key].is_boolean()) return TableError(origin, at + "." + key, "true or false", o[key]);
  return o[key].get<bool>();
}

}  // namespace

Result<LauncherTable> ParseLauncherTable(std::string_view json_text, std::string_view origin) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded()) return Status::ParseError(std::string(origin) + ": not valid JSON");
  if (!j.is_object() || !j.contains("formats") || !j.contains("launchers"))
    return Status::ParseError(std::string(origin) +
                              ": expected an object with \"formats\" and \"launchers\"");
  LauncherTable t;
  if (!j["formats"].is_object())
    return TableError(origin, "formats", "an object of formats by name", j["formats"]);
  for (const auto& [name, f] : j["formats"].items()) {
    const std::string at = "formats." + name;
    if (!f.is_object()) return TableError(origin, at, "an object", f);
    ConfigFormat fmt;
    fmt.name = name;
    Result<std::string> syntax = StringAt(f, "syntax", "", origin, at);
    if (!syntax.ok()) return syntax.status();
    fmt.syntax = std::move(syntax).value();
    if (fmt.syntax != "json" && fmt.syntax != "yaml" && fmt.syntax != "toml")
      return TableError(origin, at + ".syntax", "json, yaml or toml", f.value("syntax", json()));
    auto keys = KeyRules(f.value("keys", json::array()), origin, at + ".keys");
    if (!keys.ok()) return keys.status();
    fmt.keys = std::move(keys).value();
    auto always = KeyRules(f.value("always", json::array()), origin, at + ".always");
    if (!always.ok()) return always.status();
    fmt.always = std::move(always).value();
    Result<bool> dashes = BoolAt(f, "dashes_as_underscores", origin, at);
    if (!dashes.ok()) return dashes.status();
    fmt.dashes_as_underscores = *dashes;
    t.formats.push_back(std::move(fmt));
  }
  if (!j["launchers"].is_array())
    return TableError(origin, "launchers", "a list of launchers", j["launchers"]);
  for (size_t i = 0; i < j["launchers"].size(); ++i) {
    const json& e = j["launchers"][i];
    const std::string at = "launchers[" + std::to_string(i) + "]";
    if (!e.is_object()) return TableError(origin, at, "an object", e);
    LauncherRule r;
    Result<std::string> name = StringAt(e, "name", "", origin, at);
    if (!name.ok()) return name.status();
    r.name = std::move(name).value();
    if (r.name.empty()) return TableError(origin, at + ".name", "a name", e.value("name", json()));
    auto programs = Strings(e.value("programs", json()), origin, at + ".programs");
    if (!programs.ok()) return programs.status();
    r.programs = std::move(programs).value();
    if (e.contains("flags")) {
      auto flags = Strings(e["flags"], origin, at + ".flags");
      if (!flags.ok()) return flags.status();
      for (const std::string& fl : flags.value())
        r.flags.push_back(internal::NormalizedFlagName(fl));
    }
    Result<bool> positional = BoolAt(e, "positional", origin, at);
    if (!positional.ok()) return positional.status();
    r.positional = *positional;
    Result<std::string> directory_flag = StringAt(e, "directory_flag", "", origin, at);
    if (!directory_flag.ok()) return directory_flag.status();
    r.directory_flag = internal::NormalizedFlagName(*directory_flag);
    if (r.flags.empty() && !r.positional)
      return TableError(origin, at, "\"flags\" or \"positional\": true (where the file is named)",
                        e);
    Result<std::string> format = StringAt(e, "format", "", origin, at);
    if (!format.ok()) return format.status();
    r.format = std::move(format).value();
    Result<std::string> sub_positional = StringAt(e, "subcommand_positional", "", origin, at);
    if (!sub_positional.ok()) return sub_positional.status();
    r.subcommand_positional = std::move(sub_positional).value();
    if (t.Format(r.format) == nullptr)
      return TableError(origin, at + ".format", "the name of one of the formats",
                        e.value("format", json()));
    Result<std::string> reader = StringAt(e, "reader", "hf", origin, at);
    if (!reader.ok()) return reader.status();
    r.reader = std::move(reader).value();
    if (r.reader != "hf" && r.reader != "megatron" && r.reader != "keys")
      return TableError(origin, at + ".reader", "hf, megatron or keys", e["reader"]);
    if (e.contains("set")) {
      auto set = StringMap(e["set"], origin, at + ".set");
      if (!set.ok()) return set.status();
      r.set = std::move(set).value();
    }
    if (e.contains("subcommand_set")) {
      const json& subs = e["subcommand_set"];
      if (!subs.is_object())
        return TableError(origin, at + ".subcommand_set", "an object of objects of strings", subs);
      for (const auto& [name, keys] : subs.items()) {
        auto set = StringMap(keys, origin, at + ".subcommand_set." + name);
        if (!set.ok()) return set.status();
        r.subcommand_set.emplace_back(name, std::move(set).value());
      }
    }
    if (e.contains("flag_keys")) {
      auto keys = KeyRules(e["flag_keys"], origin, at + ".flag_keys");
      if (!keys.ok()) return keys.status();
      std::vector<ConfigKeyRule> rules = std::move(keys).value();
      for (size_t k = 0; k < rules.size(); ++k) {
        ConfigKeyRule& rule = rules[k];
        if (rule.key.empty() || rule.paths.size() != 1)
          return TableError(origin, at + ".flag_keys[" + std::to_string(k) + "]",
                            "one flag name in \"path\" and a request \"key\"", e["flag_keys"][k]);
        rule.paths[0] = internal::NormalizedFlagName(rule.paths[0]);
      }
      r.flag_keys = std::move(rules);
    }
    if (e.contains("unread")) {
      auto unread = StringMap(e["unread"], origin, at + ".unread");
      if (!unread.ok()) return unread.status();
      r.unread = std::move(unread).value();
    }
    Result<bool> trains_llms = BoolAt(e, "trains_llms", origin, at);
    if (!trains_llms.ok()) return trains_llms.status();
    r.trains_llms = *trains_llms;
    Result<bool> dotlist = BoolAt(e, "dotlist", origin, at);
    if (!dotlist.ok()) return dotlist.status();
    r.dotlist = *dotlist;
    if (e.contains("markers")) {
      auto markers = Strings(e["markers"], origin, at + ".markers");
      if (!markers.ok()) return markers.status();
      for (const std::string& m : markers.value()) {
        if (m.empty())
          return TableError(origin, at + ".markers", "names of flags or top-level keys",
                            e["markers"]);
        r.markers.push_back(internal::NormalizedFlagName(m));
      }
    }
    if (e.contains("subcommands")) {
      auto subs = Strings(e["subcommands"], origin, at + ".subcommands");
      if (!subs.ok()) return subs.status();
      r.subcommands = std::move(subs).value();
    }
    if (e.contains("builtin_values")) {
      auto builtin = Strings(e["builtin_values"], origin, at + ".builtin_values");
      if (!builtin.ok()) return builtin.status();
      r.builtin_values = std::move(builtin).value();
    }
    if (e.contains("other_subcommands")) {
      auto other = Strings(e["other_subcommands"], origin, at + ".other_subcommands");
      if (!other.ok()) return other.status();
      r.other_subcommands = std::move(other).value();
    }
    t.launchers.push_back(std::move(r));
  }
  return t;
}

namespace internal {
namespace {

using nlohmann::json;

constexpr size_t kMaxConfigFiles = 16;  // config files read for one launch line

// The launch's subcommand as `r` sees it: the word after the rule's script when a launcher runs
// it (`torchrun ... /opt/venv/bin/swift infer`), else the first word (`swift infer`); empty when
// there is none.
std::string_view SubcommandOf(const LauncherRule& r, const LaunchLine& l) {
  for (size_t i = 0; i + 1 < l.positionals.size(); ++i)
    for (const std::string& p : r.programs)
      if (p != "*" && p != l.program && IsProgramPath(l.positionals[i], p))
        return l.positionals[i + 1];
  return l.positionals.empty() ? std::string_view() : l.positionals.front();
}

// How a rule applies to a launch line: not at all, by the launch command itself (its program or
// launcher: `accelerate`, `llamafactory-cli`), or by the script or module it runs (the trainer:
// `accelerate launch ... -m axolotl.cli.train`, `torchrun ... src/train.py`).
enum class Match { kNone, kCommand, kScript };

// How the rule's program appears on the line, whatever its subcommand.
Match ProgramMatch(const LauncherRule& r, const LaunchLine& l) {
  Match m = Match::kNone;
  for (const std::string& p : r.programs) {
    if (p == "*" || p == l.program || p == l.launcher) m = std::max(m, Match::kCommand);
    if (!l.module.empty() && p == l.module) return Match::kScript;
    for (std::string_view pos : l.positionals)
      if (IsProgramPath(pos, p)) return Match::kScript;
  }
  return m;
}

// Whether the launch runs one of the rule's training subcommands (any, where it lists none) and
// none of its other ones.
bool TrainingSubcommand(const LauncherRule& r, const LaunchLine& l) {
  const std::string_view sub = SubcommandOf(r, l);
  if (!r.subcommands.empty() &&
      std::find(r.subcommands.begin(), r.subcommands.end(), sub) == r.subcommands.end())
    return false;
  return sub.empty() || std::find(r.other_subcommands.begin(), r.other_subcommands.end(), sub) ==
                            r.other_subcommands.end();
}

// Whether the line itself (not a file another rule read into it) sets one of the rule's markers
// as a flag (LauncherRule::markers).
bool LineMarked(const LauncherRule& r, const LaunchLine& l) {
  if (r.markers.empty()) return true;
  for (const Flag& f : l.flags)
    if (f.index >= 0 && std::find(r.markers.begin(), r.markers.end(), f.name) != r.markers.end())
      return true;
  return false;
}

// Whether a config file's top level has one of the rule's markers.
bool FileMarked(const LauncherRule& r, const json& tree) {
  if (!tree.is_object()) return false;
  for (const auto& [key, value] : tree.items())
    if (std::find(r.markers.begin(), r.markers.end(), NormalizedFlagName(key)) != r.markers.end())
      return true;
  return false;
}

// The subcommand entry of `r` matching the most leading positionals of `l` ("finetune full" over
// "finetune"), with how many words it took; nullptr when none matches.
const LauncherRule::SubcommandKeys* MatchedSubcommand(const LauncherRule& r, const LaunchLine& l,
                                                      size_t* words_out) {
  const LauncherRule::SubcommandKeys* sub = nullptr;
  size_t sub_words = 0;
  for (const auto& entry : r.subcommand_set) {
    const std::string& name = entry.first;
    const size_t words = 1 + static_cast<size_t>(std::count(name.begin(), name.end(), ' '));
    if (words <= sub_words || words > l.positionals.size()) continue;
    std::string leading(l.positionals[0]);
    for (size_t w = 1; w < words; ++w) leading.append(" ").append(l.positionals[w]);
    if (leading == name) {
      sub = &entry;
      sub_words = words;
    }
  }
  *words_out = sub_words;
  return sub;
}

bool IsConfigName(std::string_view p) {
  const std::string n = Lower(p);
  return n.ends_with(".json") || n.ends_with(".yaml") || n.ends_with(".yml") ||
         n.ends_with(".toml");
}

// A scalar (or a list of scalars, joined with ',') as text; empty for objects and null.
std::string Text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // In range first: converting a double beyond int64 is undefined (found by fuzz_submission:
    // 8.55556e+46 in a config file).
    if (d > -1e15 && d < 1e15 && d == static_cast<double>(static_cast<int64_t>(d)))
      return std::to_string(static_cast<int64_t>(d));
    return v.dump();
  }
  if (v.is_array()) {
    std::string out;
    for (const json& e : v) {
      if (e.is_object() || e.is_array()) return "";
      out += (out.empty() ? "" : ",") + Text(e);
    }
    return out;
  }
  return "";
}

const json* AtPath(const json& tree, std::string_view path) {
  const json* node = &tree;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    const std::string part(path.substr(0, dot));
    if (!node->is_object()) return nullptr;
    const auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return node;
}

// Whether `value` matches `pattern`, where '*' matches any run of characters (both lower case).
// Greedy, going back only to the last '*': at most |pattern| x |value| steps for any input.
bool GlobMatches(std::string_view pattern, std::string_view value) {
  size_t p = 0, v = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (v < value.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = v;
    } else if (p < pattern.size() && pattern[p] == value[v]) {
      ++p;
      ++v;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      v = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// `v` through the rule's value map (ConfigKeyRule::values), or empty when the map does not match
// it or it is DeepSpeed's "auto" (the trainer fills it from its own flags).
std::string MappedValue(const ConfigKeyRule& r, std::string v) {
  if (r.values.empty()) return EqualsIgnoreCase(v, "auto") ? "" : v;
  const std::string lower = Lower(v);
  for (const auto& [from, to] : r.values)  // a value named in the map, else a pattern
    if (from.find('*') == std::string::npos && lower == Lower(from)) return to == "=" ? v : to;
  // The most specific pattern that matches (the most characters besides '*'): a JSON object's
  // keys come sorted, not in the order written.
  const std::pair<std::string, std::string>* best = nullptr;
  size_t best_literal = 0;
  for (const auto& entry : r.values) {
    if (entry.first.find('*') == std::string::npos || !GlobMatches(Lower(entry.first), lower))
      continue;
    const size_t literal = entry.first.size() - static_cast<size_t>(std::count(
                                                    entry.first.begin(), entry.first.end(), '*'));
    if (best == nullptr || literal > best_literal) {
      best = &entry;
      best_literal = literal;
    }
  }
  if (best == nullptr) return "";
  return best->second == "=" ? v : best->second;
}

// The value a rule gives for `tree`, or empty when the file does not set it (or the value map
// does not match, or it is DeepSpeed's "auto", which the trainer fills from its own flags).
std::string RuleValue(const ConfigKeyRule& r, const json& tree) {
  std::string v;
  if (r.paths.empty()) return r.values.front().second;  // a constant
  for (const std::string& p : r.paths) {
    const json* node = AtPath(tree, p);
    if (node == nullptr) return "";
    const std::string t = Text(*node);
    // An OmegaConf interpolation (llm-foundry's `max_seq_len: ${max_seq_len}`) is another key's
    // value, which its own rule reads: not a value here.
    if (t.empty() || (t.starts_with("${") && t.ends_with("}"))) return "";
    v += (v.empty() ? "" : "/") + t;
  }
  return MappedValue(r, std::move(v));
}

std::string JoinedPaths(const ConfigKeyRule& r) {
  std::string out;
  for (const std::string& p : r.paths) out += (out.empty() ? "" : "+") + p;
  return out.empty() ? "(always)" : out;
}

// The tree of the config file `path`: a file the script wrote itself, else the file on disk.
// `found_at` gets the path it was read from when that is not `path` itself.
Result<json> LoadConfig(const FileContext& files, std::string_view path, std::string_view syntax,
                        std::string* found_at) {
  const FileSource* source = files.ctx->files;
  if (source == nullptr) return Status::Unsupported("no files are read here");
  auto same = [](std::string_view a, std::string_view b) {
    while (a.starts_with("./")) a.remove_prefix(2);
    while (b.starts_with("./")) b.remove_prefix(2);
    return a == b;
  };
  if (files.written != nullptr)
    for (auto it = files.written->rbegin(); it != files.written->rend(); ++it)
      if (same(it->first, path)) return source->ParseConfig(path, it->second, syntax);
  Result<std::string> text = source->ReadText(path);
  // Not in the submission directory: a script written to be run from a folder of its own repository
  // (InternVL's shell/.../x.sh runs from internvl_chat/, where its --deepspeed file lies) names it
  // relative to that folder: the script's folder or one above it.
  if (!text.ok())
    if (Result<std::string> t = ReadNearScript(*files.ctx, path, true, found_at); t.ok())
      text = std::move(t);
  if (!text.ok()) return text.status();
  return source->ParseConfig(path, *text, syntax);
}

// A config key overridden on the command line (torchtitan's `--training.seq_len 4096`, OLMo's
// `--activation_checkpointing=whole_layer`: any trainer whose flags are the file's dotted keys, or
// a top-level key that the format reads): set in `tree`, and the flag's origin returned for the
// key's path (dots kept, '-' as '_').
std::map<std::string, std::string> ApplyLineOverrides(const ConfigFormat& fmt, const LaunchLine& l,
                                                      json* tree) {
  auto format_reads = [&fmt](std::string_view name) {
    for (const ConfigKeyRule& r : fmt.keys)
      for (const std::string& p : r.paths)
        if (NormalizedFlagName(p) == name) return true;
    return false;
  };
  std::map<std::string, std::string> overridden;
  for (const Flag& f : l.flags) {
    if (f.index < 0 || f.unresolved) continue;
    if (f.name.find('.') == std::string_view::npos && !format_reads(f.name)) continue;
    json* node = tree;
    std::string_view rest = f.name;
    while (node->is_object()) {
      const size_t dot = rest.find('.');
      json& child = (*node)[std::string(rest.substr(0, dot))];
      if (dot == std::string_view::npos) {
        child = std::string(f.value);
        overridden[std::string(f.name)] =
            "line " + std::to_string(l.line) + ": --" + std::string(f.name);
        break;
      }
      if (child.is_null()) child = json::object();
      node = &child;
      rest.remove_prefix(dot + 1);
    }
  }
  return overridden;
}

// `tree` with '-' as '_' in every object key ("num-layers" -> "num_layers"), down to a depth no
// config key lies below (a hostile file's deep nesting is copied as is, not recursed into).
json Underscored(const json& tree, int depth = 0) {
  if (depth > 16) return tree;
  if (tree.is_array()) {
    json out = json::array();
    for (const json& e : tree) out.push_back(Underscored(e, depth + 1));
    return out;
  }
  if (!tree.is_object()) return tree;
  json out = json::object();
  for (const auto& [k, v] : tree.items()) {
    std::string key = k;
    std::replace(key.begin(), key.end(), '-', '_');
    out[key] = Underscored(v, depth + 1);
  }
  return out;
}

// Reads one config file of `fmt` into flags of `l` and values of `sink`.
void ApplyFormat(const ConfigFormat& fmt, const json& file_tree, std::string_view path,
                 LaunchLine* l, Sink* sink) {
  // Keys a rule sets directly (no flag for the trainer's reader to compare) take the command
  // line's overrides of the same dotted keys.
  json tree = fmt.dashes_as_underscores ? Underscored(file_tree) : file_tree;
  const bool direct = std::any_of(fmt.keys.begin(), fmt.keys.end(), [](const ConfigKeyRule& r) {
    return r.flag.empty() && !(r.paths.size() == 1 && r.paths[0] == "*");
  });
  const std::map<std::string, std::string> overridden =
      direct ? ApplyLineOverrides(fmt, *l, &tree) : std::map<std::string, std::string>();
  std::vector<std::pair<std::string, std::string>> flags;
  std::vector<std::string> origins;
  auto apply = [&](const ConfigKeyRule& r, const std::string& value, const std::string& where) {
    if (value.empty()) return;
    if (!r.flag.empty()) {
      flags.emplace_back(r.flag, value);
      origins.push_back(where);
      return;
    }
    for (const std::string& p : r.paths)
      if (const auto it = overridden.find(NormalizedFlagName(p)); it != overridden.end())
        return sink->SetWithOrigin(r.key, value, it->second);
    sink->SetWithOrigin(r.key, value, std::string(path) + ": " + where);
  };
  // A format's defaults yield to what an earlier file of the same launch set (GPT-NeoX merges
  // several files: the second file's defaults must not undo the first file's keys).
  for (const ConfigKeyRule& r : fmt.always)
    if (r.key.empty() || !sink->Has(r.key)) apply(r, RuleValue(r, tree), "(" + fmt.name + ")");
  for (const ConfigKeyRule& r : fmt.keys) {
    if (r.paths.size() == 1 && r.paths[0] == "*") {  // every top-level key, as its own flag
      if (!tree.is_object()) continue;
      for (const auto& [k, v] : tree.items()) {
        std::string value = Text(v);
        if (value.empty() || EqualsIgnoreCase(value, "auto")) continue;
        flags.emplace_back(NormalizedFlagName(k), std::move(value));
        origins.push_back(k);
      }
      continue;
    }
    apply(r, RuleValue(r, tree), JoinedPaths(r));
  }
  if (!flags.empty()) l->AddFileFlags(std::move(flags), path, std::move(origins));
}

}  // namespace

Result<std::string> ReadNearScript(const ScriptContext& ctx, std::string_view path,
                                   bool folders_above, std::string* found_at) {
  const std::string& dir = ctx.script_dir;
  if (path.starts_with('/') || dir.empty() || dir == "." ||
      (folders_above &&
       (path.starts_with("../") || dir.starts_with('/') || dir.starts_with("../"))))
    return Status::NotFound(std::string(path));
  std::string_view name = path;
  while (name.starts_with("./")) name.remove_prefix(2);
  for (std::string_view d = dir; !d.empty();) {
    std::string candidate = std::string(d) + "/" + std::string(name);
    if (Result<std::string> t = ctx.files->ReadText(candidate); t.ok()) {
      *found_at = std::move(candidate);
      return t;
    }
    const size_t slash = folders_above ? d.rfind('/') : std::string_view::npos;
    d = slash == std::string_view::npos ? std::string_view() : d.substr(0, slash);
  }
  return Status::NotFound(std::string(path));
}

bool NotTrainingLaunch(const LauncherTable* table, const LaunchLine& l) {
  if (table == nullptr) return false;
  for (const LauncherRule& r : table->launchers)
    if ((!r.subcommands.empty() || !r.other_subcommands.empty()) &&
        ProgramMatch(r, l) != Match::kNone && !TrainingSubcommand(r, l))
      return true;
  return false;
}

bool IsProgramPath(std::string_view pos, std::string_view p) {
  if (p.find('/') == std::string_view::npos) return Basename(pos) == p;
  return pos == p || (pos.ends_with(p) && pos[pos.size() - p.size() - 1] == '/');
}

bool IsTableProgram(const LauncherTable* table, std::string_view program) {
  if (table == nullptr || program.empty()) return false;
  for (const LauncherRule& r : table->launchers)
    for (const std::string& p : r.programs)
      if (p == program) return true;
  return false;
}

const LauncherRule* ReadConfigFiles(const FileContext& files, LaunchLine* l, Sink* sink) {
  if (files.ctx == nullptr || files.ctx->launchers == nullptr) return nullptr;
  const LauncherTable& table = *files.ctx->launchers;
  // The launch's own rule: the trainer's (matched by the script or module run) before the launch
  // command's (`accelerate launch --config_file a.yaml -m axolotl.cli.train cfg.yml`: axolotl).
  const LauncherRule* own = nullptr;
  const LauncherRule* first_match = nullptr;
  Match own_match = Match::kNone, first_match_kind = Match::kNone;
  std::set<std::string> done;  // format + path already read (a file named twice is read once)
  std::string not_read;        // the first file that could not be read
  // A file may name another (LLaMA-Factory's `deepspeed: ds_z3.json`): its key is a flag of the
  // line after the first round, and a later round reads it.
  for (int round = 0; round < 4; ++round) {
    bool read_any = false;
    for (const LauncherRule& r : table.launchers) {
      const Match match = ProgramMatch(r, *l);
      if (match == Match::kNone) continue;
      const bool program_rule = !(r.programs.size() == 1 && r.programs[0] == "*");
      // A rule with markers applies once the line or one of its files shows one.
      bool marked = LineMarked(r, *l);
      const ConfigFormat* fmt = table.Format(r.format);
      std::vector<std::string> paths;  // copies: reading adds flags to the line
      std::vector<std::string> via;    // the flag that names each ("" for a positional)
      for (const std::string& name : r.flags) {
        const Flag* f = l->Find(name);
        if (f == nullptr || f->unresolved || f->value == "true" || f->value.empty()) continue;
        if (std::find(r.builtin_values.begin(), r.builtin_values.end(), f->value) !=
            r.builtin_values.end())
          continue;
        paths.emplace_back(f->value);
        via.push_back(name);
      }
      if (r.positional) {
        // GPT-NeoX's `-d configs a.yml b.yml`: the names are relative to the -d folder.
        const Flag* dir = r.directory_flag.empty() ? nullptr : l->Find(r.directory_flag);
        const bool in_dir = dir != nullptr && !dir->unresolved && dir->value != "true";
        for (std::string_view p : l->positionals)
          if (IsConfigName(p)) {
            paths.push_back(in_dir && !p.starts_with('/')
                                ? std::string(dir->value) + "/" + std::string(p)
                                : std::string(p));
            via.emplace_back();
          }
      }
      for (size_t k = 0; k < paths.size(); ++k) {
        if (!done.insert(r.format + '\n' + paths[k]).second) continue;
        if (done.size() > kMaxConfigFiles) {
          sink->Warn(paths[k], "more than " + std::to_string(kMaxConfigFiles) +
                                   " config files for one launch; not read");
          continue;
        }
        std::string found_at;
        Result<json> tree = LoadConfig(files, paths[k], fmt->syntax, &found_at);
        if (!tree.ok()) {
          if (files.ctx->files != nullptr && marked)
            sink->Warn(via[k].empty() ? paths[k] : "--" + via[k], tree.status().message());
          if (not_read.empty() && marked) not_read = paths[k];
          continue;
        }
        if (!marked) {
          if (!FileMarked(r, *tree)) {
            done.erase(r.format + '\n' + paths[k]);  // not this rule's: another may read it
            continue;
          }
          marked = true;
        }
        for (Flag& f : l->flags)  // the flag naming it: the framework reader must not guess
          if (!via[k].empty() && f.name == via[k] && f.value == paths[k]) f.file_read = true;
        if (!found_at.empty())
          sink->Warn(via[k].empty() ? paths[k] : "--" + via[k],
                     paths[k] + " is not in the submission directory; read " + found_at +
                         " (the script runs from a folder above its own)");
        sink->out()->files_read.push_back(found_at.empty() ? paths[k] : found_at);
        ApplyFormat(*fmt, *tree, paths[k], l, sink);
        read_any = true;
        if (program_rule && (own == nullptr || (match == Match::kScript && own_match != match))) {
          own = &r;
          own_match = match;
        }
      }
      if (program_rule && marked &&
          (first_match == nullptr || (match == Match::kScript && first_match_kind != match))) {
        first_match = &r;
        first_match_kind = match;
      }
    }
    if (!read_any) break;
  }
  // The launch's own rule: the first that read its file, else the first that named the program;
  // a trainer's rule before a launcher's even when only the launcher's file was read
  // (`accelerate launch --config_file fsdp.yaml src/train_bash.py --stage sft ...`).
  if (own == nullptr || (own_match == Match::kCommand && first_match_kind == Match::kScript))
    own = first_match;

  if (own != nullptr) {
    // The subcommand entry matching the most leading positionals ("finetune full" over "finetune").
    size_t sub_words = 0;
    const LauncherRule::SubcommandKeys* sub = MatchedSubcommand(*own, *l, &sub_words);
    // Its flags that set request keys: after the files' keys, so that the line wins.
    for (const ConfigKeyRule& r : own->flag_keys) {
      const Flag* f = l->Find(r.paths[0]);
      if (f == nullptr) continue;
      if (f->unresolved) {
        sink->UnreadUnknown(r.key, "--" + r.paths[0]);
        continue;
      }
      const std::string v = MappedValue(r, std::string(f->value));
      if (!v.empty())
        sink->SetWithOrigin(r.key, v, "line " + std::to_string(l->line) + ": --" + r.paths[0]);
    }
    if (sub != nullptr && !own->subcommand_positional.empty() &&
        l->positionals.size() > sub_words && !IsConfigName(l->positionals[sub_words]) &&
        !sink->Has(own->subcommand_positional)) {
      sink->SetWithOrigin(own->subcommand_positional, std::string(l->positionals[sub_words]),
                          "line " + std::to_string(l->line) + ": " + own->name + " " +
                              std::string(l->positionals[0]) + " ... " +
                              std::string(l->positionals[sub_words]));
    }
    for (const auto& [key, what] : own->unread) sink->MarkUnread(key, own->name, what);
    // An LLM trainer whose files named no model (one could not be read, or the model is set
    // elsewhere): still LLM training, its model unread (request.cc).
    if (own->trains_llms && !sink->Has("model"))
      sink->MarkUnread("model", own->name,
                       not_read.empty() ? "(its files name no model)" : not_read + " (not read)");

    // What the launcher and its subcommand imply: below everything else.
    std::vector<Assignment> implied;
    for (const auto& [key, value] : own->set)
      implied.push_back(Assignment{key, value, "launcher " + own->name});
    if (sub != nullptr)
      for (const auto& [key, value] : sub->second)
        implied.push_back(Assignment{key, value, "launcher " + own->name + " " + sub->first});
    std::vector<Assignment>& values = sink->out()->values;
    values.insert(values.begin(), implied.begin(), implied.end());
  }
  return own;
}

}  // namespace internal
}  // namespace fmte
