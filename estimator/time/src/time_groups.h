// Groups of jobs (GPU generation x Megatron or the PyTorch frameworks x dense or mixture of
// experts) and what measured step times
// of each say about the time model (scripts/eval-time.py --calibrate).
#ifndef FMTE_TIME_GROUPS_H_
#define FMTE_TIME_GROUPS_H_

#include <string>
#include <string_view>

#include "fmte/job.h"

namespace fmte::time_groups {

struct MeasuredGroup {
  // Measured / predicted step time over the group's runs, against the model without `residual`:
  // the median and the split-conformal 95% quantile (the widest group's for a group without runs).
  double median = 1, q95 = 1;
  // The factor the prediction takes: the median where two sources of the group agree on it (each
  // one's median within 10% of the other's), else 1.
  double residual = 1;
};

// The generation of a GPU (catalog name, alias or efficiency family such as "H100"): "ampere",
// "hopper", "blackwell", "cdna3" or "other" (eval-time.py generation()).
std::string_view Generation(std::string_view gpu);

// The group of a GPU (catalog name or alias), framework, and model kind: `moe` for a mixture of
// experts, whose measured runs are a group of their own (its routing, dispatch and small expert
// products are not the dense models' error).
const MeasuredGroup& MeasuredGroupOf(std::string_view gpu, Framework framework, bool moe = false);

// What a user is told of the group whose measured error bounds the job's time ("hopper/megatron:
// 17 runs from 2 sources, measured/predicted median 1.07, 95% 1.33"; a one-source group says its
// 95% factor is widened for a new source; a job outside the groups says it takes the widest).
std::string DescribeGroup(std::string_view gpu, Framework framework, bool moe = false);

}  // namespace fmte::time_groups

#endif  // FMTE_TIME_GROUPS_H_
