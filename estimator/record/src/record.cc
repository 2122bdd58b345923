// The `fmte:` accounting record (record.h has the format).
#include "fmte/record.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "fmte/text.h"

namespace fmte {
namespace {

// Bytes written as they are: ASCII letters and digits and . _ / : + @ - (everything else is %XX).
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = t[c - 'a' + 'A'] = true;
  for (char c : std::string_view("._/:+@-")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

// Appends `v` percent-encoded to `out`, at most `max` bytes of it (an escape is never cut).
void AppendEncoded(std::string_view v, size_t max, std::string* out) {
  // Most values need no escape and fit: one append.
  if (v.size() + 3 <= max && std::all_of(v.begin(), v.end(), [](char c) {
        return kPlain[static_cast<unsigned char>(c)];
      })) {
    out->append(v);
    return;
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t written = 0;
  size_t i = 0;
  while (i < v.size() && written + 3 <= max) {
    // A run of plain bytes at once (at most as many as keep written + 3 <= max before each).
    size_t end = i;
    while (end < v.size() && kPlain[static_cast<unsigned char>(v[end])] &&
           written + (end - i) + 3 <= max)
      ++end;
    out->append(v.data() + i, end - i);
    written += end - i;
    i = end;
    if (i >= v.size() || written + 3 > max || kPlain[static_cast<unsigned char>(v[i])]) continue;
    const unsigned char u = static_cast<unsigned char>(v[i++]);
    const char escape[3] = {'%', kHex[u >> 4], kHex[u & 15]};
    out->append(escape, 3);
    written += 3;
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> Decode(std::string_view v, std::string_view key) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '%') {
      out += v[i];
      continue;
    }
    if (i + 2 >= v.size() || HexValue(v[i + 1]) < 0 || HexValue(v[i + 2]) < 0)
      return Status::ParseError("fmte record: " + std::string(key) + ": bad percent escape");
    out += static_cast<char>(HexValue(v[i + 1]) * 16 + HexValue(v[i + 2]));
    i += 2;
  }
  return out;
}

// Numbers as text without allocating: integers exactly, doubles as printf's "%.6g" (std::to_chars
// with chars_format::general and a precision is specified to print exactly that).
class Number {
 public:
  explicit Number(int64_t v) : end_(std::to_chars(buf_, buf_ + sizeof(buf_), v).ptr) {}
  explicit Number(double v)
      : end_(std::to_chars(buf_, buf_ + sizeof(buf_), v, std::chars_format::general, 6).ptr) {}
  operator std::string_view() const {
    return std::string_view(buf_, static_cast<size_t>(end_ - buf_));
  }

 private:
  char buf_[32];
  char* end_;
};

// The record's end: whitespace, ',' or '|' (sacct delimiters), or the end of the text.
size_t RecordEnd(std::string_view text, size_t start) {
  size_t i = start;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '|' || c == '\0') break;
    ++i;
  }
  return i;
}

}  // namespace

// The range of each integer a record holds, one definition for the writer (which writes a value
// beyond it as the bound: an absurd request, as kMaxRecordedBytes) and the reader (which refuses
// anything else). Found by fuzz_batch_script: 1440 GPUs per node (a launcher's process count) was
// written as gpn=1440, which the reader refused, so the job's record was lost to fmte-retrain.
namespace {
struct IntRange {
  int64_t lo, hi;
  int64_t Clamp(int64_t v) const { return std::clamp(v, lo, hi); }
};
constexpr IntRange kGpusRange{1, 1 << 20}, kGpnRange{0, 1024}, kTpPpRange{1, 1 << 16},
    kDegreeRange{1, 1024}, kEtpRange{0, 1024}, kBatchRange{1, 1 << 20},
    kSeqRange{1, int64_t{1} << 24}, kLoraRRange{1, 1 << 16};
}  // namespace

