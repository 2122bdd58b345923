// Value parsers for sacct output (docs/formulas.md §7). Hand-written over string_view with
// std::from_chars (no locale): the reader calls them several times per row.
#include "fmte/learn/sacct_fields.h"

#include <array>
#include <charconv>
#include <cmath>

#include "fmte/text.h"

namespace fmte::learn {
namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s.substr(0, 80)) + "'"; }

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseDouble(std::string_view s, double* out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(*out);
}

bool IsUnknownWord(std::string_view s) {
  return s.empty() || s == "Unknown" || s == "None" || s == "N/A";
}

// Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int64_t* out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

struct StateName {
  std::string_view name;
  JobState state;
};
constexpr std::array<StateName, 17> kStates = {{
    {"PENDING", JobState::kPending},
    {"RUNNING", JobState::kRunning},
    {"SUSPENDED", JobState::kSuspended},
    {"COMPLETED", JobState::kCompleted},
    {"COMPLETING", JobState::kCompleting},
    {"FAILED", JobState::kFailed},
    {"TIMEOUT", JobState::kTimeout},
    {"OUT_OF_MEMORY", JobState::kOutOfMemory},
    {"CANCELLED", JobState::kCancelled},
    {"NODE_FAIL", JobState::kNodeFail},
    {"PREEMPTED", JobState::kPreempted},
    {"BOOT_FAIL", JobState::kBootFail},
    {"DEADLINE", JobState::kDeadline},
    {"REQUEUED", JobState::kRequeued},
    {"REVOKED", JobState::kRevoked},
    {"RESIZING", JobState::kResizing},
    {"OTHER", JobState::kOther},
}};

}  // namespace

