// vTrain CSV importer and the Megatron GPT jobs its rows describe.
#include "fmte/learn/vtrain.h"

#include <charconv>
#include <map>
#include <tuple>

#include "fmte/text.h"

namespace fmte::learn {
namespace {

std::vector<std::string_view> SplitComma(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ',') {
      out.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

Result<std::vector<VtrainRow>> ParseVtrainCsv(std::string_view text, std::string_view origin) {
  static const char* kColumns[] = {"# GPUs",
                                   "global batch",
                                   "micro batch",
                                   "hidden size",
                                   "attention heads",
                                   "# layers",
                                   "sequence length",
                                   "tensor parallelism",
                                   "data parallelism",
                                   "pipeline parallelism",
                                   "iteration time (ms)"};
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF)
    text.remove_prefix(3);  // BOM
  std::vector<VtrainRow> rows;
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    const std::vector<std::string_view> cells = SplitComma(line);
    const std::string where = std::string(origin) + ":" + std::to_string(line_no);
    if (line_no == 1) {
      if (cells.size() != 11)
        return Status::ParseError(where + ": expected the 11-column vTrain header");
      for (size_t c = 0; c < 11; ++c)
        if (Trim(cells[c]) != kColumns[c])
          return Status::ParseError(where + ": column " + std::to_string(c + 1) + ": expected '" +
                                    kColumns[c] + "', got '" + std::string(cells[c]) + "'");
      continue;
    }
    if (cells.size() != 11)
      return Status::ParseError(where + ": expected 11 columns, got " +
                                std::to_string(cells.size()));
    int64_t v[10];
    for (int c = 0; c < 10; ++c) {
      const std::string_view cell = Trim(cells[c]);
      auto [p, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v[c]);
      if (ec != std::errc() || p != cell.data() + cell.size() || v[c] <= 0)
        return Status::ParseError(where + ": column '" + kColumns[c] +
                                  "': expected a positive integer, got '" + std::string(cell) +
                                  "'");
    }
    double ms = 0;
    const std::string ms_text(Trim(cells[10]));
    try {
      size_t used = 0;
      ms = std::stod(ms_text, &used);
      if (used != ms_text.size() || !(ms > 0)) throw std::invalid_argument("not positive");
    } catch (const std::exception&) {
      return Status::ParseError(
          where + ": column 'iteration time (ms)': expected a positive number, got '" + ms_text +
          "'");
    }
    VtrainRow r{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], ms / 1000.0};
    if (r.tp * r.dp * r.pp != r.gpus)
      return Status::ParseError(where + ": tp x dp x pp = " + std::to_string(r.tp * r.dp * r.pp) +
                                " is not the GPU count " + std::to_string(r.gpus));
    if (r.global_batch % (r.micro_batch * r.dp) != 0)
      return Status::ParseError(where + ": global batch is not a multiple of micro batch x dp");
    rows.push_back(r);
  }
  if (rows.empty()) return Status::ParseError(std::string(origin) + ": no data rows");
  return rows;
}

ModelArch VtrainGptArch(const VtrainRow& row) {
  ModelArch m;
  m.id = "vtrain-gpt-h" + std::to_string(row.hidden) + "-l" + std::to_string(row.layers);
  m.model_type = "gpt2";
  const int64_t h = row.hidden;
  m.hidden_size = h;
  m.num_layers = row.layers;
  m.num_heads = row.heads;
  m.num_kv_heads = row.heads;
  m.head_dim = h / row.heads;
  m.intermediate_size = 4 * h;
  // Megatron pads the GPT-2 vocabulary (50257) to a multiple of make-vocab-size-divisible-by (128)
  // times the tensor-parallel size (megatron/tokenizer/tokenizer.py _vocab_size_with_padding).
  const int64_t multiple = 128 * row.tp;
  m.vocab_size = (50257 + multiple - 1) / multiple * multiple;
  m.max_position_embeddings = row.seq_len;
  m.norm = NormKind::kLayer;
  m.gated_mlp = false;
  m.tie_word_embeddings = true;
  m.embedding_params = m.vocab_size * h;
  m.position_embedding_params = row.seq_len * h;
  m.final_norm_params = 2 * h;
  BlockSpec block;
  block.linears = {{"query_key_value", LinearRole::kQkv, h, 3 * h, true, 1, false},
                   {"dense", LinearRole::kO, h, h, true, 1, false},
                   {"dense_h_to_4h", LinearRole::kUp, h, 4 * h, true, 1, false},
                   {"dense_4h_to_h", LinearRole::kDown, 4 * h, h, true, 1, false}};
  block.norm_params = 4 * h;
  block.num_norms = 2;
  m.block_kinds = {block};
  m.block_kind_of_layer.assign(static_cast<size_t>(row.layers), 0);
  return m;
}

TrainingJob VtrainJob(const VtrainRow& row, const std::string& gpu_name) {
  TrainingJob j;
  j.model = "vtrain-gpt";
  j.method = Method::kFull;
  j.precision = Precision::kMixedFp16;
  j.optimizer = Optimizer::kAdamW;
  j.framework = Framework::kMegatron;
  j.micro_batch = row.micro_batch;
  j.seq_len = row.seq_len;
  j.grad_accum = row.global_batch / (row.micro_batch * row.dp);
  j.global_batch = row.global_batch;
  j.gpus = row.gpus;
  j.gpus_per_node = 8;
  j.gpu = gpu_name;
  j.tp = row.tp;
  j.pp = row.pp;
  j.activation_checkpointing = Checkpointing::kFull;
  j.attention = Attention::kEager;
  return j;
}

ClusterSpec VtrainCluster() {
  ClusterSpec c;
  c.name = "vtrain-dgx-a100";
  c.gpus_per_node = 8;
  c.source = "vTrain validation configs: node_size 8, one node";
  return c;
}

std::vector<int64_t> VtrainGroups(const std::vector<VtrainRow>& rows, VtrainGrouping grouping) {
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, int64_t> ids;
  std::vector<int64_t> out;
  out.reserve(rows.size());
  for (const VtrainRow& r : rows) {
    const auto key =
        std::make_tuple(grouping == VtrainGrouping::kConfig ? r.layers : 0, r.tp, r.pp, r.dp);
    auto it = ids.emplace(key, static_cast<int64_t>(ids.size())).first;
    out.push_back(it->second);
  }
  return out;
}

}  // namespace fmte::learn