std::string EncodeRecord(const AccountingRecord& r) {
  const TrainingJob& j = r.job;
  const TrainingJob d;  // defaults are omitted
  std::string out;
  out.reserve(kMaxRecordBytes);
  out.append(kRecordPrefix).append("v").append(Number(int64_t{r.version}));
  // One ";key=value" piece, dropped whole when it would make the record longer than the cap less
  // `reserved` (room kept for the model, which comes last).
  size_t reserved = 0;
  const auto put = [&](std::string_view key, std::string_view value) {
    const size_t mark = out.size();
    out += ';';
    out.append(key);
    out += '=';
    AppendEncoded(value, 256, &out);
    if (out.size() + reserved > kMaxRecordBytes) out.resize(mark);
  };
  const auto put_int = [&](std::string_view key, int64_t v) { put(key, Number(v)); };
  const auto put_num = [&](std::string_view key, double v) { put(key, Number(v)); };
  // The prediction and decision first, so a length cap never drops them.
  if (!r.decision.empty()) put("decision", r.decision);
  if (r.pred_mem_bytes > 0) put_int("pred_mem", r.pred_mem_bytes);
  if (r.cap_bytes > 0) put_int("cap", r.cap_bytes);
  if (r.pred_time_s > 0) put_num("pred_time_s", r.pred_time_s);
  if (r.limit_s > 0) put_int("limit_s", r.limit_s);
  if (r.corr_mem_bytes > 0) put_int("corr_mem", r.corr_mem_bytes);
  if (r.corr_time_s > 0) put_num("corr_time_s", r.corr_time_s);
  put("method", ToString(j.method));
  put_int("gpus", kGpusRange.Clamp(j.gpus));
  if (j.gpus_per_node > 0) put_int("gpn", kGpnRange.Clamp(j.gpus_per_node));
  if (!j.gpu.empty()) put("gpu", j.gpu);
  put_int("tp", kTpPpRange.Clamp(j.tp));
  put_int("pp", kTpPpRange.Clamp(j.pp));
  if (j.vpp != d.vpp) put_int("vpp", kDegreeRange.Clamp(j.vpp));
  if (j.ep != d.ep) put_int("ep", kDegreeRange.Clamp(j.ep));
  if (j.etp != d.etp) put_int("etp", kEtpRange.Clamp(j.etp));
  if (j.cp != d.cp) put_int("cp", kDegreeRange.Clamp(j.cp));
  if (j.sequence_parallel) put("sp", "1");
  put_int("mb", kBatchRange.Clamp(j.micro_batch));
  put_int("seq", kSeqRange.Clamp(j.seq_len));
  put_int("ga", kBatchRange.Clamp(j.grad_accum));
  if (j.eval_batch > 0) put_int("eb", kBatchRange.Clamp(j.eval_batch));
  if (j.global_batch > 0) put_int("gb", j.global_batch);
  put("prec", ToString(j.precision));
  put("opt", ToString(j.optimizer));
  put("shard", ToString(j.sharding));
  if (j.offload_optimizer) put("off_opt", "1");
  if (j.offload_params) put("off_par", "1");
  put("ac", ToString(j.activation_checkpointing));
  if (j.recompute_method != d.recompute_method) put("rcm", ToString(j.recompute_method));
  if (j.recompute_modules != d.recompute_modules)
    put("rcmods", RecomputeModulesText(j.recompute_modules));
  if (j.recompute_num_layers != d.recompute_num_layers) put_int("rcn", j.recompute_num_layers);
  // Given or not the default: what the job asked for (a model's config may pin another default).
  if (j.attention != d.attention || j.attention_given) put("attn", ToString(j.attention));
  if (j.state_dict != d.state_dict) put("sd", ToString(j.state_dict));
  if (j.optimizer_impl != d.optimizer_impl) put("oimpl", ToString(j.optimizer_impl));
  if (j.method == Method::kLora || j.method == Method::kQlora) {
    put_int("lora_r", kLoraRRange.Clamp(j.lora_r));
    if (j.lora_dropout > 0 && j.lora_dropout < 1) put_num("lora_do", j.lora_dropout);
  }
  if (j.quant != Quant::kNone) put("quant", ToString(j.quant));
  if (j.fp8 != Fp8::kNone) put("fp8", ToString(j.fp8));
  if (j.moe_dispatcher != MoeDispatcher::kAuto) put("moed", ToString(j.moe_dispatcher));
  if (j.fp8_params) put("fp8p", "1");
  if (j.objective != Objective::kSft) put("obj", ToString(j.objective));
  if (j.reference_precomputed && UsesReference(j.objective)) put("pref", "1");
  if (j.grad_reduce_bf16) put("gr16", "1");
  if (j.optimizer_states_bf16) put("os16", "1");
  if (j.sync_each_batch) put("seb", "1");
  if (!j.kbit_upcast) put("kup", "0");
  if (j.freeze_vision) put("fv", "1");
  if (j.freeze_language) put("fl", "1");
  if (j.fsdp_frozen_grads) put("ffg", "1");
  if (j.bnb_ctx_inputs) put("bci", "1");
  if (j.quantize_experts) put("qexp", "1");
  // PEFT modules_to_save: e (embeddings), h (head), eh (both).
  if (j.save_embedding || j.save_head)
    put("mts", j.save_embedding && j.save_head ? "eh" : j.save_embedding ? "e" : "h");
  if (j.trainable_fp32) put("tf32", "1");
  put("fw", ToString(j.framework));
  if (j.tokens > 0) put_int("tokens", j.tokens);
  if (j.samples > 0) put_int("samples", j.samples);
  if (j.epochs > 0) put_num("epochs", j.epochs);
  if (j.steps > 0) put_int("steps", j.steps);
  if (j.save_every.unit != Every::Unit::kUnset) put("sv", ToString(j.save_every));
  if (j.eval_every.unit != Every::Unit::kUnset) put("ev", ToString(j.eval_every));
  if (j.eval_samples >= 1)
    put_int("es", static_cast<int64_t>(std::min(j.eval_samples, 1e15)));
  else if (j.eval_samples > 0)
    put_num("es", j.eval_samples);
  if (!r.partition.empty()) put("part", r.partition);
  if (!r.sources.empty()) put("src", r.sources);
  // Unknown keys (from newer writers) only where they leave the model its room: found by
  // fuzz_record, long unknown keys shortened the model to nothing ("model=", which decodes as no
  // model and re-encodes differently).
  if (!j.model.empty()) {
    std::string model_piece = ";model=";
    AppendEncoded(j.model, 256, &model_piece);
    reserved = model_piece.size();
  }
  for (const auto& [k, v] : r.extra) put(k, v);
  reserved = 0;
  // The model last: a long path is shortened to what still fits; one that cannot fit at all is
  // left out rather than written empty.
  if (!j.model.empty()) {
    const size_t room = kMaxRecordBytes > out.size() + 7 ? kMaxRecordBytes - out.size() - 7 : 0;
    const size_t mark = out.size();
    out += ";model=";
    AppendEncoded(j.model, std::min<size_t>(room, 256), &out);
    if (out.size() == mark + 7) out.resize(mark);
  }
  return out;
}