Result<int64_t> ParseSlurmDuration(std::string_view s) {
  if (IsUnknownWord(s)) return kUnknownValue;
  if (s == "UNLIMITED" || s == "Partition_Limit" || s == "INVALID") return kNoTimeLimit;
  int64_t days = 0;
  std::string_view rest = s;
  if (const size_t dash = rest.find('-'); dash != std::string_view::npos) {
    if (!ParseInt(rest.substr(0, dash), &days) || days < 0) {
      return Status::ParseError("expected a duration [DD-[HH:]]MM:SS, got " + Quote(s));
    }
    rest.remove_prefix(dash + 1);
  }
  if (const size_t dot = rest.find('.'); dot != std::string_view::npos) {
    int64_t frac = 0;
    if (!ParseInt(rest.substr(dot + 1), &frac)) {
      return Status::ParseError("expected a duration [DD-[HH:]]MM:SS[.fff], got " + Quote(s));
    }
    rest = rest.substr(0, dot);
  }
  int64_t parts[3] = {0, 0, 0};
  int n = 0;
  while (true) {
    const size_t colon = rest.find(':');
    if (n == 3 || !ParseInt(rest.substr(0, colon), &parts[n]) || parts[n] < 0) {
      return Status::ParseError("expected a duration [DD-[HH:]]MM:SS, got " + Quote(s));
    }
    ++n;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  // With a day part sacct always prints HH:MM:SS; "DD-HH" alone also occurs in --time input.
  int64_t h = 0, m = 0, sec = 0;
  if (n == 3) {
    h = parts[0], m = parts[1], sec = parts[2];
  } else if (n == 2) {
    if (days > 0 || s.find('-') != std::string_view::npos) {
      h = parts[0], m = parts[1];
    } else {
      m = parts[0], sec = parts[1];
    }
  } else {
    if (s.find('-') != std::string_view::npos) {
      h = parts[0];
    } else {
      m = parts[0];  // a bare number is minutes in Slurm's time syntax
    }
  }
  // Bounded so that the sum stays far inside int64_t (found by fuzz_sacct: a minutes field of
  // 6.7e18 overflowed); a million days is far above any real duration.
  if (days > 1000000 || h > 1000000000 || m > 1000000000 || sec > 1000000000) {
    return Status::ParseError(
        "expected a duration [DD-[HH:]]MM:SS of at most a million days, got " + Quote(s));
  }
  return ((days * 24 + h) * 60 + m) * 60 + sec;
}

Result<int64_t> ParseTimelimitRawMinutes(std::string_view s) {
  if (IsUnknownWord(s)) return kUnknownValue;
  if (s == "UNLIMITED" || s == "Partition_Limit") return kNoTimeLimit;
  int64_t v = 0;
  if (!ParseInt(s, &v) || v < 0) {
    return Status::ParseError("expected minutes (TimelimitRaw), got " + Quote(s));
  }
  if (v >= 4294967294LL) return kNoTimeLimit;  // NO_VAL / INFINITE
  return v;
}

Result<int64_t> ParseSlurmTimestamp(std::string_view s) {
  if (IsUnknownWord(s)) return kUnknownValue;
  int64_t v = 0;
  if (ParseInt(s, &v)) return v;
  int64_t y, mo, d, h, mi, sec;
  if (s.size() == 19 && s[4] == '-' && s[7] == '-' && (s[10] == 'T' || s[10] == ' ') &&
      s[13] == ':' && s[16] == ':' && Digits(s, 0, 4, &y) && Digits(s, 5, 2, &mo) &&
      Digits(s, 8, 2, &d) && Digits(s, 11, 2, &h) && Digits(s, 14, 2, &mi) &&
      Digits(s, 17, 2, &sec) && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 &&
      sec < 61) {
    return DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
  }
  return Status::ParseError("expected a time YYYY-MM-DDTHH:MM:SS, got " + Quote(s));
}

Result<int64_t> ParseSlurmBytes(std::string_view s) {
  if (IsUnknownWord(s)) return kUnknownValue;
  std::string_view num = s;
  // ReqMem before 21.08 carries 'c' (per CPU) or 'n' (per node); the amount is what we keep.
  if (num.back() == 'c' || num.back() == 'n') num.remove_suffix(1);
  double mult = 1;
  if (!num.empty() && BinarySuffixFactor(num.back()) > 0) {
    mult = BinarySuffixFactor(num.back());
    num.remove_suffix(1);
  }
  // Sizes beyond 8 EiB do not fit int64_t (found by fuzz_sacct: 3.8e22 bytes was converted, which
  // is undefined behaviour); no device or node has them, so they are malformed.
  constexpr double kMaxBytes = 9.2e18;
  int64_t iv = 0;
  double dv = 0;
  if (ParseInt(num, &iv) && iv >= 0) {
    if (static_cast<double>(iv) * mult <= kMaxBytes) return static_cast<int64_t>(iv * mult);
  } else if (ParseDouble(num, &dv) && dv >= 0) {
    if (dv * mult <= kMaxBytes) return static_cast<int64_t>(std::llround(dv * mult));
  }
  return Status::ParseError("expected a size like 1764224K or 36266M, got " + Quote(s));
}

Result<int64_t> ParseCount(std::string_view s) {
  if (IsUnknownWord(s)) return kUnknownValue;
  int64_t v = 0;
  if (!ParseInt(s, &v) || v < 0) return Status::ParseError("expected a count, got " + Quote(s));
  return v;
}

Result<Tres> ParseTres(std::string_view s) {
  Tres t;
  int64_t typed_gpus = 0;
  bool saw_typed = false;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string_view entry = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return Status::ParseError("TRES entry " + Quote(entry) + ": expected key=value");
    }
    const std::string_view key = entry.substr(0, eq);
    const std::string_view value = entry.substr(eq + 1);
    auto count = [&](int64_t* out) -> Status {
      int64_t v = 0;
      if (!ParseInt(value, &v) || v < 0) {
        return Status::ParseError("TRES " + std::string(key) + ": expected a count, got " +
                                  Quote(value));
      }
      *out = v;
      return Status::Ok();
    };
    if (key == "gres/gpu") {
      FMTE_RETURN_IF_ERROR(count(&t.gpus));
    } else if (key.starts_with("gres/gpu:")) {
      int64_t v = 0;
      FMTE_RETURN_IF_ERROR(count(&v));
      typed_gpus += v;
      saw_typed = true;
      if (t.gpu_type.empty()) t.gpu_type = std::string(key.substr(9));
    } else if (key == "cpu") {
      if (value.find(':') == std::string_view::npos) FMTE_RETURN_IF_ERROR(count(&t.cpus));
    } else if (key == "node") {
      FMTE_RETURN_IF_ERROR(count(&t.nodes));
    } else if (key == "mem" || key == "gres/gpumem") {
      Result<int64_t> b = ParseSlurmBytes(value);
      if (!b.ok()) return b.status().WithContext("TRES " + std::string(key));
      (key == "mem" ? t.mem_bytes : t.gpumem_bytes) = *b;
    } else if (key == "gres/gpuutil") {
      if (!ParseDouble(value, &t.gpuutil)) {
        return Status::ParseError("TRES gres/gpuutil: expected a number, got " + Quote(value));
      }
    }
  }
  if (t.gpus == kUnknownValue && saw_typed) t.gpus = typed_gpus;
  return t;
}

