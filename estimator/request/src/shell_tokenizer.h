// The shell tokenizer behind ScanScript (launcher_shell.cc): splits one logical line of a batch
// script into commands of words, expanding the variables and arrays assigned before it. Private to
// the request component. Thread-safety: one tokenizer per scan.
#ifndef FMTE_SRC_SHELL_TOKENIZER_H_
#define FMTE_SRC_SHELL_TOKENIZER_H_

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "request_internal.h"

namespace fmte::internal {

// Stands in a variable's value where an expansion could not be known (never in a kept command).
inline constexpr char kUnresolvedMark = '\x01';

// Commands kept per script (later ones are dropped).
inline constexpr size_t kMaxCommands = 20000;

// Characters of shell names (ASCII only, no locale): a letter or '_' starts one, digits follow.
constexpr bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline constexpr std::array<bool, 256> kIdent = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = IsIdentStart(static_cast<char>(c)) || (c >= '0' && c <= '9');
  return t;
}();
constexpr bool IsIdent(char c) { return kIdent[static_cast<unsigned char>(c)]; }

// White space of the shell, including NUL (what may follow "#FMTE").
constexpr bool IsShellSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f' || c == '\0';
}

// A shell variable: a scalar is one item; an array may mix known and unresolved words.
struct ShellVar {
  std::vector<Word> items;
  bool unresolved = false;  // a scalar holding $(...) or an unknown variable
  bool exported = false;  // set by `export NAME=...` (or declare -x): the launched programs see it
};
using ShellVars = std::map<std::string_view, ShellVar, std::less<>>;  // names: views into the arena

// Whether any part of the variable's value is unknown (flagged, or marked in its text).
inline bool HasUnresolved(const ShellVar& v) {
  if (v.unresolved) return true;
  for (const Word& w : v.items)
    if (w.unresolved || w.text.find(kUnresolvedMark) != std::string_view::npos) return true;
  return false;
}

// The quote still open after `s` when `open` was open before it (0: none, '\'' or '"'): for
// joining physical lines into one logical line. A '#' outside quotes ends the text (comment).
char OpenQuoteAfter(std::string_view s, char open);

class ShellTokenizer {
 public:
  // `vars`, `arena` and `warnings` must outlive the tokenizer; words are stored in `arena`.
  ShellTokenizer(ShellVars* vars, TextArena* arena, std::vector<std::string>* warnings);
  ~ShellTokenizer();
  ShellTokenizer(const ShellTokenizer&) = delete;
  ShellTokenizer& operator=(const ShellTokenizer&) = delete;

  // Splits one logical line (starting at script line `line`) into commands appended to `out`
  // (at most kMaxCommands in all). `assignments`: whether NAME=value commands set variables (not
  // inside an array's parentheses). Warnings name the line.
  void Run(std::string_view s, int line, std::vector<Command>* out, bool assignments = true);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmte::internal

#endif  // FMTE_SRC_SHELL_TOKENIZER_H_