Result<AccountingRecord> DecodeRecord(std::string_view text) {
  size_t start = std::string_view::npos;
  for (size_t p = text.find(kRecordPrefix); p != std::string_view::npos;
       p = text.find(kRecordPrefix, p + 1)) {
    if (p + kRecordPrefix.size() < text.size() && text[p + kRecordPrefix.size()] == 'v' &&
        (p == 0 || !std::isalnum(static_cast<unsigned char>(text[p - 1])))) {
      start = p;
      break;
    }
  }
  if (start == std::string_view::npos) return Status::NotFound("no fmte: record in the text");
  const std::string_view rec = text.substr(start, RecordEnd(text, start) - start);
  AccountingRecord r;
  std::string_view rest = rec.substr(kRecordPrefix.size() + 1);  // after "fmte:v"
  const size_t semi = rest.find(';');
  auto version = ParseBoundedInt(rest.substr(0, semi), 1, 1000, "fmte record: version");
  if (!version.ok()) return Status::ParseError(version.status().message());
  r.version = static_cast<int>(*version);
  rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
  TrainingJob& j = r.job;
  while (!rest.empty()) {
    const size_t cut = rest.find(';');
    const std::string_view item = rest.substr(0, cut);
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) break;  // not ours any more: stop (tolerant)
    const std::string key(item.substr(0, eq));
    auto value = Decode(item.substr(eq + 1), key);
    if (!value.ok()) return value.status();
    const std::string& v = *value;
    const std::string shown = "fmte record: " + key;
    const auto int_field = [&](int64_t* out, int64_t min, int64_t max) -> Status {
      auto n = ParseBoundedInt(v, min, max, shown);
      if (!n.ok()) return Status::ParseError(n.status().message());
      *out = *n;
      return Status::Ok();
    };
    const auto enum_field = [&](auto* out, auto parse) -> Status {
      auto e = parse(v, shown);
      if (!e.ok()) return Status::ParseError(e.status().message());
      *out = *e;
      return Status::Ok();
    };
    constexpr int64_t kBig = int64_t{1} << 62;
    Status s;
    if (key == "model")
      j.model = v;
    else if (key == "method")
      s = enum_field(&j.method, ParseMethod);
    else if (key == "gpus")
      s = int_field(&j.gpus, kGpusRange.lo, kGpusRange.hi);
    else if (key == "gpn")
      s = int_field(&j.gpus_per_node, kGpnRange.lo, kGpnRange.hi);
    else if (key == "gpu")
      j.gpu = v;
    else if (key == "tp")
      s = int_field(&j.tp, kTpPpRange.lo, kTpPpRange.hi);
    else if (key == "pp")
      s = int_field(&j.pp, kTpPpRange.lo, kTpPpRange.hi);
    else if (key == "vpp")
      s = int_field(&j.vpp, kDegreeRange.lo, kDegreeRange.hi);
    else if (key == "ep")
      s = int_field(&j.ep, kDegreeRange.lo, kDegreeRange.hi);
    else if (key == "etp")
      s = int_field(&j.etp, kEtpRange.lo, kEtpRange.hi);
    else if (key == "cp")
      s = int_field(&j.cp, kDegreeRange.lo, kDegreeRange.hi);
    else if (key == "sp")
      j.sequence_parallel = v == "1";
    else if (key == "mb")
      s = int_field(&j.micro_batch, kBatchRange.lo, kBatchRange.hi);
    else if (key == "seq")
      s = int_field(&j.seq_len, kSeqRange.lo, kSeqRange.hi);
    else if (key == "ga")
      s = int_field(&j.grad_accum, kBatchRange.lo, kBatchRange.hi);
    else if (key == "eb")
      s = int_field(&j.eval_batch, kBatchRange.lo, kBatchRange.hi);
    else if (key == "gb")
      s = int_field(&j.global_batch, 0, kBig);
    else if (key == "prec")
      s = enum_field(&j.precision, ParsePrecision);
    else if (key == "opt")
      s = enum_field(&j.optimizer, ParseOptimizer);
    else if (key == "shard")
      s = enum_field(&j.sharding, ParseSharding);
    else if (key == "off_opt")
      j.offload_optimizer = v == "1";
    else if (key == "off_par")
      j.offload_params = v == "1";
    else if (key == "ac")
      s = enum_field(&j.activation_checkpointing, ParseCheckpointing);
    else if (key == "rcm")
      s = enum_field(&j.recompute_method, ParseRecomputeMethod);
    else if (key == "rcn")
      s = int_field(&j.recompute_num_layers, 1, 1 << 16);
    else if (key == "rcmods")
      s = enum_field(&j.recompute_modules, ParseRecomputeModules);
    else if (key == "sd")
      s = enum_field(&j.state_dict, ParseStateDict);
    else if (key == "attn") {
      s = enum_field(&j.attention, ParseAttention);
      j.attention_given = true;
    } else if (key == "oimpl")
      s = enum_field(&j.optimizer_impl, ParseOptimizerImpl);
    else if (key == "lora_r")
      s = int_field(&j.lora_r, kLoraRRange.lo, kLoraRRange.hi);
    else if (key == "lora_do") {
      auto p = ParseBoundedDouble(v, 0, 0.999, shown);
      if (!p.ok()) return Status::ParseError(p.status().message());
      j.lora_dropout = *p;
    } else if (key == "quant")
      s = enum_field(&j.quant, ParseQuant);
    else if (key == "fp8")
      s = enum_field(&j.fp8, ParseFp8);
    else if (key == "moed")
      s = enum_field(&j.moe_dispatcher, ParseMoeDispatcher);
    else if (key == "fp8p")
      j.fp8_params = v == "1";
    else if (key == "obj")
      s = enum_field(&j.objective, ParseObjective);
    else if (key == "pref")
      j.reference_precomputed = v == "1";
    else if (key == "gr16")
      j.grad_reduce_bf16 = v == "1";
    else if (key == "os16")
      j.optimizer_states_bf16 = v == "1";
    else if (key == "seb")
      j.sync_each_batch = v == "1";
    else if (key == "kup")
      j.kbit_upcast = v != "0";
    else if (key == "fv")
      j.freeze_vision = v == "1";
    else if (key == "fl")
      j.freeze_language = v == "1";
    else if (key == "ffg")
      j.fsdp_frozen_grads = v == "1";
    else if (key == "bci")
      j.bnb_ctx_inputs = v == "1";
    else if (key == "qexp")
      j.quantize_experts = v == "1";
    else if (key == "tf32")
      j.trainable_fp32 = v == "1";
    else if (key == "mts") {
      if (v != "e" && v != "h" && v != "eh")
        s = Status::ParseError(std::string(shown) + ": expected e, h or eh");
      j.save_embedding = v == "e" || v == "eh";
      j.save_head = v == "h" || v == "eh";
    } else if (key == "fw")
      s = enum_field(&j.framework, ParseFramework);
    else if (key == "tokens")
      s = int_field(&j.tokens, 0, kBig);
    else if (key == "samples")
      s = int_field(&j.samples, 0, kBig);
    else if (key == "steps")
      s = int_field(&j.steps, 0, kBig);
    else if (key == "sv")
      s = enum_field(&j.save_every, ParseEvery);
    else if (key == "ev")
      s = enum_field(&j.eval_every, ParseEvery);
    else if (key == "es") {
      auto e = ParseBoundedDouble(v, 0, 1e15, shown);
      if (!e.ok()) return Status::ParseError(e.status().message());
      j.eval_samples = *e;
    } else if (key == "epochs") {
      auto e = ParseBoundedDouble(v, 0, 1e9, shown);
      if (!e.ok()) return Status::ParseError(e.status().message());
      j.epochs = *e;
    } else if (key == "part")
      r.partition = v;
    else if (key == "pred_mem")
      s = int_field(&r.pred_mem_bytes, 0, kMaxRecordedBytes);
    else if (key == "cap")
      s = int_field(&r.cap_bytes, 0, kBig);
    else if (key == "limit_s")
      s = int_field(&r.limit_s, 0, kBig);
    else if (key == "corr_mem")
      s = int_field(&r.corr_mem_bytes, 0, kMaxRecordedBytes);
    else if (key == "pred_time_s" || key == "corr_time_s") {
      auto e = ParseBoundedDouble(v, 0, kMaxRecordedTimeS, shown);
      if (!e.ok()) return Status::ParseError(e.status().message());
      (key == "pred_time_s" ? r.pred_time_s : r.corr_time_s) = *e;
    } else if (key == "decision")
      r.decision = v;
    else if (key == "src")
      r.sources = v;
    else if (r.extra.size() < 64)
      r.extra.emplace_back(key, v);
    if (!s.ok()) return s;
  }
  return r;
}

