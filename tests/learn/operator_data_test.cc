// Tests of the operator/NCCL sample readers and the cluster trainer on real sample rows
// (tests/data/operators: the first rows of the seed's Perlmutter linear2 samples; PROVENANCE.md).
#include "fmte/learn/operator_data.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "fmte/operator_time.h"

namespace fmte::learn {
namespace {

namespace fs = std::filesystem;
const std::string kData = std::string(FMTE_SOURCE_DIR) + "/tests/data/operators/";

TEST(OperatorDataTest, ClassifiesSampleFileNames) {
  struct Case {
    std::string path;
    bool nccl;
    std::string gpu, name, precision;
    int64_t nodes, gpn;
  } cases[] = {
      {"d/NVIDIAA100-SXM4-80GB_linear_final_fp16.csv", false, "NVIDIAA100-SXM4-80GB",
       "linear_final", "fp16", 0, 0},
      {"d/NVIDIAGH200120GB_parallel_cross_entropy_128_fp16.csv", false, "NVIDIAGH200120GB",
       "parallel_cross_entropy_128", "fp16", 0, 0},
      {"d/NVIDIAA100-SXM4-80GB_allreduce_large_fp16_2_4.csv", true, "NVIDIAA100-SXM4-80GB",
       "allreduce_large", "fp16", 2, 4},
      {"d/NVIDIAA100-SXM4-80GB_allgather_large_fp16.csv", true, "NVIDIAA100-SXM4-80GB",
       "allgather_large", "fp16", 0, 0},
  };
  for (const Case& c : cases) {
    Result<SampleFile> f = ClassifySampleFile(c.path, c.nccl);
    ASSERT_TRUE(f.ok()) << c.path;
    EXPECT_EQ(f->gpu, c.gpu);
    EXPECT_EQ(f->name, c.name);
    EXPECT_EQ(f->precision, c.precision);
    EXPECT_EQ(f->nodes, c.nodes);
    EXPECT_EQ(f->gpus_per_node, c.gpn);
  }
  EXPECT_FALSE(ClassifySampleFile("d/justonename.csv", false).ok());
}

TEST(OperatorDataTest, CsvKeepsQuotedCommasAndNamesBadCells) {
  std::vector<std::string> cells =
      SplitCsvLine(R"(A100,baddbmm,"{'max_depth': None, 'n': 400}",0.068)");
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[2], "{'max_depth': None, 'n': 400}");
  Result<CsvTable> t = ParseCsv("a,b\n1,2\n3\n", "x.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("x.csv:3"), std::string::npos);
  Result<CsvTable> u = ParseCsv("a,b\n1,zz\n", "y.csv");
  ASSERT_TRUE(u.ok());
  Result<NumericTable> n = ToNumeric(*u, "y.csv");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("'b'"), std::string::npos);
}

TEST(OperatorDataTest, Linear2LabelsAreLogTimePerFlop) {
  const std::string path = kData + "NVIDIAA100-SXM4-80GB_linear2_fp16.head.csv";
  Result<CsvTable> t = ReadCsv(path);
  ASSERT_TRUE(t.ok());
  Result<NumericTable> n = ToNumeric(*t, path);
  ASSERT_TRUE(n.ok());
  Result<SampleFile> f = ClassifySampleFile("NVIDIAA100-SXM4-80GB_linear2_fp16.csv", false);
  ASSERT_TRUE(f.ok());
  Result<std::vector<RegressorData>> d = OperatorDatasets(*f, *n);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 2u);
  const RegressorData& fwd = (*d)[0];
  EXPECT_EQ(fwd.key, "linear2_fwd");
  ASSERT_EQ(fwd.x.rows, 4);
  // Row 1: mp 1, b 2, l 1024, dim 5632 -> linear2 GEMM m = b*l = 2048, k = dim/mp, n = dim
  // (the seed's layer_input_to_predictor_input.linear2), 2mkn FLOPs, measured 547.6 us forward.
  const double work = 2.0 * 2048 * 5632 * 5632;
  EXPECT_NEAR(fwd.work[0], work, 1);
  EXPECT_NEAR(fwd.labels[0], std::log(547.6 / work), 1e-5);
  EXPECT_NEAR(std::exp2(fwd.x.at(0, 0)), 2048, 1e-2);
  EXPECT_EQ(fwd.groups[0], 5632);                                 // CV holds out whole hidden sizes
  EXPECT_NEAR((*d)[1].labels[0], std::log(1005.6 / work), 1e-5);  // backward column
}

TEST(OperatorDataTest, TrainsAClusterDirectoryAndTheEstimatorLoadsIt) {
  // A miniature site: one operator file (the 4 real rows) and two synthetic NCCL files whose time
  // is latency + bytes / bandwidth, so the trained model's prediction can be checked.
  const fs::path root = fs::temp_directory_path() / ("fmte_ops_" + std::to_string(::getpid()));
  fs::create_directories(root / "samples/operator");
  fs::create_directories(root / "samples/nccl");
  fs::copy_file(kData + "NVIDIAA100-SXM4-80GB_linear2_fp16.head.csv",
                root / "samples/operator/GPUX_linear2_fp16.csv");
  for (int nodes : {1, 2}) {
    std::ofstream out(root / ("samples/nccl/GPUX_p2p_fp16_" + std::to_string(nodes) + "_1.csv"));
    out << "shape,nodes,GPUsPerNode,dur(us)\n";
    for (int i = 0; i < 64; ++i) {
      const double elements = std::exp2(20 + i * 0.1);
      out << elements << "," << nodes << ",1," << 10 + 2 * elements / (nodes * 10e3) << "\n";
    }
  }
  TrainClusterOptions o;
  o.samples_dir = (root / "samples").string();
  o.out_dir = (root / "regressors/Site").string();
  o.cluster = "Site";
  o.params.num_rounds = 100;  // labels near log(1e-4): enough rounds to leave base_score 0.5
  o.params.eta = 0.3;
  o.folds = 2;
  Result<std::vector<RegressorReport>> r = TrainClusterRegressors(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 5u);  // linear2 fwd/bwd, p2p_1_1, p2p_2_1, p2p_any
  EXPECT_TRUE(fs::exists(root / "regressors/Site/manifest.json"));
  Result<OperatorModels> m = OperatorModels::Load(o.out_dir);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->cluster(), "Site");
  EXPECT_EQ(m->size(), 5u);
  // Inside the sampled range the p2p model follows the generating formula within 10%.
  const double elements = std::exp2(24);
  Result<double> us = m->CollectiveUs("p2p", 2, 1, elements);
  ASSERT_TRUE(us.ok()) << us.status().ToString();
  EXPECT_NEAR(*us / (10 + 2 * elements / 20e3), 1.0, 0.10);
  // An unsampled configuration falls back to the pooled model.
  EXPECT_TRUE(m->CollectiveUs("p2p", 4, 1, elements).ok());
  fs::remove_all(root);
}

TEST(OperatorDataTest, MissingSamplesDirectoryIsNotFound) {
  TrainClusterOptions o;
  o.samples_dir = "/nonexistent/samples";
  o.out_dir = "/tmp/unused";
  EXPECT_EQ(TrainClusterRegressors(o).status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace fmte::learn
