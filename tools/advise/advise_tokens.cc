// fmte-advise tokens: a dataset's tokens and its batching (padding or packing), after the FM
// Training Estimator's TE0 (simulation) and TE2 (contract) token estimators.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "fmte/tokens.h"
#include "job_options.h"
#include "output.h"
#include "token_options.h"

namespace fmte::advise {
namespace {

constexpr std::string_view kSummary =
    "Counts a dataset's tokens (JSONL or a JSON array of objects) and simulates batching: each\n"
    "batch padded to its longest sample (truncated at --seq-len), or samples packed into rows of\n"
    "--seq-len. Gives total tokens, mean padded batch width, padding and steps. Tokens are\n"
    "chars/3.6 as in the FM Training Estimator (--counter words|bytes for bounds), or exact when\n"
    "samples carry input_ids. --write-contract saves their TE2 contract (per-field statistics);\n"
    "--contract estimates from such a contract without the data. Example:\n"
    "  fmte-advise tokens --data train.jsonl --template '### Input: {{input}}\\n### Output: "
    "{{output}}' \\\n      --batch-size 8 --seq-len 4096";

int Fail(const Status& s) { return cli::ReportError("fmte-advise", s); }

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void PrintHuman(const BatchingResult& r, const BatchingOptions& o, const std::string& source,
                int64_t exact_samples, TokenCounter counter, const std::string& contract_out) {
  tools::TextTable t;
  std::string counted =
      counter == TokenCounter::kChars ? "chars/3.6" : std::string(ToString(counter));
  if (exact_samples > 0) counted += "; " + std::to_string(exact_samples) + " exact from input_ids";
  t.AddRow({"source", source});
  t.AddRow({"samples", std::to_string(r.samples) + " (tokens: " + counted + ")"});
  t.AddRow({"tokens per epoch", std::to_string(r.total_tokens)});
  t.AddRow(
      {"tokens in total", Fixed(r.tokens_all_epochs, 0) + " (" + Fixed(o.epochs, 2) + " epochs)"});
  std::string longest = std::to_string(r.max_sample_tokens);
  if (!o.packing && o.seq_len > 0 && source.rfind("contract", 0) != 0)
    longest += " (" + std::to_string(r.truncated_samples) + " samples truncated at " +
               std::to_string(o.seq_len) + ")";
  t.AddRow({"longest sample", longest});
  t.AddRow({"batching", o.packing ? "packed into rows of " + std::to_string(o.seq_len) +
                                        ", batch size " + std::to_string(o.batch_size)
                                  : "batch size " + std::to_string(o.batch_size) +
                                        ", padded to the longest in each batch"});
  t.AddRow({"mean batch width", Fixed(r.mean_batch_width, 2) + " tokens per row"});
  t.AddRow({"padding", Fixed(100 * r.padding_fraction, 2) + " % of " + Fixed(r.padded_tokens, 0) +
                           " processed tokens per epoch"});
  t.AddRow({"steps", std::to_string(r.steps_per_epoch) + " per epoch, " + std::to_string(r.steps) +
                         " in total"});
  if (!contract_out.empty()) t.AddRow({"contract", "written to " + contract_out});
  t.Print(cli::Out());
}

}  // namespace

int RunTokens(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  desc.add_options()("data", po::value<std::string>()->value_name("FILE"),
                     "dataset: JSONL or a JSON array of objects")(
      "batch-size", po::value<std::string>()->default_value("1"), "samples (rows) per batch")(
      "seq-len", po::value<std::string>()->value_name("S"),
      "truncate samples to S tokens; with --packing the row length")(
      "packing", po::bool_switch(), "pack samples into rows of --seq-len instead of padding")(
      "epochs", po::value<std::string>()->default_value("1"), "epochs (for totals and steps)")(
      "seed", po::value<std::string>()->default_value("42"), "shuffle seed")(
      "write-contract", po::value<std::string>()->value_name("OUT"),
      "write the TE2 contract of --data to OUT")("contract",
                                                 po::value<std::string>()->value_name("IN"),
                                                 "estimate from a TE2 contract instead of --data");
  tools::AddTokenCountingOptions(&desc);
  tools::AddCommonOptions(&desc);
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("tokens", kSummary, desc);
    return cli::kExitOk;
  }
  const std::string data_path = tools::FlagString(vm, "data");
  const std::string contract_in = tools::FlagString(vm, "contract");
  const std::string contract_out = tools::FlagString(vm, "write-contract");
  if (data_path.empty() == contract_in.empty())
    return Fail(Status::InvalidArgument("give exactly one of --data FILE or --contract IN"));
  if (!contract_out.empty() && data_path.empty())
    return Fail(Status::InvalidArgument("--write-contract needs --data"));

