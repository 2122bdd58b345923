// A hand-built A100-SXM4-80GB for unit tests that must not depend on the shipped GPU catalog.
// NVIDIA A100 datasheet: 312 TFLOPS dense BF16/FP16, 2,039 GB/s HBM2e, NVLink 600 GB/s total
// (300 GB/s per direction).
#ifndef FMTE_TESTS_TEST_GPUS_H_
#define FMTE_TESTS_TEST_GPUS_H_

#include "fmte/gpu.h"

namespace fmte::testing {

inline GpuSpec A100Sxm80() {
  GpuSpec g;
  g.name = "A100-SXM4-80GB";
  g.peak_bf16_tflops = 312;
  g.peak_fp16_tflops = 312;
  g.hbm_gbps = 2039;
  g.interconnect_gbps = 300;
  return g;
}

}  // namespace fmte::testing

#endif  // FMTE_TESTS_TEST_GPUS_H_
