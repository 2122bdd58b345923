// XgbModel: the XGBoost C API behind RAII and Status (pattern of dmlc/xgboost demo/c-api).
#include "fmte/learn/xgb.h"

#include <fcntl.h>
#include <unistd.h>
#include <xgboost/c_api.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace fmte::learn {
namespace {

// Turns an XGBoost return code into a Status naming the call.
Status Check(int rc, const char* what) {
  if (rc == 0) return Status::Ok();
  const char* err = XGBGetLastError();
  return Status::Internal(std::string("xgboost ") + what + ": " + (err ? err : "unknown error"));
}

// Owns a DMatrixHandle.
struct DMatrixOwner {
  DMatrixHandle h = nullptr;
  ~DMatrixOwner() {
    if (h != nullptr) XGDMatrixFree(h);
  }
};

Status MakeDMatrix(const DenseMatrix& x, DMatrixOwner* out) {
  if (x.rows <= 0 || x.cols <= 0) {
    return Status::InvalidArgument("features: expected a non-empty matrix, got " +
                                   std::to_string(x.rows) + "x" + std::to_string(x.cols));
  }
  if (static_cast<int64_t>(x.values.size()) != x.rows * x.cols) {
    return Status::InvalidArgument("features: values size does not match rows*cols");
  }
  return Check(XGDMatrixCreateFromMat(x.values.data(), static_cast<bst_ulong>(x.rows),
                                      static_cast<bst_ulong>(x.cols), std::nanf(""), &out->h),
               "XGDMatrixCreateFromMat");
}

std::string FormatDouble(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

}  // namespace

void DenseMatrix::AddRow(std::span<const float> row) {
  if (rows == 0 && cols == 0) cols = static_cast<int64_t>(row.size());
  values.insert(values.end(), row.begin(), row.end());
  ++rows;
}

DenseMatrix DenseMatrix::Select(std::span<const int64_t> index) const {
  DenseMatrix out(static_cast<int64_t>(index.size()), cols);
  for (size_t i = 0; i < index.size(); ++i) {
    std::span<const float> r = Row(index[i]);
    std::copy(r.begin(), r.end(), out.values.begin() + static_cast<int64_t>(i) * cols);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> XgbParams::AsPairs() const {
  std::vector<std::pair<std::string, std::string>> p = {
      {"objective", objective},
      {"max_depth", std::to_string(max_depth)},
      {"eta", FormatDouble(eta)},
      {"subsample", FormatDouble(subsample)},
      {"colsample_bytree", FormatDouble(colsample_bytree)},
      {"min_child_weight", FormatDouble(min_child_weight)},
      {"lambda", FormatDouble(lambda)},
      {"alpha", FormatDouble(alpha)},
      {"tree_method", tree_method},
      {"nthread", std::to_string(nthread)},
      {"seed", std::to_string(seed)},
      {"verbosity", "0"},
  };
  p.insert(p.end(), extra.begin(), extra.end());
  return p;
}

std::string XgbParams::ToJson() const {
  std::ostringstream os;
  os << "{\"num_rounds\":" << num_rounds;
  for (const auto& [k, v] : AsPairs()) {
    if (k == "verbosity" || k == "nthread") continue;  // do not change the model
    os << ",\"" << k << "\":\"" << v << "\"";
  }
  os << "}";
  return os.str();
}

void XgbModel::HandleDeleter::operator()(void* h) const {
  if (h != nullptr) XGBoosterFree(static_cast<BoosterHandle>(h));
}

XgbModel::XgbModel() = default;
XgbModel::~XgbModel() = default;
XgbModel::XgbModel(XgbModel&&) noexcept = default;
XgbModel& XgbModel::operator=(XgbModel&&) noexcept = default;

Result<XgbModel> XgbModel::Train(const DenseMatrix& x, std::span<const float> labels,
                                 const XgbParams& params, std::span<const float> weights) {
  if (static_cast<int64_t>(labels.size()) != x.rows) {
    return Status::InvalidArgument("labels: expected " + std::to_string(x.rows) +
                                   " values (one per row), got " + std::to_string(labels.size()));
  }
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != x.rows) {
    return Status::InvalidArgument("weights: expected none or one per row (" +
                                   std::to_string(x.rows) + "), got " +
                                   std::to_string(weights.size()));
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!std::isfinite(labels[i])) {
      return Status::InvalidArgument("labels: row " + std::to_string(i) + " is not finite");
    }
  }
  if (params.num_rounds <= 0) {
    return Status::InvalidArgument("num_rounds: expected a positive integer");
  }
  DMatrixOwner dtrain;
  FMTE_RETURN_IF_ERROR(MakeDMatrix(x, &dtrain));
  FMTE_RETURN_IF_ERROR(Check(XGDMatrixSetFloatInfo(dtrain.h, "label", labels.data(),
                                                   static_cast<bst_ulong>(labels.size())),
                             "XGDMatrixSetFloatInfo(label)"));
  if (!weights.empty()) {
    FMTE_RETURN_IF_ERROR(Check(XGDMatrixSetFloatInfo(dtrain.h, "weight", weights.data(),
                                                     static_cast<bst_ulong>(weights.size())),
                               "XGDMatrixSetFloatInfo(weight)"));
  }
  XgbModel model;
  BoosterHandle h = nullptr;
  FMTE_RETURN_IF_ERROR(Check(XGBoosterCreate(&dtrain.h, 1, &h), "XGBoosterCreate"));
  model.handle_.reset(h);
  for (const auto& [k, v] : params.AsPairs()) {
    FMTE_RETURN_IF_ERROR(Check(XGBoosterSetParam(h, k.c_str(), v.c_str()),
                               ("XGBoosterSetParam(" + k + ")").c_str()));
  }
  for (int iter = 0; iter < params.num_rounds; ++iter) {
    FMTE_RETURN_IF_ERROR(
        Check(XGBoosterUpdateOneIter(h, iter, dtrain.h), "XGBoosterUpdateOneIter"));
  }
  model.num_features_ = x.cols;
  return model;
}

Result<XgbModel> XgbModel::FromJson(const std::string& json_text) {
  XgbModel model;
  BoosterHandle h = nullptr;
  FMTE_RETURN_IF_ERROR(Check(XGBoosterCreate(nullptr, 0, &h), "XGBoosterCreate"));
  model.handle_.reset(h);
  FMTE_RETURN_IF_ERROR(Check(
      XGBoosterLoadModelFromBuffer(h, json_text.data(), static_cast<bst_ulong>(json_text.size())),
      "XGBoosterLoadModelFromBuffer"));
  bst_ulong nf = 0;
  FMTE_RETURN_IF_ERROR(Check(XGBoosterGetNumFeature(h, &nf), "XGBoosterGetNumFeature"));
  model.num_features_ = static_cast<int64_t>(nf);
  return model;
}

Result<XgbModel> XgbModel::LoadJson(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IoError(path + ": " + std::strerror(errno));
  std::string text;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  Result<XgbModel> m = FromJson(text);
  if (!m.ok()) return m.status().WithContext(path);
  return m;
}

Result<std::vector<float>> XgbModel::Predict(const DenseMatrix& x) const {
  if (!handle_) return Status::InvalidArgument("XgbModel::Predict: model is empty");
  if (x.cols != num_features_) {
    return Status::InvalidArgument("features: model expects " + std::to_string(num_features_) +
                                   " columns, got " + std::to_string(x.cols));
  }
  DMatrixOwner d;
  FMTE_RETURN_IF_ERROR(MakeDMatrix(x, &d));
  bst_ulong len = 0;
  const float* out = nullptr;
  FMTE_RETURN_IF_ERROR(
      Check(XGBoosterPredict(handle_.get(), d.h, 0, 0, 0, &len, &out), "XGBoosterPredict"));
  if (static_cast<int64_t>(len) != x.rows) {
    return Status::Internal("XGBoosterPredict returned " + std::to_string(len) + " values for " +
                            std::to_string(x.rows) + " rows");
  }
  return std::vector<float>(out, out + len);  // copied before the next API call
}

Result<std::string> XgbModel::ToJson() const {
  if (!handle_) return Status::InvalidArgument("XgbModel::ToJson: model is empty");
  bst_ulong len = 0;
  const char* buf = nullptr;
  FMTE_RETURN_IF_ERROR(
      Check(XGBoosterSaveModelToBuffer(handle_.get(), "{\"format\": \"json\"}", &len, &buf),
            "XGBoosterSaveModelToBuffer"));
  return std::string(buf, len);
}

Status XgbModel::SaveJson(const std::string& path) const {
  Result<std::string> json = ToJson();
  if (!json.ok()) return json.status();
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Status::IoError(tmp + ": " + std::strerror(errno));
  const std::string& s = *json;
  size_t off = 0;
  while (off < s.size()) {
    ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      Status st = Status::IoError(tmp + ": " + std::strerror(errno));
      ::close(fd);
      return st;
    }
    off += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    return Status::IoError(tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IoError(path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace fmte::learn
