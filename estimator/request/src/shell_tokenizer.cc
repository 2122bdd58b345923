// The shell tokenizer of ScanScript (shell_tokenizer.h): one logical line into commands and words,
// with quotes, escapes, $VAR/${VAR}/${VAR:-default}/${ARR[@]} expansion, separators and
// redirections. Never executes anything. Bounded: kMaxTokensPerCommand words per command,
// kMaxShellVars variables, kMaxExpandedBytes of expansion over a script, kMaxCommands commands.
#include "shell_tokenizer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <optional>

namespace fmte::internal {
namespace {

using Var = ShellVar;

// What ends a word outside quotes: IsSpace, or any other control byte (all of \t\r\n\v\f\0 are).
bool IsBlank(char c) { return c == ' ' || static_cast<unsigned char>(c) < 0x20; }

// Characters the tokenizer treats specially outside quotes (control bytes, blanks, quotes, escapes,
// expansions, separators, redirections), and inside double quotes. Every other byte is copied into
// the current word as is, so a run of them is appended at once ('#' only starts a comment at the
// start of a word, so it is ordinary inside a run).
constexpr std::array<bool, 256> MakeSpecial(std::string_view chars, bool controls) {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = controls;
  for (char c : chars) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kUnquotedSpecial = MakeSpecial(" '\"\\$`;&|()<>", true);
constexpr std::array<bool, 256> kQuotedSpecial = MakeSpecial("\"\\$`", false);

// End of the run of ordinary characters starting at `i`.
size_t RunEnd(std::string_view s, size_t i, const std::array<bool, 256>& special) {
  while (i < s.size() && !special[static_cast<unsigned char>(s[i])]) ++i;
  return i;
}

constexpr std::array<bool, 256> kQuoteStateSpecial =
    MakeSpecial("'\"\\#", false);  // outside quotes
constexpr std::array<bool, 256> kInDoubleSpecial = MakeSpecial("\"\\", false);

bool IsQuoteStateByte(unsigned char c) { return c == '\'' || c == '"' || c == '\\' || c == '#'; }

// Whether one of the 16 bytes at `p` can change the quote state outside quotes. A fixed count of
// bytes, which the compiler turns into vector compares at -O2.
bool AnyQuoteStateByte16(const unsigned char* p) {
  unsigned char n = 0;  // at most 16: byte lanes
  for (size_t k = 0; k < 16; ++k) n += IsQuoteStateByte(p[k]);
  return n != 0;
}

// The first byte at or after `i` that can change the quote state outside quotes (or s.size()).
// Most of a script's text has none: skipped 16 bytes at a time, then byte by byte.
size_t NextQuoteStateByte(std::string_view s, size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  while (i + 16 <= s.size() && !AnyQuoteStateByte16(p + i)) i += 16;
  return RunEnd(s, i, kQuoteStateSpecial);
}

bool IsAssignmentWord(std::string_view w, std::string_view* name, std::string_view* value) {
  if (w.empty() || !IsIdentStart(w[0])) return false;
  size_t k = 0;
  while (k < w.size() && IsIdent(w[k])) ++k;
  if (k >= w.size() || w[k] != '=') return false;
  *name = w.substr(0, k);
  *value = w.substr(k + 1);
  return true;
}

// $((expr)) over integers: + - * / % and parentheses, decimal literals, and $VAR, ${VAR} or VAR
// naming a known scalar variable that holds an integer. Nothing for anything else (unknown names,
// division by zero, overflow, more than 32 nested parentheses).
class Arithmetic {
 public:
  Arithmetic(std::string_view s, const ShellVars& vars) : s_(s), vars_(vars) {}
  std::optional<int64_t> Run() {
    std::optional<int64_t> v = Sum(0);
    Skip();
    if (!v.has_value() || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void Skip() {
    while (pos_ < s_.size() && IsShellSpace(s_[pos_])) ++pos_;
  }
  bool Next(char c) {
    Skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<int64_t> Sum(int depth) {
    std::optional<int64_t> a = Product(depth);
    while (a.has_value()) {
      const bool plus = Next('+');
      if (!plus && !Next('-')) break;
      const std::optional<int64_t> b = Product(depth);
      int64_t r = 0;
      if (!b.has_value() ||
          (plus ? __builtin_add_overflow(*a, *b, &r) : __builtin_sub_overflow(*a, *b, &r)))
        return std::nullopt;
      a = r;
    }
    return a;
  }
  std::optional<int64_t> Product(int depth) {
    std::optional<int64_t> a = Unary(depth);
    while (a.has_value()) {
      char op = 0;
      for (char c : {'*', '/', '%'})
        if (op == 0 && Next(c)) op = c;
      if (op == 0) break;
      const std::optional<int64_t> b = Unary(depth);
      if (!b.has_value()) return std::nullopt;
      int64_t r = 0;
      if (op == '*') {
        if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
      } else {
        if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
        r = op == '/' ? *a / *b : *a % *b;
      }
      a = r;
    }
    return a;
  }
  std::optional<int64_t> Unary(int depth) {
    if (Next('-')) {
      const std::optional<int64_t> v = Unary(depth + 1);
      if (!v.has_value() || *v == INT64_MIN || depth > 32) return std::nullopt;
      return -*v;
    }
    if (Next('+')) return depth > 32 ? std::nullopt : Unary(depth + 1);
    return Primary(depth);
  }
  std::optional<int64_t> Primary(int depth) {
    if (Next('(')) {
      if (depth > 32) return std::nullopt;
      const std::optional<int64_t> v = Sum(depth + 1);
      if (!Next(')')) return std::nullopt;
      return v;
    }
    Skip();
    if (pos_ >= s_.size()) return std::nullopt;
    if (std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      size_t e = pos_;
      while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) ++e;
      const std::optional<int64_t> v = Integer(s_.substr(pos_, e - pos_));
      pos_ = e;
      return v;
    }
    bool braces = false;
    if (s_[pos_] == '$') {
      ++pos_;
      braces = pos_ < s_.size() && s_[pos_] == '{';
      if (braces) ++pos_;
    }
    const size_t start = pos_;
    while (pos_ < s_.size() && IsIdent(s_[pos_])) ++pos_;
    const std::string_view name = s_.substr(start, pos_ - start);
    if (braces && !Next('}')) return std::nullopt;
    const auto it = vars_.find(name);
    if (name.empty() || it == vars_.end() || HasUnresolved(it->second) ||
        it->second.items.size() != 1)
      return std::nullopt;
    return Integer(Trim(it->second.items[0].text));
  }
  static std::optional<int64_t> Integer(std::string_view t) {
    int64_t v = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size() || t.empty()) return std::nullopt;
    return v;
  }

  std::string_view s_;
  const ShellVars& vars_;
  size_t pos_ = 0;
};

std::optional<int64_t> EvalArithmetic(std::string_view expr, const ShellVars& vars) {
  return Arithmetic(expr, vars).Run();
}

class TokenizerImpl {
 public:
  TokenizerImpl(ShellVars* vars, TextArena* arena, std::vector<std::string>* warnings)
      : vars_(vars), arena_(arena), warnings_(warnings) {}

  // Splits one logical line into commands.
  // `assignments`: whether NAME=value commands set variables (not inside an array's parentheses).
  void Run(std::string_view s, int line, std::vector<Command>* out, bool assignments = true) {
    line_ = line;
    assignments_ = assignments;
    out_ = out;
    StartCommand();
    size_t i = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (IsBlank(c)) {
        EndWord();
        ++i;
        continue;
      }
      if (c == '#' && !started_) {  // comment, up to the end of this physical line
        const size_t e = s.find('\n', i);
        if (e == std::string_view::npos) break;
        i = e;
        continue;
      }
      if (c == '\'') {
        const size_t end = s.find('\'', i + 1);
        started_ = true;
        if (end == std::string_view::npos) {
          Warn("unterminated single quote");
          word_ += s.substr(i + 1);
          break;
        }
        word_ += s.substr(i + 1, end - i - 1);
        i = end + 1;
        continue;
      }
      if (c == '"') {
        i = DoubleQuoted(s, i + 1);
        continue;
      }
      if (c == '\\') {
        if (i + 1 < s.size()) {
          word_ += s[i + 1];
          started_ = true;
        }
        i += 2;
        continue;
      }
      if (c == '$') {
        i = Dollar(s, i, /*quoted=*/false);
        continue;
      }
      if (c == '`') {
        const size_t end = s.find('`', i + 1);
        Unresolved();
        i = end == std::string_view::npos ? s.size() : end + 1;
        continue;
      }
      if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
        EndCommand();
        ++i;
        continue;
      }
      if (c == '>' || c == '<') {
        // Redirection: drop an fd number just before it and the target word after it.
        if (!word_.empty() && word_.find_first_not_of("0123456789") == std::string::npos) Discard();
        EndWord();
        while (i < s.size() && (s[i] == '>' || s[i] == '<' || s[i] == '&')) ++i;
        skip_next_ = true;
        continue;
      }
      // An ordinary character, and the ordinary ones after it.
      const size_t end = RunEnd(s, i + 1, kUnquotedSpecial);
      word_.append(s.data() + i, end - i);
      started_ = true;
      i = end;
    }
    EndCommand();
  }

 private:
  void Warn(const std::string& w) {
    warnings_->push_back("line " + std::to_string(line_) + ": " + w);
  }
  // Clears rather than replaces the command, so an assignment line keeps the vectors' capacity.
  void StartCommand() {
    cmd_.words.clear();
    cmd_.line = line_;
    Discard();
  }
  // An expansion fmte cannot know ($(cmd), an unset variable, ${X/a/b}): the word is unresolved,
  // and the mark stands where the expansion was, so that a variable assigned from it
  // (CMD="train.py --tp $TP") keeps its known words when it is split again later.
  void Unresolved() {
    started_ = true;
    unresolved_ = true;
    word_ += kUnresolvedMark;
  }
  void Discard() {
    word_.clear();
    started_ = false;
    unresolved_ = false;
  }
  void EndWord() {
    if (!started_) return;
    // word_ keeps its buffer; a split variable's piece with a mark is unresolved.
    if (KeepNextWord())
      AddWord(Word{arena_->Store(word_),
                   unresolved_ || word_.find(kUnresolvedMark) != std::string::npos});
    Discard();
  }
  // Whether the word being finished joins the command: not when it is a redirection's target, nor
  // past kMaxTokensPerCommand words.
  bool KeepNextWord() {
    if (skip_next_) {
      skip_next_ = false;
      return false;
    }
    if (cmd_.words.size() < kMaxTokensPerCommand) return true;
    if (!capped_) {
      capped_ = true;
      Warn("more than " + std::to_string(kMaxTokensPerCommand) +
           " words in one command; rest ignored");
    }
    return false;
  }
  // REQUIRES: w.text is in the arena.
  void AddWord(Word w) {
    if (cmd_.words.empty()) cmd_.words.reserve(16);  // up to 16 words: one allocation
    cmd_.words.push_back(w);
  }
  // A finished command: assignments take effect at once (so `X=1 && cmd $X` sees them); other
  // commands are kept.
  void EndCommand() {
    EndWord();
    skip_next_ = false;
    if (!cmd_.words.empty() && !(assignments_ && StoreAssignments()) &&
        out_->size() < kMaxCommands) {
      for (Word& w : cmd_.words) {  // the marks are for variables only
        if (w.text.find(kUnresolvedMark) == std::string_view::npos) continue;
        std::string clean(w.text);
        std::erase(clean, kUnresolvedMark);
        w.text = arena_->Store(clean);
        w.unresolved = true;
      }
      out_->push_back(std::move(cmd_));
    }
    StartCommand();
  }

  // `[export|local|readonly|declare [-x]] NAME=value...`: remembers the variables.
  bool StoreAssignments() {
    const std::vector<Word>& w = cmd_.words;
    size_t first = 0;
    for (; first < w.size(); ++first) {  // runs for every command: compares without strlen
      const std::string_view word = w[first].text;
      if (!(word == "export" || word == "local" || word == "readonly" || word == "declare" ||
            (first > 0 && word.starts_with("-"))))
        break;
    }
    if (first >= w.size()) return false;
    bool exported = first > 0 && w[0].text == "export";
    for (size_t k = 1; k < first && w[0].text == "declare"; ++k)
      exported =
          exported || (w[k].text.starts_with("-") && w[k].text.find('x') != std::string_view::npos);
    std::string_view n, v;
    for (size_t k = first; k < w.size(); ++k)
      if (!IsAssignmentWord(w[k].text, &n, &v)) return false;
    for (size_t k = first; k < w.size(); ++k) {
      IsAssignmentWord(w[k].text, &n, &v);
      const auto it = vars_->find(n);
      if (it == vars_->end() && vars_->size() >= kMaxShellVars) {
        if (!vars_capped_)
          Warn("more than " + std::to_string(kMaxShellVars) + " variables; later ones ignored");
        vars_capped_ = true;
        continue;
      }
      Var value;
      value.items.push_back(Word{v, false});
      value.exported = exported || (it != vars_->end() && it->second.exported);
      // Unresolved parts are marked in the text; only an array item's flag has no mark.
      value.unresolved = w[k].unresolved && v.find(kUnresolvedMark) == std::string_view::npos;
      if (it == vars_->end())
        vars_->emplace(n, std::move(value));  // n: a view into the arena
      else
        it->second = std::move(value);
    }
    return true;
  }

  bool InAssignment() const {
    if (word_.empty() || !IsIdentStart(word_[0])) return false;
    const size_t eq = word_.find('=');
    if (eq == std::string::npos) return false;
    for (size_t k = 0; k < eq; ++k)
      if (!IsIdent(word_[k])) return false;
    return true;
  }

  size_t DoubleQuoted(std::string_view s, size_t i) {
    started_ = true;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') return i + 1;
      if (c == '\\' && i + 1 < s.size() &&
          (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$' || s[i + 1] == '`')) {
        word_ += s[i + 1];
        i += 2;
        continue;
      }
      if (c == '$') {
        i = Dollar(s, i, /*quoted=*/true);
        continue;
      }
      if (c == '`') {
        const size_t end = s.find('`', i + 1);
        Unresolved();
        i = end == std::string_view::npos ? s.size() : end + 1;
        continue;
      }
      const size_t end = RunEnd(s, i + 1, kQuotedSpecial);
      word_.append(s.data() + i, end - i);
      i = end;
    }
    Warn("unterminated double quote");
    return i;
  }

  // Variables can multiply the input (a 60 kB value expanded ten thousand times, X=$X$X doubling),
  // so all expansions of one script together produce at most kMaxExpandedBytes; past that an
  // expansion is left unresolved (one warning). Each expansion costs its bytes plus one.
  bool Charge(size_t bytes) {
    if (bytes <= kMaxExpandedBytes - expanded_bytes_) {
      expanded_bytes_ += bytes;
      return true;
    }
    if (!expand_capped_) {
      expand_capped_ = true;
      Warn("variable expansions beyond " + std::to_string(kMaxExpandedBytes) +
           " bytes in total are not expanded");
    }
    Unresolved();
    return false;
  }

  // Appends the expansion of a scalar `value`: in split mode it splits on whitespace into words
  // (the first piece joins the current word); otherwise it is appended whole. No allocation beyond
  // the words themselves (this runs for every $VAR of a launch line).
  void AppendScalar(std::string_view value, bool split) {
    if (!Charge(value.size() + 1)) return;
    started_ = true;
    if (!split) {
      word_ += value;
      return;
    }
    bool any = false;
    std::string_view r = value;
    while (true) {
      while (!r.empty() && IsShellSpace(r.front())) r.remove_prefix(1);
      if (r.empty()) break;
      size_t e = 0;
      while (e < r.size() && !IsShellSpace(r[e])) ++e;
      if (any) {
        EndWord();
        started_ = true;
      }
      word_ += r.substr(0, e);
      any = true;
      r.remove_prefix(e);
    }
    if (!any && word_.empty()) started_ = false;  // $EMPTY alone is no word
  }

  // Appends ${ARR[@]}: each element becomes a word (the first joins the current word).
  void AppendArray(const Var& var, bool split) {
    if (expand_capped_ && !Charge(1)) return;  // O(1) once the budget is spent
    size_t bytes = var.items.size() + 1;
    for (const Word& item : var.items) bytes += item.text.size();
    if (!Charge(bytes)) return;
    started_ = true;
    for (size_t n = 0; n < var.items.size(); ++n) {
      const Word& item = var.items[n];
      if (n > 0) EndWord();
      if (n > 0 &&
          n + 1 < var.items.size()) {  // a middle item is a word of its own, already stored
        if (KeepNextWord()) AddWord(item);
        continue;
      }
      started_ = true;  // the first item joins the text before it, the last the text after it
      word_ += item.text;
      unresolved_ = unresolved_ || item.unresolved;
    }
    if (var.items.empty() && split && word_.empty())
      started_ = false;  // ${EMPTY[@]} alone is no word
  }

  size_t Dollar(std::string_view s, size_t i, bool quoted) {
    const bool split = !quoted && !InAssignment();
    if (i + 1 >= s.size()) {
      word_ += '$';
      started_ = true;
      return i + 1;
    }
    const char n = s[i + 1];
    if (n == '(') {  // $(cmd) or $((arith)): skip to the matching parenthesis
      int depth = 0;
      size_t k = i + 1;
      for (; k < s.size(); ++k) {
        if (s[k] == '(')
          ++depth;
        else if (s[k] == ')' && --depth == 0)
          break;
      }
      started_ = true;
      const size_t next = k < s.size() ? k + 1 : s.size();
      // $((expr)): integer arithmetic over known variables.
      if (i + 2 < s.size() && s[i + 2] == '(' && k < s.size() && s[k - 1] == ')') {
        if (auto v = EvalArithmetic(s.substr(i + 3, k - i - 4), *vars_); v.has_value()) {
          char buf[24];
          const auto r = std::to_chars(buf, buf + sizeof(buf), *v);
          AppendScalar(std::string_view(buf, static_cast<size_t>(r.ptr - buf)), split);
          return next;
        }
      }
      Unresolved();
      return next;
    }
    std::string_view name;  // views into `s`, valid for this call
    std::string_view op;
    size_t next;
    if (n == '{') {
      // The matching brace: ${A:-${B:-x}} nests.
      size_t end = std::string_view::npos;
      for (size_t k = i + 2, depth = 1; k < s.size(); ++k) {
        if (s[k] == '{' && s[k - 1] == '$') ++depth;
        if (s[k] == '}' && --depth == 0) {
          end = k;
          break;
        }
      }
      if (end == std::string_view::npos) {
        Warn("unterminated ${");
        Unresolved();
        return s.size();
      }
      const std::string_view inner = s.substr(i + 2, end - i - 2);
      size_t k = 0;
      if (!inner.empty() && (inner[0] == '@' || inner[0] == '*'))
        k = 1;  // ${@}
      else
        while (k < inner.size() && IsIdent(inner[k])) ++k;
      name = inner.substr(0, k);
      op = inner.substr(k);
      next = end + 1;
    } else if (IsIdentStart(n)) {
      size_t k = i + 1;
      while (k < s.size() && IsIdent(s[k])) ++k;
      name = s.substr(i + 1, k - i - 1);
      next = k;
    } else if (std::isdigit(static_cast<unsigned char>(n)) || n == '@' || n == '*' || n == '#') {
      // $1 .. $9, $@, $*, $#: the script's arguments when the reading was given them.
      name = s.substr(i + 1, 1);
      next = i + 2;
    } else if (std::string_view("?$!-").find(n) != std::string_view::npos) {
      Unresolved();
      return i + 2;
    } else {
      word_ += '$';
      started_ = true;
      return i + 1;
    }
    if (name.empty() || (!op.empty() && op[0] == '#')) {
      Unresolved();
      return next;
    }
    const auto it = vars_->find(name);
    const Var* var = it == vars_->end() ? nullptr : &it->second;
    const bool array_all = op == "[@]" || op == "[*]" || name == "@" || name == "*";
    if (op.empty() || array_all || op == "[0]") {
      if (var == nullptr || var->unresolved) {
        Unresolved();
        return next;
      }
      if (array_all)
        AppendArray(*var, split);
      else
        AppendScalar(var->items.empty() ? std::string_view() : var->items[0].text, split);
      return next;
    }
    if (op.starts_with(":-") || op.starts_with("-") || op.starts_with(":=") ||
        op.starts_with("=")) {
      const bool set = var != nullptr && !var->unresolved && !var->items.empty() &&
                       (op[0] == '-' || op[0] == '=' || !var->items[0].text.empty());
      if (set) {
        AppendScalar(var->items[0].text, split);
        return next;
      }
      const std::string_view fallback = op.substr(op[0] == ':' ? 2 : 1);
      // ${A:-$B}, ${A:-"x y"}: one level of expansion, quotes removed.
      std::string_view value = fallback;
      std::string inner;
      if (fallback.find_first_of("$\"'") != std::string_view::npos) {
        std::string saved;
        std::swap(saved, word_);
        const bool was_started = started_, was_unresolved = unresolved_;
        started_ = false;
        unresolved_ = false;
        for (size_t k = 0; k < fallback.size();) {
          if (fallback[k] == '$') {
            k = Dollar(fallback, k, /*quoted=*/true);
            continue;
          }
          if (fallback[k] != '"' && fallback[k] != '\'') word_ += fallback[k];
          ++k;
        }
        std::swap(inner, word_);
        std::swap(saved, word_);
        const bool inner_unresolved = unresolved_;
        started_ = was_started;
        unresolved_ = was_unresolved;
        if (inner_unresolved) {
          Unresolved();
          return next;
        }
        value = inner;
      }
      // ${VAR:=default} / ${VAR=default} assigns the default too (`: ${VAR:="x"}` idiom).
      if ((op[0] == '=' || op.starts_with(":=")) &&
          (var != nullptr || vars_->size() < kMaxShellVars)) {
        ShellVar assigned;
        assigned.items.push_back(Word{arena_->Store(value), false});
        if (var != nullptr)
          it->second = std::move(assigned);
        else
          vars_->emplace(arena_->Store(name), std::move(assigned));
      }
      AppendScalar(value, split);
      return next;
    }
    // ${ARR[i]}, ${ARR[$SLURM_ARRAY_TASK_ID]}: a subscript is arithmetic over known variables
    // (a job array's sweep: BETAS=(0.3 0.5); BETA=${BETAS[$SLURM_ARRAY_TASK_ID]}).
    if (op.size() > 2 && op.front() == '[' && op.back() == ']' && var != nullptr &&
        !var->unresolved) {
      std::optional<int64_t> at = EvalArithmetic(op.substr(1, op.size() - 2), *vars_);
      const auto size = static_cast<int64_t>(var->items.size());
      if (at.has_value() && *at < 0) *at += size;  // ${ARR[-1]}: the last item (bash 4.3)
      if (at.has_value() && *at >= 0 && *at < size &&
          !var->items[static_cast<size_t>(*at)].unresolved) {
        AppendScalar(var->items[static_cast<size_t>(*at)].text, split);
        return next;
      }
    }
    Unresolved();  // ${X/a/b}, ${X:0:3}, an index out of range, ...
    return next;
  }

  ShellVars* vars_;  // names are views into the arena
  TextArena* arena_;
  std::vector<std::string>* warnings_;
  std::vector<Command>* out_ = nullptr;
  Command cmd_;
  std::string word_;
  bool started_ = false;
  bool unresolved_ = false;
  bool skip_next_ = false;
  bool capped_ = false;
  bool vars_capped_ = false;
  bool expand_capped_ = false;
  size_t expanded_bytes_ = 0;  // <= kMaxExpandedBytes
  bool assignments_ = true;
  int line_ = 0;
};

}  // namespace

char OpenQuoteAfter(std::string_view s, char open) {
  for (size_t i = 0; i < s.size(); ++i) {
    // Skip to the next byte that can change the state (the same decisions, fewer branches per
    // byte).
    if (open == 0)
      i = NextQuoteStateByte(s, i);
    else if (open == '"')
      i = RunEnd(s, i, kInDoubleSpecial);
    else
      i = std::min(s.find('\'', i), s.size());
    if (i >= s.size()) break;
    const char c = s[i];
    if (open == '\'') {
      if (c == '\'') open = 0;
    } else if (open == '"') {
      if (c == '\\')
        ++i;
      else if (c == '"')
        open = 0;
    } else {
      if (c == '\\')
        ++i;
      else if (c == '\'' || c == '"')
        open = c;
      else if (c == '#' && (i == 0 || IsShellSpace(s[i - 1])))
        return 0;  // rest is a comment
    }
  }
  return open;
}

class ShellTokenizer::Impl : public TokenizerImpl {
 public:
  using TokenizerImpl::TokenizerImpl;
};

ShellTokenizer::ShellTokenizer(ShellVars* vars, TextArena* arena,
                               std::vector<std::string>* warnings)
    : impl_(std::make_unique<Impl>(vars, arena, warnings)) {}
ShellTokenizer::~ShellTokenizer() = default;

void ShellTokenizer::Run(std::string_view s, int line, std::vector<Command>* out,
                         bool assignments) {
  impl_->Run(s, line, out, assignments);
}

}  // namespace fmte::internal
