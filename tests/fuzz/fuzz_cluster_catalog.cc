// etc/clusters/<name>.json: a site's interconnect, efficiencies and checkpoint costs.
#include "fmte/cluster.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)fmte::ParseClusterJson(fmte::fuzz::AsText(data, size), "clusters/fuzz.json");
  return 0;
}