  BatchingOptions o;
  auto bs = tools::ParseInt(vm["batch-size"].as<std::string>(), "--batch-size", 1, 1 << 24);
  if (!bs.ok()) return Fail(bs.status());
  o.batch_size = *bs;
  if (vm.count("seq-len")) {
    auto s = tools::ParseInt(vm["seq-len"].as<std::string>(), "--seq-len", 1, int64_t{1} << 30);
    if (!s.ok()) return Fail(s.status());
    o.seq_len = *s;
  }
  o.packing = tools::FlagSet(vm, "packing");
  if (o.packing && o.seq_len == 0)
    return Fail(Status::InvalidArgument("--packing needs --seq-len (the length of a packed row)"));
  auto epochs = tools::ParseDouble(vm["epochs"].as<std::string>(), "--epochs", 1e-6, 1e6);
  if (!epochs.ok()) return Fail(epochs.status());
  o.epochs = *epochs;
  auto seed = tools::ParseInt(vm["seed"].as<std::string>(), "--seed", 0, INT64_MAX);
  if (!seed.ok()) return Fail(seed.status());
  o.seed = static_cast<uint64_t>(*seed);
  auto counting = tools::TokenCountingFromFlags(vm);
  if (!counting.ok()) return Fail(counting.status());
  const TextTemplate& text_template = counting->text_template;

  Result<BatchingResult> result = Status::Internal("unset");
  int64_t exact_samples = 0;
  std::string source;
  if (!data_path.empty()) {
    TokenizeOptions to;
    to.text_template = text_template;
    to.counter = counting->counter;
    to.per_field = !contract_out.empty();
    auto data = TokenizeFile(data_path, to);
    if (!data.ok()) return Fail(data.status());
    exact_samples = data->exact_samples;
    source = data_path;
    result = SimulateBatching(data->sample_tokens, o);
    if (!result.ok()) return Fail(result.status());
    if (!contract_out.empty()) {
      std::ofstream out(contract_out, std::ios::binary | std::ios::trunc);
      out << ContractToJson(MakeContract(*data));
      out.close();
      if (!out)
        return Fail(Status::IoError("--write-contract: cannot write '" + contract_out + "'"));
    }
  } else {
    auto contract = LoadContractFile(contract_in);
    if (!contract.ok()) return Fail(contract.status());
    source = "contract " + contract_in;
    result = EstimateFromContract(*contract, text_template, counting->counter, o);
    if (!result.ok()) return Fail(result.status());
  }
  const BatchingResult& r = *result;
  if (tools::FlagSet(vm, "json")) {
    nlohmann::json j;
    j["source"] = data_path.empty() ? "contract" : "data";
    j["path"] = data_path.empty() ? contract_in : data_path;
    j["counter"] = ToString(counting->counter);
    j["samples"] = r.samples;
    j["exact_samples"] = exact_samples;
    j["total_tokens"] = r.total_tokens;
    j["tokens_all_epochs"] = r.tokens_all_epochs;
    j["max_sample_tokens"] = r.max_sample_tokens;
    j["truncated_samples"] = r.truncated_samples;
    j["batch_size"] = o.batch_size;
    j["seq_len"] = o.seq_len;
    j["packing"] = o.packing;
    j["epochs"] = o.epochs;
    j["mean_batch_width"] = r.mean_batch_width;
    j["padded_tokens"] = r.padded_tokens;
    j["padding_fraction"] = r.padding_fraction;
    j["steps_per_epoch"] = r.steps_per_epoch;
    j["steps"] = r.steps;
    if (!contract_out.empty()) j["contract_written"] = contract_out;
    cli::Out() << j.dump(2) << "\n";
  } else {
    PrintHuman(r, o, source, exact_samples, counting->counter, contract_out);
  }
  return cli::kExitOk;
}

}  // namespace fmte::advise
