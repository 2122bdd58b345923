// ScanScript: just enough of POSIX shell / bash to read the launch lines of batch scripts the way
// they are written in the wild (HF/TRL examples, Megatron's examples/*.sh with bash arrays,
// torchtune docs): backslash continuations, quotes, VAR=value and VAR=( ... ) assignments with
// $VAR,
// ${VAR}, ${VAR:-default}, ${ARR[@]} expansion, command separators, redirections, heredocs and
// comments. It never executes anything; $(...), `...`, $1 and unknown variables are "unresolved".
// Bounded: kMaxScriptBytes of input, kMaxLineBytes per logical line, kMaxJoinedLines physical lines
// per logical line; the tokenizer's own bounds are in shell_tokenizer.h.
#include <algorithm>
#include <array>
#include <map>

#include "request_internal.h"
#include "shell_tokenizer.h"

namespace fmte::internal {
namespace {

constexpr size_t kMaxJoinedLines = 2000;  // physical lines in one logical line
// Words that may stand before an array assignment, with their blank.
constexpr std::string_view kDeclarations[] = {"export ", "local ", "readonly ", "declare -a ",
                                              "declare "};

// `s` without a leading export/declare -a/local/readonly; the length of the NAME in "NAME=(" at
// its start, or npos when it does not start with one.
size_t ArrayNameLength(std::string_view* s) {
  for (std::string_view kw : kDeclarations)
    if (s->starts_with(kw)) {
      s->remove_prefix(kw.size());
      *s = Trim(*s);
    }
  size_t k = 0;
  if (s->empty() || !IsIdentStart((*s)[0])) return std::string_view::npos;
  while (k < s->size() && IsIdent((*s)[k])) ++k;
  return s->substr(k, 2) == "=(" ? k : std::string_view::npos;
}

// "NAME=( ... )" (optionally after export/declare -a/local/readonly): the array's inner text.
bool ArrayAssignment(std::string_view line, std::string_view* name, std::string_view* inner) {
  if (line.find('(') == std::string_view::npos) return false;  // most lines
  std::string_view s = Trim(line);
  const size_t k = ArrayNameLength(&s);
  if (k == std::string_view::npos) return false;
  const size_t close = s.rfind(')');
  if (close == std::string_view::npos || close < k + 2) return false;
  *name = s.substr(0, k);
  *inner = s.substr(k + 2, close - k - 2);
  return true;
}

// "NAME=(" with no closing parenthesis on the line: the array continues on the next lines.
bool StartsOpenArray(std::string_view s) {
  if (s.find('(') == std::string_view::npos) return false;  // most lines
  const size_t k = ArrayNameLength(&s);
  return k != std::string_view::npos && s.find(')', k) == std::string_view::npos;
}

// NUL and control bytes other than newline, tab and carriage return.
bool IsBinaryByte(unsigned char c) { return c < 0x20 && c != '\n' && c != '\t' && c != '\r'; }

// The number of binary bytes in `s`. Counted in fixed chunks of 32 bytes, which the compiler turns
// into vector compares at -O2 (about 1 instruction per byte instead of 6: this reads every byte of
// every script).
size_t CountBinaryBytes(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t count = 0, i = 0;
  for (; i + 32 <= s.size(); i += 32) {
    unsigned char chunk = 0;  // at most 32: byte lanes
    for (size_t k = 0; k < 32; ++k) chunk += IsBinaryByte(p[i + k]);
    count += chunk;
  }
  for (; i < s.size(); ++i) count += IsBinaryByte(p[i]);
  return count;
}

// Heredoc delimiter of a line ("cat <<EOF", "<<-'END'"), empty when none.
std::string HeredocDelimiter(std::string_view line) {
  const size_t p = line.find("<<");
  if (p == std::string_view::npos || line.substr(p, 3) == "<<<") return "";
  if (OpenQuoteAfter(line.substr(0, p), 0) != 0) return "";
  std::string_view r = line.substr(p + 2);
  if (!r.empty() && r.front() == '-') r.remove_prefix(1);
  r = Trim(r);
  std::string d;
  for (char c : r) {
    if (c == '\'' || c == '"') continue;
    if (!IsIdent(c)) break;
    d += c;
  }
  return d;
}

}  // namespace

void TextArena::NewBlock(size_t bytes) {
  bytes = std::max(kBlockBytes, bytes);  // the rest of the current block is left unused
  blocks_.push_back(std::make_unique_for_overwrite<char[]>(bytes));
  next_ = blocks_.back().get();
  left_ = bytes;
}

namespace {

constexpr int kMaxNesting = 4;      // source / bash -c levels read inside each other
constexpr size_t kMaxSourced = 16;  // files `source`d by one script
constexpr size_t kMaxHeredocBytes = size_t{1} << 20;  // one heredoc body kept (a written file)

// $NAME, ${NAME} and ${NAME:-x} in a heredoc body or a path replaced by known scalar values; the
// rest (unknown names, $(...)) stays as written. Bounded: expansion stops once the result holds
// kMaxHeredocBytes (a fuzzed script whose heredoc, expanded with variables it had set and read
// again through nested source / bash -c levels, reached 1.6 GB).
std::string ExpandSimple(std::string_view text, const ShellVars& vars) {
  std::string out;
  out.reserve(std::min(text.size(), kMaxHeredocBytes));
  for (size_t i = 0; i < text.size() && out.size() < kMaxHeredocBytes;) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i++];
      continue;
    }
    const bool braces = text[i + 1] == '{';
    size_t k = i + 1 + (braces ? 1 : 0);
    const size_t start = k;
    while (k < text.size() && IsIdent(text[k])) ++k;
    std::string_view name = text.substr(start, k - start);
    std::string_view fallback;
    bool has_fallback = false;
    if (braces) {
      const size_t close = text.find('}', k);
      if (close == std::string_view::npos || name.empty()) {
        out += text[i++];
        continue;
      }
      std::string_view op = text.substr(k, close - k);
      if (op.starts_with(":-") || op.starts_with("-")) {
        fallback = op.substr(op[0] == ':' ? 2 : 1);
        has_fallback = true;
      } else if (!op.empty()) {
        out += text[i++];
        continue;
      }
      k = close + 1;
    }
    const auto it = name.empty() ? vars.end() : vars.find(name);
    if (it != vars.end() && !HasUnresolved(it->second) && !it->second.items.empty()) {
      for (size_t n = 0; n < it->second.items.size(); ++n)
        out.append(n ? " " : "").append(it->second.items[n].text);
    } else if (has_fallback) {
      out += fallback;
    } else {
      out.append(text.substr(i, k - i));
    }
    i = k;
  }
  return out;
}

