// Reading fields of JSON objects (nlohmann::json) with one error style: "<origin>: \"key\":
// expected ..." naming the file (and entry) the object came from. Thread-safety: pure functions.
#ifndef FMTE_JSON_FIELDS_H_
#define FMTE_JSON_FIELDS_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "fmte/status.h"

namespace fmte {

enum class Presence { kOptional, kRequired };
enum class Sign { kPositive, kNonNegative };

// The number `key` of object `j` into *out. An absent key is an error when kRequired and leaves
// *out unchanged when kOptional. The value must be a finite number, > 0 (kPositive) or >= 0
// (kNonNegative). Errors (kParseError): "<origin>: \"<key>\": expected a positive number" (or
// "a non-negative number").
Status ReadJsonNumber(const nlohmann::json& j, std::string_view key, Presence presence, Sign sign,
                      std::string_view origin, double* out);

}  // namespace fmte

#endif  // FMTE_JSON_FIELDS_H_
