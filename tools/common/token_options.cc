#include "token_options.h"

#include <string>

namespace fmte::tools {
namespace {

// The shell passes "\n" as two characters; templates mean a newline.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char c = s[i + 1];
      if (c == 'n' || c == 't' || c == '\\') {
        out += c == 'n' ? '\n' : c == 't' ? '\t' : '\\';
        ++i;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

void AddTokenCountingOptions(po::options_description* desc) {
  desc->add_options()("template", po::value<std::string>()->value_name("T"),
                      "text of a sample with {{field}} placeholders (default: all string fields "
                      "joined by newlines)")(
      "counter", po::value<std::string>()->default_value("chars"),
      "token count rule: chars (chars/3.6), words (whitespace words), bytes (UTF-8 bytes)");
}

Result<TokenCounting> TokenCountingFromFlags(const po::variables_map& vm) {
  TokenCounting out;
  auto counter = ParseTokenCounter(vm["counter"].as<std::string>(), "--counter");
  if (!counter.ok()) return counter.status();
  out.counter = *counter;
  if (vm.count("template")) {
    auto t = TextTemplate::Parse(Unescape(vm["template"].as<std::string>()));
    if (!t.ok()) return t.status();  // names --template
    out.text_template = *t;
  }
  return out;
}

}  // namespace fmte::tools
