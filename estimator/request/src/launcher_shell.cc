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

ScanOutput ScanScript(std::string_view script) {
  ScanOutput out;
  if (script.size() > kMaxScriptBytes) {
    out.warnings.push_back("script: only the first " + std::to_string(kMaxScriptBytes) + " of " +
                           std::to_string(script.size()) + " bytes were read");
    script = script.substr(0, kMaxScriptBytes);
  }
  const size_t binary = CountBinaryBytes(script);
  if (binary > 0)
    out.warnings.push_back("script: " + std::to_string(binary) + " binary/control bytes ignored");

  ShellVars vars;
  ShellTokenizer tok(&vars, &out.text, &out.warnings);
  std::string logical;
  std::string heredoc;
  int line_no = 0, start_line = 0;
  size_t joined = 0;
  char open_quote = 0;
  bool open_array = false;
  size_t pos = 0;
  while (pos < script.size()) {
    size_t nl = script.find('\n', pos);
    if (nl == std::string_view::npos) nl = script.size();
    std::string_view phys = script.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!phys.empty() && phys.back() == '\r') phys.remove_suffix(1);
    if (!heredoc.empty()) {
      if (Trim(phys) == heredoc) heredoc.clear();
      continue;
    }
    if (logical.empty()) {
      start_line = line_no;
      joined = 0;
      const std::string_view t = Trim(phys);
      if (t.starts_with("#FMTE") && (t.size() == 5 || IsShellSpace(t[5]))) {
        out.fmte_lines.emplace_back(line_no, std::string(t.substr(5, kMaxLineBytes)));
        continue;
      }
      if (t.empty() || t.front() == '#') continue;
      open_array = StartsOpenArray(t);
    }
    if (logical.size() + phys.size() > kMaxLineBytes) {
      out.warnings.push_back("line " + std::to_string(start_line) + ": logical line longer than " +
                             std::to_string(kMaxLineBytes) + " bytes ignored");
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
      logical += (open_quote != 0 || open_array) ? '\n' : ' ';
      continue;
    }
    // The logical line: the joined lines, or this physical line itself (most lines: no copy).
    std::string_view text = phys;
    if (!logical.empty()) {
      logical += phys;
      text = logical;
    }
    if (open_quote != 0)
      out.warnings.push_back("line " + std::to_string(start_line) + ": unterminated quote");
    open_quote = 0;
    open_array = false;

    std::string_view name;
    std::string_view inner;
    if (ArrayAssignment(text, &name, &inner)) {
      std::vector<Command> cmds;
      tok.Run(inner, start_line, &cmds, /*assignments=*/false);
      ShellVar v;
      size_t items = 0;
      for (const Command& c : cmds) items += c.words.size();
      v.items.reserve(items);
      for (const Command& c : cmds) v.items.insert(v.items.end(), c.words.begin(), c.words.end());
      if (const auto it = vars.find(name); it != vars.end())
        it->second = std::move(v);
      else if (vars.size() < kMaxShellVars)
        vars.emplace(out.text.Store(name), std::move(v));
      logical.clear();
      continue;
    }
    heredoc = HeredocDelimiter(text);
    tok.Run(text, start_line, &out.commands);  // keeps at most kMaxCommands
    logical.clear();
  }
  if (!logical.empty()) {  // continuation at EOF
    std::vector<Command> cmds;
    tok.Run(logical, start_line, &cmds);
    for (Command& c : cmds) out.commands.push_back(std::move(c));
  }
  return out;
}

}  // namespace fmte::internal
