// The decision forwarded from sbatch (slurm_plugin/client_decision.h): its text form and what its
// decoder refuses, and the files' fingerprint.
#include "client_decision.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fmte::slurm {
namespace {

ClientDecision Sample() {
  ClientDecision d;
  d.files = "0123456789abcdef";
  d.inputs = 0xfedcba9876543210ULL;
  CachedDecision& c = d.decision;
  c.is_llm_job = true;
  c.model = "meta-llama/Llama-3.1-8B";
  c.slurm_gpus = 4;
  c.record = "fmte:v1;m=meta-llama/Llama-3.1-8B;g=4";
  Outcome& o = c.outcome;
  o.kind = DecisionKind::kRewrite;
  o.reject_reason = RejectReason::kNone;
  o.touched = true;
  o.estimated = true;
  o.new_time_limit_min = 480;
  o.new_gpus = 2;
  o.gpu_field = GpuTresField::kPerNode;
  o.new_gpu_tres = "gres:gpu:a100:2";
  o.gpu = "A100-SXM4-80GB";
  o.per_gpu_bytes = 52'000'000'000;
  o.usable_bytes = 77'000'000'000;
  o.user_message = "fmte: fits: 48.4 GiB per GPU\nfmte: note: 100% sure\tor not";
  return d;
}

TEST(ClientDecisionTest, RoundTripsEveryField) {
  const ClientDecision d = Sample();
  const std::string text = EncodeClientDecision(d);
  EXPECT_EQ(text.find('\t'), std::string::npos);  // control characters escaped
  auto back = DecodeClientDecision(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->files, d.files);
  EXPECT_EQ(back->inputs, d.inputs);
  const CachedDecision& c = back->decision;
  EXPECT_TRUE(c.is_llm_job);
  EXPECT_FALSE(c.script_read);
  EXPECT_EQ(c.model, d.decision.model);
  EXPECT_EQ(c.slurm_gpus, 4);
  EXPECT_EQ(c.record, d.decision.record);
  const Outcome& o = c.outcome;
  EXPECT_EQ(o.kind, DecisionKind::kRewrite);
  EXPECT_TRUE(o.touched && o.estimated && !o.error && !o.advise_only);
  EXPECT_EQ(o.new_time_limit_min, 480);
  EXPECT_EQ(o.new_gpus, 2);
  EXPECT_EQ(o.gpu_field, GpuTresField::kPerNode);
  EXPECT_EQ(o.new_gpu_tres, "gres:gpu:a100:2");
  EXPECT_EQ(o.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(o.per_gpu_bytes, 52'000'000'000);
  EXPECT_EQ(o.usable_bytes, 77'000'000'000);
  EXPECT_EQ(o.user_message, d.decision.outcome.user_message);
}

TEST(ClientDecisionTest, RefusesWhatIsNotExactlyOneDecision) {
  const std::string good = EncodeClientDecision(Sample());
  const auto refused = [](const std::string& text, const std::string& names) {
    auto r = DecodeClientDecision(text);
    EXPECT_FALSE(r.ok()) << text;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find(names), std::string::npos) << r.status().ToString();
    }
  };
  refused("", "header");
  refused("fmte-decision 2\n" + good.substr(good.find('\n') + 1), "header");
  refused(good + "files=x\n", "files given twice");
  refused(good + "color=red\n", "unknown field 'color'");
  std::string no_model = good;
  no_model.erase(no_model.find("model="),
                 no_model.find('\n', no_model.find("model=")) - no_model.find("model=") + 1);
  refused(no_model, "model missing");
  const auto with = [&](const std::string& field, const std::string& value) {
    std::string t = good;
    const size_t at = t.find("\n" + field + "=") + 1;
    const size_t end = t.find('\n', at);
    return t.replace(at, end - at, field + "=" + value);
  };
  refused(with("kind", "3"), "kind: expected an integer in [0, 2]");
  refused(with("new_gpus", "-1"), "new_gpus");
  refused(with("time_limit_min", "12x"), "time_limit_min");
  refused(with("time_limit_min", std::string(5000, '0') + "1"), "time_limit_min: longer than");
  refused(with("inputs", "123"), "inputs: expected 16 hex digits");
  refused(with("model", "a%0Ab"), "model: control characters");  // no forged log line
  refused(with("model", "a%4"), "model: a % escape");
  refused(with("model", "a%"), "model: a % escape");
  refused(with("model", "a%zzb"), "model: a % escape");
  refused(with("model", "%4%41"), "model: a % escape");
  refused(with("model", "ab%7F"), "model: control characters");
  // Escapes anywhere in a value, the text between them kept as it is.
  auto decoded = DecodeClientDecision(with("model", "%25org%2Fname%25"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->decision.model, "%org/name%");
  refused(with("record", "anything"), "record: expected an fmte record");
  refused(with("record", "fmte:" + std::string(2000, 'x')), "record: longer than");
  refused(good + std::string(kMaxDecisionBytes, 'x'), "longer than");
  EXPECT_TRUE(DecodeClientDecision(with("record", "")).ok());  // no record: none written
}

TEST(ClientDecisionTest, FingerprintFollowsTheFilesNotTheirFolder) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("fmte_fp_" + std::to_string(getpid()));
  const auto make = [&](const std::string& name, const std::string& gpus) {
    const fs::path etc = root / name;
    fs::create_directories(etc / "models");
    std::ofstream(etc / "gpus.csv") << gpus;
    std::ofstream(etc / "models" / "m.json") << "{}";
    std::ofstream(etc / "fmte.conf") << "CatalogDir=" << etc.string() << "\n";
    Config c;
    c.catalog_dir = etc.string();
    c.regressors_dir = (root / "none").string();
    return std::make_pair((etc / "fmte.conf").string(), c);
  };
  const auto [conf_a, a] = make("a", "name,memory\nX,80\n");
  const auto [conf_b, b] = make("b", "name,memory\nX,80\n");
  const auto [conf_c, c] = make("c", "name,memory\nX,96\n");
  // fmte.conf names its own folder, so compare with the same fmte.conf text.
  std::ofstream(conf_b) << "CatalogDir=" << a.catalog_dir << "\n";
  EXPECT_EQ(FilesFingerprint(conf_a, a), FilesFingerprint(conf_b, b));  // same bytes elsewhere
  std::ofstream(conf_c) << "CatalogDir=" << a.catalog_dir << "\n";
  EXPECT_NE(FilesFingerprint(conf_a, a), FilesFingerprint(conf_c, c));  // one number differs
  std::ofstream(conf_b) << "CatalogDir=" << a.catalog_dir << "\nRaiseGpus=no\n";
  EXPECT_NE(FilesFingerprint(conf_a, a), FilesFingerprint(conf_b, b));  // fmte.conf differs
  // A model folder linked into the catalog (read by the catalog's loader) counts as its files.
  fs::create_directories(root / "site" / "big");
  std::ofstream(root / "site" / "big" / "config.json") << "{}";
  fs::create_directory_symlink(root / "site", fs::path(a.catalog_dir) / "models" / "site");
  const std::string linked = FilesFingerprint(conf_a, a);
  std::ofstream(root / "site" / "big" / "config.json") << "{\"hidden_size\": 1}";
  EXPECT_NE(FilesFingerprint(conf_a, a), linked);
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
}  // namespace fmte::slurm
