// A config file a launch line names (DeepSpeed JSON, accelerate/axolotl/LLaMA-Factory YAML,
// torchtitan TOML, ...), parsed as toml into the tree the launcher readers walk.
#include <nlohmann/json.hpp>

#include "fmte/script_files.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)fmte::ParseConfigText("config.toml", fmte::fuzz::AsText(data, size), "toml");
  return 0;
}
