// AdminComment as sacct exports it, holding (or not) an fmte: record among other text; a record
// that decodes encodes and decodes again to the same record.
#include <string>

#include "fmte/record.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  Result<AccountingRecord> record = DecodeRecord(fuzz::AsText(data, size));
  if (!record.ok()) return 0;
  fuzz::RequireEncodedRecordRoundTrips(EncodeRecord(*record));
  return 0;
}