// The file a heredoc line writes to: the target of `>`/`>>` outside quotes, or of `tee [-a]`.
std::string_view RedirectTarget(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '>' && (i == 0 || line[i - 1] != '<')) {
      size_t k = i + 1;
      while (k < line.size() && (line[k] == '>' || line[k] == '|' || IsShellSpace(line[k]))) ++k;
      size_t e = k;
      while (e < line.size() && !IsShellSpace(line[e]) && line[e] != ';' && line[e] != '&' &&
             line[e] != '|' && line[e] != '<')
        ++e;
      std::string_view t = line.substr(k, e - k);
      if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front())
        t = t.substr(1, t.size() - 2);
      return t;
    }
  }
  const size_t tee = line.find("tee ");
  if (tee != std::string_view::npos && (tee == 0 || IsShellSpace(line[tee - 1]))) {
    std::string_view rest = Trim(line.substr(tee + 4));
    if (rest.starts_with("-a ")) rest = Trim(rest.substr(3));
    return rest.substr(0, std::min(rest.find_first_of(" \t<;|&"), rest.size()));
  }
  return {};
}

// Reads a script, the files it `source`s and the strings it runs with `bash -c`, in one shell
// state (variables, arrays, positional parameters).
class Scanner {
 public:
  Scanner(ScanOutput* out, const ScriptContext* ctx)
      : out_(out), ctx_(ctx), tok_(&vars_, &out->text, &out->warnings) {
    if (ctx_ == nullptr) return;
    for (const auto& [name, value] : ctx_->env) Set(name, value);
    ShellVar all;
    for (size_t k = 0; k < ctx_->args.size() && k < 64; ++k) {
      const std::string_view v = out_->text.Store(ctx_->args[k]);
      if (k < 9) Set(std::to_string(k + 1), v);
      all.items.push_back(Word{v, false});
    }
    Set("#", std::to_string(ctx_->args.size()));
    vars_.emplace(out_->text.Store("@"), all);
    vars_.emplace(out_->text.Store("*"), std::move(all));
  }

