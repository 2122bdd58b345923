// The TE2 token-count contract (fmte-advise tokens --contract, estimate --dataset).
#include "fmte/tokens.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)fmte::ParseContract(fmte::fuzz::AsText(data, size));
  return 0;
}
