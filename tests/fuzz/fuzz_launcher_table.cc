// etc/launchers.json: how each launcher's config files are found and read.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)fmte::ParseLauncherTable(fmte::fuzz::AsText(data, size), "launchers.json");
  return 0;
}