  // Scans `script`; `fixed_line` > 0: the commands found are reported at that line of the batch
  // script (the line of the `source` or `bash -c` that led here).
  void Scan(std::string_view script, int depth, int fixed_line);
  // The names of the exported variables.
  void ExportedInto(std::vector<std::string>* names) const {
    for (const auto& [name, var] : vars_)
      if (var.exported) names->emplace_back(name);
  }

 private:
  void Set(std::string_view name, std::string_view value) {
    if (vars_.size() >= kMaxShellVars) return;
    ShellVar v;
    v.items.push_back(Word{out_->text.Store(value), false});
    if (const auto it = vars_.find(name); it != vars_.end())
      it->second = std::move(v);
    else
      vars_.emplace(out_->text.Store(name), std::move(v));
  }
  // The commands from index `first` on: `source FILE` reads FILE, `bash -c STRING` reads STRING.
  void Follow(size_t first, int depth, int line);
  // A command that runs a shell script file (./x.sh, bash x.sh, srun ... x.sh): reads it.
  void RunScriptFile(const std::vector<Word>& words, int depth, int line);
  // Starts capturing a heredoc opened on `text` (one logical line) when it writes a file or
  // fills a variable (`read -d '' VAR <<EOF`); `first`: the line's first command.
  void StartHeredoc(std::string_view text, size_t first);
  void EndHeredoc();

  ScanOutput* out_;
  const ScriptContext* ctx_;
  ShellVars vars_;
  ShellTokenizer tok_;
  size_t sourced_ = 0;
  // The heredoc being captured.
  std::string heredoc_path_, heredoc_var_, heredoc_body_;
  bool heredoc_expand_ = false;
};

void Scanner::Follow(size_t first, int depth, int line) {
  if (depth >= kMaxNesting) return;
  const size_t end = out_->commands.size();
  for (size_t c = first; c < end && c < out_->commands.size(); ++c) {
    // A nested scan appends to out_->commands, which may move this vector: nothing reads `words`
    // after a Scan (the texts themselves live in the arena and stay valid).
    const std::vector<Word>& words = out_->commands[c].words;
    if (words.empty()) continue;
    const std::string_view w0 = words[0].text;
    if ((w0 == "source" || w0 == ".") && words.size() >= 2) {
      if (words[1].unresolved || ctx_ == nullptr || ctx_->files == nullptr) continue;
      if (sourced_ >= kMaxSourced) {
        out_->warnings.push_back("line " + std::to_string(line) + ": more than " +
                                 std::to_string(kMaxSourced) + " sourced files; not read");
        continue;
      }
      ++sourced_;
      std::string path(words[1].text);
      Result<std::string> text = ctx_->files->ReadText(path);
      // Written to be submitted from its own folder (`source ./env.sh` beside it).
      if (std::string beside; !text.ok()) {
        if (Result<std::string> t = ReadNearScript(*ctx_, path, false, &beside); t.ok()) {
          out_->warnings.push_back("line " + std::to_string(line) + ": source: " + path +
                                   " is not in the submission directory; read " + beside +
                                   " beside the script (submit from its folder)");
          text = std::move(t);
          path = std::move(beside);
        }
      }
      if (!text.ok()) {
        out_->warnings.push_back("line " + std::to_string(line) +
                                 ": source: " + text.status().message());
        continue;
      }
      out_->files_read.push_back(path);
      Scan(*text, depth + 1, line);
      continue;
    }
    bool ran_string = false;
    for (size_t k = 0; k + 2 < words.size(); ++k) {
      const std::string_view b = Basename(words[k].text);
      const std::string_view flag = words[k + 1].text;
      if ((b == "bash" || b == "sh") && flag.size() >= 2 && flag[0] == '-' && flag.back() == 'c' &&
          flag.find_first_not_of("-lexc") == std::string_view::npos) {
        const std::string_view inner = words[k + 2].text;
        Scan(inner, depth + 1, line);
        ran_string = true;
        break;
      }
    }
    if (!ran_string) RunScriptFile(words, depth, line);
  }
}

