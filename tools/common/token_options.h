// How samples become token counts, for the commands that read a dataset or its TE2 contract
// (fmte-advise tokens, fmte-advise estimate --contract): --template and --counter.
// Thread-safety: pure functions.
#ifndef FMTE_TOOLS_COMMON_TOKEN_OPTIONS_H_
#define FMTE_TOOLS_COMMON_TOKEN_OPTIONS_H_

#include "fmte/status.h"
#include "fmte/tokens.h"
#include "job_options.h"

namespace fmte::tools {

struct TokenCounting {
  TextTemplate text_template = TextTemplate::AllStringFields();
  TokenCounter counter = TokenCounter::kChars;
};

// Adds --template T and --counter chars|words|bytes.
void AddTokenCountingOptions(po::options_description* desc);
// Reads them; errors name the flag. "\n" and "\t" in --template are a newline and a tab.
Result<TokenCounting> TokenCountingFromFlags(const po::variables_map& vm);

}  // namespace fmte::tools

#endif  // FMTE_TOOLS_COMMON_TOKEN_OPTIONS_H_
