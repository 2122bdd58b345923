#include "fmte/json_fields.h"

#include <cmath>
#include <string>

namespace fmte {

Status ReadJsonNumber(const nlohmann::json& j, std::string_view key, Presence presence, Sign sign,
                      std::string_view origin, double* out) {
  const auto it = j.is_object() ? j.find(key) : j.end();
  if (it == j.end() && presence == Presence::kOptional) return Status::Ok();
  const bool ok = it != j.end() && it->is_number() && std::isfinite(it->get<double>()) &&
                  (sign == Sign::kNonNegative ? it->get<double>() >= 0 : it->get<double>() > 0);
  if (!ok) {
    return Status::ParseError(std::string(origin) + ": \"" + std::string(key) + "\": expected a " +
                              (sign == Sign::kPositive ? "positive" : "non-negative") + " number");
  }
  *out = it->get<double>();
  return Status::Ok();
}

}  // namespace fmte