void Scanner::RunScriptFile(const std::vector<Word>& words, int depth, int line) {
  // `./train.sh ARGS`, `bash train.sh ARGS`, `srun [OPTIONS] [bash] ./train.sh ARGS` (fms-fsdp's
  // train.slurm runs its launch line this way): the script a command runs, with its arguments as
  // $1..., read like a sourced file (the child inherits what the batch script exported).
  if (ctx_ == nullptr || ctx_->files == nullptr) return;
  const std::string_view w0 = Basename(words[0].text);
  const bool runner = w0 == "srun" || w0 == "bash" || w0 == "sh" || w0 == "exec";
  size_t k = 0;
  if (!runner) {
    if (!words[0].text.ends_with(".sh")) return;
  } else {
    for (k = 1; k < words.size(); ++k) {
      const std::string_view w = words[k].text;
      if (w.ends_with(".sh")) break;
      // srun's options; bash/sh themselves (srun bash x.sh); anything else is another program.
      if (!w.starts_with("-") && Basename(w) != "bash" && Basename(w) != "sh" &&
          (k == 0 || !words[k - 1].text.starts_with("-") ||
           words[k - 1].text.find('=') != std::string_view::npos))
        return;
    }
    if (k >= words.size()) return;
  }
  if (words[k].unresolved) return;
  if (sourced_ >= kMaxSourced) return;
  ++sourced_;
  Result<std::string> text = ctx_->files->ReadText(words[k].text);
  if (!text.ok()) {
    out_->warnings.push_back("line " + std::to_string(line) + ": " + std::string(words[k].text) +
                             ": " + text.status().message());
    return;
  }
  out_->files_read.emplace_back(words[k].text);
  // Its own positional parameters while it is read; the batch script's afterwards.
  static constexpr std::string_view kPositional[] = {"1", "2", "3", "4", "5", "6",
                                                     "7", "8", "9", "#", "@", "*"};
  std::vector<std::pair<std::string_view, ShellVar>> saved;
  for (std::string_view name : kPositional)
    if (const auto it = vars_.find(name); it != vars_.end())
      saved.emplace_back(it->first, it->second);
  ShellVar all;
  size_t n = 0;
  for (size_t a = k + 1; a < words.size() && n < 64; ++a, ++n) {
    if (n < 9) {
      ShellVar v;
      v.items.push_back(words[a]);
      v.unresolved = words[a].unresolved;
      if (const auto it = vars_.find(std::to_string(n + 1)); it != vars_.end())
        it->second = std::move(v);
      else if (vars_.size() < kMaxShellVars)
        vars_.emplace(out_->text.Store(std::to_string(n + 1)), std::move(v));
    }
    all.items.push_back(words[a]);
  }
  for (size_t m = n; m < 9; ++m)
    if (const auto it = vars_.find(std::to_string(m + 1)); it != vars_.end()) vars_.erase(it);
  Set("#", std::to_string(n));
  for (std::string_view name : {std::string_view("@"), std::string_view("*")}) {
    if (const auto it = vars_.find(name); it != vars_.end())
      it->second = all;
    else
      vars_.emplace(out_->text.Store(name), all);
  }
  Scan(*text, depth + 1, line);
  for (std::string_view name : kPositional)
    if (const auto it = vars_.find(name); it != vars_.end()) vars_.erase(it);
  for (auto& [name, v] : saved) vars_.emplace(name, std::move(v));
}

