// FMTE_DECISION, the decision sbatch's SPANK plugin forwards (slurm_plugin/client_decision.h),
// as job_submit decodes it: a decision that decodes encodes and decodes again to the same text,
// holds no control character outside the user's message, and a record only if it is one.
#include <string>

#include "client_decision.h"
#include "fmte/record.h"
#include "fuzz_common.h"

namespace {

bool Printable(const std::string& s) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  auto d = slurm::DecodeClientDecision(fuzz::AsText(data, size));
  if (!d.ok()) return 0;
  const slurm::CachedDecision& c = d->decision;
  fuzz::Require(Printable(c.model) && Printable(c.record) && Printable(c.outcome.gpu) &&
                    Printable(c.outcome.new_gpu_tres) && Printable(d->files),
                "a control character outside the user's message");
  fuzz::Require(c.record.empty() ||
                    (c.record.rfind(kRecordPrefix, 0) == 0 && c.record.size() <= kMaxRecordBytes),
                "a record that is not an fmte record");
  const std::string text = slurm::EncodeClientDecision(*d);
  auto again = slurm::DecodeClientDecision(text);
  fuzz::Require(again.ok(), "an encoded decision does not decode");
  fuzz::Require(slurm::EncodeClientDecision(*again) == text, "encode/decode is not a round trip");
  return 0;
}
