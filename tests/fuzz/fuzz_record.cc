// AdminComment as sacct exports it, holding (or not) an fmte: record among other text; a record
// that decodes encodes and decodes again to the same record.
#include <cstdio>
#include <string>

#include "fmte/record.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  Result<AccountingRecord> record = DecodeRecord(fuzz::AsText(data, size));
  if (!record.ok()) return 0;
  const std::string encoded = EncodeRecord(*record);
  fuzz::Require(encoded.size() <= kMaxRecordBytes, "the record is at most kMaxRecordBytes");
  Result<AccountingRecord> again = DecodeRecord(encoded);
  fuzz::Require(again.ok(), "an encoded record decodes");
  const std::string encoded_again = EncodeRecord(*again);
  if (encoded_again != encoded) {
    std::fprintf(stderr, "fuzz: record round trip differs:\n  %s\n  %s\n", encoded.c_str(),
                 encoded_again.c_str());
  }
  fuzz::Require(encoded_again == encoded, "decode(encode(r)) encodes to the same text");
  return 0;
}