std::string_view ToString(JobState s) {
  if (s == JobState::kUnknown) return "UNKNOWN";
  for (const auto& e : kStates) {
    if (e.state == s) return e.name;
  }
  return "OTHER";
}

ParsedState ParseJobState(std::string_view s) {
  ParsedState p;
  std::string_view word = s.substr(0, s.find(' '));
  if (word.empty()) return p;
  if (word.ends_with('+')) word.remove_suffix(1);  // fixed-width truncation "OUT_OF_ME+"
  for (const auto& e : kStates) {
    if (e.name == word || (word.size() >= 6 && e.name.starts_with(word) && s.ends_with('+'))) {
      p.state = e.state;
      break;
    }
  }
  if (p.state == JobState::kUnknown) p.state = JobState::kOther;
  if (p.state == JobState::kCancelled) {
    constexpr std::string_view kBy = "CANCELLED by ";
    if (s.starts_with(kBy)) {
      int64_t uid = 0;
      if (ParseInt(s.substr(kBy.size()), &uid)) p.cancelled_by_uid = uid;
    }
  }
  return p;
}

Result<ParsedJobId> ParseJobId(std::string_view s) {
  ParsedJobId id;
  const size_t dot = s.find('.');
  id.allocation = s.substr(0, dot);
  if (dot != std::string_view::npos) id.step = s.substr(dot + 1);
  const std::string_view a = id.allocation;
  size_t i = 0;
  while (i < a.size() && a[i] >= '0' && a[i] <= '9') ++i;
  if (i == 0 || (dot != std::string_view::npos && id.step.empty())) {
    return Status::ParseError("JobID: expected 123, 123.batch, 123_7 or 123_[1-3], got " +
                              Quote(s));
  }
  if (i < a.size()) {
    if (a[i] == '_') {
      id.array_job = a.substr(0, i);
      id.array_task = a.substr(i + 1);
      if (id.array_task.empty()) {
        return Status::ParseError("JobID: array task missing after '_' in " + Quote(s));
      }
    } else if (a[i] != '+') {
      return Status::ParseError("JobID: expected 123, 123.batch, 123_7 or 123_[1-3], got " +
                                Quote(s));
    }
  }
  return id;
}

Result<ExitCode> ParseExitCode(std::string_view s) {
  ExitCode e;
  if (IsUnknownWord(s)) return e;
  const size_t colon = s.find(':');
  if (!ParseInt(s.substr(0, colon), &e.code) ||
      (colon != std::string_view::npos && !ParseInt(s.substr(colon + 1), &e.signal))) {
    return Status::ParseError("ExitCode: expected code:signal like 0:0, got " + Quote(s));
  }
  return e;
}

}  // namespace fmte::learn
