// Operator / NCCL sample files -> training sets (label log(time/work), features of
// operator_time.h).
#include "fmte/learn/operator_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "fmte/operator_time.h"

namespace fmte::learn {
namespace {

std::vector<std::string> SplitUnderscore(const std::string& s) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == '_') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

bool IsInteger(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Join(const std::vector<std::string>& v, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += (i > from ? "_" : "") + v[i];
  return out;
}

}  // namespace

Result<SampleFile> ClassifySampleFile(const std::string& path, bool nccl) {
  SampleFile f;
  f.path = path;
  f.nccl = nccl;
  const std::string stem = std::filesystem::path(path).stem().string();
  std::vector<std::string> p = SplitUnderscore(stem);
  if (p.size() < 3) {
    return Status::InvalidArgument(path + ": expected a name <GPU>_<operator>_<precision>.csv");
  }
  f.gpu = p[0];
  size_t end = p.size();
  if (nccl && p.size() >= 5 && IsInteger(p[end - 1]) && IsInteger(p[end - 2])) {
    f.nodes = std::stoll(p[end - 2]);
    f.gpus_per_node = std::stoll(p[end - 1]);
    end -= 2;
  }
  f.precision = p[end - 1];
  f.name = Join(p, 1, end - 1);
  if (f.name.empty()) return Status::InvalidArgument(path + ": no operator name in the file name");
  return f;
}

Result<std::vector<RegressorData>> OperatorDatasets(const SampleFile& file, const NumericTable& t) {
  if (std::find(KnownOperators().begin(), KnownOperators().end(), file.name) ==
      KnownOperators().end()) {
    return Status::NotFound(file.path + ": operator '" + file.name + "' is not modelled");
  }
  struct Target {
    std::string pass, column;
  };
  std::vector<Target> targets;
  if (OperatorHasPasses(file.name)) {
    targets = {{"fwd", "F_dur(us)"}, {"bwd", "B_dur(us)"}};
  } else {
    targets = {{"dur", "dur(us)"}};
  }
  const int col_mp = t.Column("mp"), col_b = t.Column("b"), col_h = t.Column("h"),
            col_l = t.Column("l"), col_dim = t.Column("dim"), col_enc = t.Column("encoders");
  const int group_col = col_dim >= 0 ? col_dim : col_l;
  if (group_col < 0) return Status::ParseError(file.path + ": needs a 'dim' or 'l' column");
  std::vector<RegressorData> out;
  for (const Target& target : targets) {
    const int col_y = t.Column(target.column);
    if (col_y < 0) {
      return Status::ParseError(file.path + ": missing column '" + target.column + "'");
    }
    RegressorData d;
    d.key = file.name + "_" + target.pass;
    d.kind = "operator";
    d.name = file.name;
    d.pass = target.pass;
    d.feature_names = OperatorFeatureNames(file.name);
    d.sources = {std::filesystem::path(file.path).filename().string() + ":" + target.column};
    d.group_by = t.columns[group_col];
    for (const std::vector<double>& row : t.rows) {
      OperatorConfig c;
      if (col_mp >= 0) c.tp = row[col_mp];
      if (col_b >= 0) c.micro_batch = row[col_b];
      if (col_h >= 0) c.heads = row[col_h];
      if (col_l >= 0) c.seq_len = row[col_l];
      if (col_dim >= 0) c.hidden = row[col_dim];
      if (col_enc >= 0) c.layers = row[col_enc];
      const double y = row[col_y];
      float feats[kMaxOperatorFeatures] = {};
      double work = 0;
      Result<int> n = OperatorFeatures(file.name, c, feats, &work);
      if (!n.ok()) return n.status().WithContext(file.path);
      if (!(y > 0) || !(work > 0) || !std::isfinite(y)) {
        ++d.skipped_rows;
        continue;
      }
      d.x.AddRow(std::span<const float>(feats, static_cast<size_t>(*n)));
      d.labels.push_back(static_cast<float>(std::log(y / work)));
      d.work.push_back(work);
      d.groups.push_back(static_cast<int64_t>(row[group_col]));
    }
    out.push_back(std::move(d));
  }
  return out;
}

Result<RegressorData> CollectiveDataset(const SampleFile& file, const NumericTable& t, int bands) {
  const int col_shape = t.Column("shape"), col_y = t.Column("dur(us)");
  if (col_shape < 0 || col_y < 0) {
    return Status::ParseError(file.path + ": expected columns 'shape' and 'dur(us)'");
  }
  if (file.nodes <= 0 || file.gpus_per_node <= 0) {
    return Status::InvalidArgument(file.path + ": not a per-configuration file (<nodes>_<gpn>)");
  }
  RegressorData d;
  d.kind = "nccl";
  d.name = file.name;
  d.nodes = file.nodes;
  d.gpus_per_node = file.gpus_per_node;
  d.key = file.name + "_" + std::to_string(file.nodes) + "_" + std::to_string(file.gpus_per_node);
  d.feature_names = {"log2_elements"};
  d.sources = {std::filesystem::path(file.path).filename().string() + ":dur(us)"};
  d.group_by = std::to_string(bands) + " contiguous message-size bands";
  std::vector<std::pair<double, double>> rows;  // (elements, us)
  for (const std::vector<double>& row : t.rows) {
    if (row[col_y] > 0 && row[col_shape] > 0 && std::isfinite(row[col_y])) {
      rows.emplace_back(row[col_shape], row[col_y]);
    } else {
      ++d.skipped_rows;
    }
  }
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rows[a].first < rows[b].first; });
  std::vector<int64_t> band(rows.size());
  for (size_t rank = 0; rank < order.size(); ++rank) {
    band[order[rank]] = static_cast<int64_t>(rank * bands / std::max<size_t>(1, order.size()));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    float feats[kMaxOperatorFeatures] = {};
    double work = 0;
    const int n =
        CollectiveFeatures(rows[i].first, file.nodes, file.gpus_per_node, false, feats, &work);
    d.x.AddRow(std::span<const float>(feats, static_cast<size_t>(n)));
    d.labels.push_back(static_cast<float>(std::log(rows[i].second / work)));
    d.work.push_back(work);
    d.groups.push_back(band[i]);
  }
  return d;
}

RegressorData PoolCollective(const std::vector<const RegressorData*>& parts) {
  RegressorData d;
  if (parts.empty()) return d;
  d.kind = "nccl";
  d.name = parts[0]->name;
  d.key = d.name + "_any";
  d.feature_names = {"log2_elements", "nodes", "gpus_per_node", "log2_ranks"};
  d.group_by = parts[0]->group_by + " (same band of every configuration held out together)";
  for (const RegressorData* p : parts) {
    d.sources.insert(d.sources.end(), p->sources.begin(), p->sources.end());
    for (int64_t r = 0; r < p->x.rows; ++r) {
      float feats[kMaxOperatorFeatures] = {};
      double work = 0;
      const double elements = std::exp2(static_cast<double>(p->x.at(r, 0)));
      const int n = CollectiveFeatures(elements, p->nodes, p->gpus_per_node, true, feats, &work);
      feats[0] = p->x.at(r, 0);  // exact, not re-rounded
      d.x.AddRow(std::span<const float>(feats, static_cast<size_t>(n)));
      d.labels.push_back(p->labels[r]);
      d.work.push_back(p->work[r]);
      d.groups.push_back(p->groups[r]);
    }
    d.skipped_rows += p->skipped_rows;
  }
  return d;
}

}  // namespace fmte::learn