void Scanner::StartHeredoc(std::string_view text, size_t first) {
  heredoc_path_.clear();
  heredoc_var_.clear();
  heredoc_body_.clear();
  // A quoted delimiter (<<'EOF', <<"EOF", <<\EOF) keeps the body as written.
  std::string_view after = text.substr(text.find("<<") + 2);
  while (!after.empty() && (after.front() == '-' || IsShellSpace(after.front())))
    after.remove_prefix(1);
  heredoc_expand_ =
      after.empty() || (after.front() != '\'' && after.front() != '"' && after.front() != '\\');
  for (size_t c = first; c < out_->commands.size(); ++c) {
    const std::vector<Word>& w = out_->commands[c].words;
    if (!w.empty() && w[0].text == "read" && w.size() >= 2 && !w.back().unresolved) {
      const std::string_view name = w.back().text;
      if (!name.empty() && IsIdentStart(name[0]) &&
          std::all_of(name.begin(), name.end(), [](char ch) { return IsIdent(ch); }))
        heredoc_var_ = std::string(name);
    }
  }
  if (heredoc_var_.empty()) {
    const std::string_view target = RedirectTarget(text);
    if (!target.empty() && target != "/dev/null" && target.find("$(") == std::string_view::npos)
      heredoc_path_ = ExpandSimple(target, vars_);
  }
}

void Scanner::EndHeredoc() {
  std::string body = heredoc_expand_ ? ExpandSimple(heredoc_body_, vars_) : heredoc_body_;
  if (!heredoc_var_.empty()) {
    Set(heredoc_var_, body);
  } else if (!heredoc_path_.empty() && out_->written_files.size() < 64) {
    out_->written_files.emplace_back(heredoc_path_, std::move(body));
  }
  heredoc_path_.clear();
  heredoc_var_.clear();
  heredoc_body_.clear();
}