AccountingRecord MakeRecord(const JobRequest& request, const Decision& decision) {
  AccountingRecord r;
  r.job = decision.estimated ? decision.job : request.job;
  r.partition = decision.partition;
  if (decision.estimated) {
    // The models' own predictions (record.h: what fmte-retrain divides by), then the corrected
    // ones.
    const JobEstimate& e = decision.estimate;
    r.pred_mem_bytes = std::min(ModelPerGpuBytes(e), kMaxRecordedBytes);
    r.cap_bytes = decision.capacity_bytes;
    if (e.has_time) r.pred_time_s = RecordedTimeS(ModelWallTimeS(e));
    if (e.correction.memory.applied)
      r.corr_mem_bytes = std::min(e.memory.per_gpu_bytes, kMaxRecordedBytes);
    if (e.has_time && e.correction.time.applied)
      r.corr_time_s = std::max(1.0, RecordedTimeS(e.wall_time_s));
  }
  r.limit_s = decision.time_limit_min * 60;
  r.decision = decision.error         ? "error"
               : decision.advise_only ? "advise"
                                      : std::string(ToString(decision.kind));
  // Which sources described the job, highest first ("spank+fmte-line+launcher").
  for (Source s : {Source::kSpank, Source::kFmteLine, Source::kLauncher}) {
    bool used = false;
    for (const FieldSource& f : request.sources) used = used || f.source == s;
    if (used) r.sources += (r.sources.empty() ? "" : "+") + std::string(ToString(s));
  }
  return r;
}

}  // namespace fmte
