// The step timeline of a time estimate, drawn for people (fmte-advise estimate --timeline).
// Thread-safety: pure function.
#ifndef FMTE_TIMELINE_H_
#define FMTE_TIMELINE_H_

#include <cstdint>
#include <string>

#include "fmte/time.h"

namespace fmte {

// The schedule of one step as an SVG document: one row per pipeline stage, 1F1B order of the
// micro-batches (forward, backward, their communication, idle bubble), then the data-parallel
// collectives and the optimizer step; like the IIIS LLM training calculator's timeline. With
// many micro-batches only the first `max_micro_batches` are drawn and the rest is summarised.
std::string StepTimelineSvg(const TimeEstimate& estimate, const std::string& title,
                            int64_t max_micro_batches = 64);

}  // namespace fmte

#endif  // FMTE_TIMELINE_H_