void Scanner::Scan(std::string_view script, int depth, int fixed_line) {
  std::string logical;
  std::string heredoc;
  int line_no = 0, start_line = 0;
  size_t joined = 0;
  char open_quote = 0;
  bool open_array = false;
  size_t pos = 0;
  auto line_of = [&](int l) { return fixed_line > 0 ? fixed_line : l; };
  while (pos < script.size()) {
    size_t nl = script.find('\n', pos);
    if (nl == std::string_view::npos) nl = script.size();
    std::string_view phys = script.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!phys.empty() && phys.back() == '\r') phys.remove_suffix(1);
    if (!heredoc.empty()) {
      if (Trim(phys) == heredoc) {
        heredoc.clear();
        EndHeredoc();
      } else if ((!heredoc_path_.empty() || !heredoc_var_.empty()) &&
                 heredoc_body_.size() + phys.size() < kMaxHeredocBytes) {
        heredoc_body_.append(phys).push_back('\n');
      }
      continue;
    }
    if (logical.empty()) {
      start_line = line_no;
      joined = 0;
      const std::string_view t = Trim(phys);
      if (t.starts_with("#FMTE") && (t.size() == 5 || IsShellSpace(t[5]))) {
        if (depth == 0)
          out_->fmte_lines.emplace_back(line_no, std::string(t.substr(5, kMaxLineBytes)));
        continue;
      }
      if (t.empty() || t.front() == '#') continue;
      open_array = StartsOpenArray(t);
    }
    if (logical.size() + phys.size() > kMaxLineBytes) {
      out_->warnings.push_back("line " + std::to_string(line_of(start_line)) +
                               ": logical line longer than " + std::to_string(kMaxLineBytes) +
                               " bytes ignored");
      logical.clear();
      open_quote = 0;
      open_array = false;
      continue;
    }
    // Backslash-newline continues the line (outside single quotes).
    bool cont = false;
    if (!phys.empty() && phys.back() == '\\' && open_quote != '\'') {
      size_t bs = 0;
      for (size_t k = phys.size(); k > 0 && phys[k - 1] == '\\'; --k) ++bs;
      if (bs % 2 == 1) {
        phys.remove_suffix(1);
        cont = true;
      }
    }
    open_quote = OpenQuoteAfter(phys, open_quote);
    if (open_array && Trim(phys).find(')') != std::string_view::npos && open_quote == 0)
      open_array = false;
    if ((cont || open_quote != 0 || open_array) && pos < script.size() &&
        ++joined < kMaxJoinedLines) {
      logical += phys;
      // Inside double quotes bash removes a backslash-newline altogether (a `bash -c "..."`
      // script's continued launch line stays one line); elsewhere a quote or array goes on on the
      // next line, and a continued line outside quotes is joined with a blank.
      if (!(cont && open_quote == '"')) logical += (open_quote != 0 || open_array) ? '\n' : ' ';
      continue;
    }
    // The logical line: the joined lines, or this physical line itself (most lines: no copy).
    std::string_view text = phys;
    if (!logical.empty()) {
      logical += phys;
      text = logical;
    }
    if (open_quote != 0)
      out_->warnings.push_back("line " + std::to_string(line_of(start_line)) +
                               ": unterminated quote");
    open_quote = 0;
    open_array = false;

    std::string_view name;
    std::string_view inner;
    if (ArrayAssignment(text, &name, &inner)) {
      std::vector<Command> cmds;
      tok_.Run(inner, line_of(start_line), &cmds, /*assignments=*/false);
      ShellVar v;
      size_t items = 0;
      for (const Command& c : cmds) items += c.words.size();
      v.items.reserve(items);
      for (const Command& c : cmds) v.items.insert(v.items.end(), c.words.begin(), c.words.end());
      if (const auto it = vars_.find(name); it != vars_.end())
        it->second = std::move(v);
      else if (vars_.size() < kMaxShellVars)
        vars_.emplace(out_->text.Store(name), std::move(v));
      logical.clear();
      continue;
    }
    heredoc = HeredocDelimiter(text);
    const size_t first = out_->commands.size();
    tok_.Run(text, line_of(start_line), &out_->commands);  // keeps at most kMaxCommands
    if (!heredoc.empty()) StartHeredoc(text, first);
    logical.clear();
    Follow(first, depth, line_of(start_line));
  }
  if (!heredoc.empty()) EndHeredoc();  // heredoc running to the end of the text
  if (!logical.empty()) {              // continuation at EOF
    std::vector<Command> cmds;
    tok_.Run(logical, line_of(start_line), &cmds);
    for (Command& c : cmds) out_->commands.push_back(std::move(c));
  }
}

}  // namespace

ScanOutput ScanScript(std::string_view script, const ScriptContext* ctx) {
  ScanOutput out;
  if (script.size() > kMaxScriptBytes) {
    out.warnings.push_back("script: only the first " + std::to_string(kMaxScriptBytes) + " of " +
                           std::to_string(script.size()) + " bytes were read");
    script = script.substr(0, kMaxScriptBytes);
  }
  const size_t binary = CountBinaryBytes(script);
  if (binary > 0)
    out.warnings.push_back("script: " + std::to_string(binary) + " binary/control bytes ignored");
  Scanner scanner(&out, ctx);
  scanner.Scan(script, 0, 0);
  scanner.ExportedInto(&out.exported);
  return out;
}

}  // namespace fmte::internal
