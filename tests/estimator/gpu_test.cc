// GpuCatalog: etc/gpus.csv against its sources (vendor datasheets for peaks, nvidia-smi /
// rocm-smi totals for memory), aliases users type, and CSV errors naming line and column.
#include "fmte/gpu.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace fmte {
namespace {

std::string CsvPath() { return std::string(FMTE_SOURCE_DIR) + "/etc/gpus.csv"; }

const GpuCatalog& Catalog() {
  static const GpuCatalog* catalog = [] {
    Result<GpuCatalog> c = GpuCatalog::LoadCsv(CsvPath());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? new GpuCatalog(std::move(c).value()) : new GpuCatalog();
  }();
  return *catalog;
}

TEST(GpuCatalogTest, LoadsShippedCsv) {
  // 13 rows of anchors/gpus.csv + MI250X-GCD + GH200-96GB + A40 + GB200 + GB300 + H100-NVL-94GB +
  // L4
  EXPECT_EQ(Catalog().size(), 20u);
}

// What users type -> canonical row, and the device memory the driver reports (MiB, from the
// nvidia-smi / rocm-smi outputs named in etc/gpus.csv's memory_mib_source column).
TEST(GpuCatalogTest, AliasesAndDriverMemory) {
  struct Row {
    const char* typed;
    const char* canonical;
    int64_t memory_mib;
  } rows[] = {
      {"A100-80GB", "A100-SXM4-80GB", 81920},
      {"a100", "A100-SXM4-80GB", 81920},  // gres type a100 = the 80GB SXM part (docs/models.md)
      {"A100-SXM-80GB", "A100-SXM4-80GB", 81920},
      {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB", 81920},  // nvidia-smi name
      {"A100-40GB", "A100-SXM4-40GB", 40960},
      {"A100-PCIe", "A100-PCIe-80GB", 81920},
      {"H100", "H100-SXM5-80GB", 81559},
      {"h100-sxm", "H100-SXM5-80GB", 81559},
      {"H100-80GB", "H100-SXM5-80GB", 81559},
      {"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB", 81559},
      {"nvidia_h100_80gb_hbm3", "H100-SXM5-80GB", 81559},  // Slurm AutoDetect=nvml gres type
      {"H100-PCIe", "H100-PCIe-80GB", 81559},
      {"h200", "H200-SXM-141GB", 143771},
      {"B200", "B200-HGX", 183359},
      // nvidia-smi memory.total printed on public GitHub (etc/gpus.csv memory_mib_source).
      {"GB200", "GB200", 189471},
      {"nvidia_gb300", "GB300", 284208},
      {"l40s", "L40S", 46068},
      {"A10", "A10", 23028},
      {"A10G", "A10", 23028},         // AWS G5: the A10's memory and bandwidth
      {"NVIDIA A10G", "A10", 23028},  // nvidia-smi name
      {"nvidia_a10g", "A10", 23028},  // Slurm AutoDetect=nvml gres type
      {"L4", "L4", 23034},
      {"NVIDIA L4", "L4", 23034},
      {"H100 NVL", "H100-NVL-94GB", 95830},
      {"NVIDIA H100 NVL", "H100-NVL-94GB", 95830},
      {"h100-nvl", "H100-NVL-94GB", 95830},
      {"a40", "A40", 46068},  // nvidia-smi with ECC on
      {"V100", "V100-SXM2-32GB", 32768},
      {"V100-32GB", "V100-SXM2-32GB", 32768},
      {"MI250X", "MI250X", 2 * 65520},
      {"MI250X-GCD", "MI250X-GCD", 65520},
      {"MI300X", "MI300X", 196288},
      {"GH200", "GH200-96GB", 97871},
      {"NVIDIAGH200120GB", "GH200-96GB", 97871},  // ai4ci-estimator data set name (Vista)
      {"NVIDIA GH200 120GB", "GH200-96GB", 97871},
  };
  for (const Row& r : rows) {
    Result<const GpuSpec*> g = Catalog().Find(r.typed);
    ASSERT_TRUE(g.ok()) << r.typed << ": " << g.status().ToString();
    EXPECT_EQ((*g)->name, r.canonical) << r.typed;
    EXPECT_EQ((*g)->memory_mib, r.memory_mib) << r.typed;
    EXPECT_EQ((*g)->memory_bytes, r.memory_mib * 1048576) << r.typed;
  }
}

// Peaks and bandwidths from the vendor datasheets cited in etc/gpus.csv; interconnect is per
// direction (datasheets print bidirectional: NVLink 3 600 GB/s -> 300, NVLink 4 900 -> 450).
TEST(GpuCatalogTest, PeaksAndBandwidths) {
  const GpuSpec* a100 = *Catalog().Find("A100-80GB");
  EXPECT_DOUBLE_EQ(a100->peak_bf16_tflops, 312);
  EXPECT_DOUBLE_EQ(a100->hbm_gbps, 2039);
  EXPECT_DOUBLE_EQ(a100->interconnect_gbps, 300);
  const GpuSpec* h100 = *Catalog().Find("H100");
  EXPECT_DOUBLE_EQ(h100->PeakTflops(true), 989);
  EXPECT_DOUBLE_EQ(h100->interconnect_gbps, 450);
  const GpuSpec* v100 = *Catalog().Find("V100");
  EXPECT_DOUBLE_EQ(v100->peak_bf16_tflops, 0);  // Volta has no bf16
  EXPECT_DOUBLE_EQ(v100->PeakTflops(true), 125);
  // H100 NVL: 1671 TFLOPS BF16 with sparsity, 3.9 TB/s, NVLink bridge 600 GB/s (H100 datasheet);
  // L4: 242 TFLOPS BF16 with sparsity, 300 GB/s (L4 datasheet).
  const GpuSpec* nvl = *Catalog().Find("H100 NVL");
  EXPECT_DOUBLE_EQ(nvl->PeakTflops(true), 835);
  EXPECT_DOUBLE_EQ(nvl->hbm_gbps, 3900);
  EXPECT_DOUBLE_EQ(nvl->interconnect_gbps, 300);
  const GpuSpec* l4 = *Catalog().Find("L4");
  EXPECT_DOUBLE_EQ(l4->PeakTflops(true), 121);
  EXPECT_DOUBLE_EQ(l4->hbm_gbps, 300);
  const GpuSpec* gh200 = *Catalog().Find("GH200");
  EXPECT_DOUBLE_EQ(gh200->PeakTflops(true), 989);
  EXPECT_DOUBLE_EQ(gh200->hbm_gbps, 4000);
}

TEST(GpuCatalogTest, UnknownNameListsClosest) {
  Result<const GpuSpec*> g = Catalog().Find("H100-SMX");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Status::Code::kNotFound);
  EXPECT_NE(g.status().message().find("H100-SXM5-80GB"), std::string::npos) << g.status().message();
  EXPECT_EQ(Catalog().Closest("A100-80G")[0], "A100-SXM4-80GB");
}

class GpuCsvErrorTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    // One file per process: ctest runs this suite's tests in parallel processes, and a shared
    // name let one test read the other's catalog.
    path_ = ::testing::TempDir() + "/fmte_gpus_test_" + std::to_string(getpid()) + ".csv";
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
};

constexpr char kHeader[] =
    "gpu,memory_gb,hbm_bandwidth_gbps,peak_dense_bf16_tflops,peak_dense_fp16_tflops,"
    "gpu_interconnect_bw_gbps_bidir,interconnect,notes,memory_mib,aliases\n";

TEST_F(GpuCsvErrorTest, ErrorsNameLineAndColumn) {
  Result<GpuCatalog> bad = GpuCatalog::LoadCsv(
      Write(std::string(kHeader) + "X1,80,2000,312,312,600,NVLink,\"a, quoted\nnote\",81920,x1\n" +
            "X2,80,fast,312,312,600,NVLink,,81920,x2\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kParseError);
  EXPECT_NE(bad.status().message().find(":4: column hbm_bandwidth_gbps"), std::string::npos)
      << bad.status().message();

  Result<GpuCatalog> missing = GpuCatalog::LoadCsv(Write("gpu,memory_gb\nX,80\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing column"), std::string::npos);

  Result<GpuCatalog> width = GpuCatalog::LoadCsv(Write(std::string(kHeader) + "X,80,2000\n"));
  ASSERT_FALSE(width.ok());
  EXPECT_NE(width.status().message().find(":2: expected 10 cells, got 3"), std::string::npos)
      << width.status().message();

  Result<GpuCatalog> dup = GpuCatalog::LoadCsv(
      Write(std::string(kHeader) + "X1,80,2000,312,312,600,NVLink,,81920,same\n" +
            "X2,80,2000,312,312,600,NVLink,,81920,SAME\n"));
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find(":3: column aliases"), std::string::npos)
      << dup.status().message();

  EXPECT_EQ(GpuCatalog::LoadCsv("/nonexistent/gpus.csv").status().code(), Status::Code::kIoError);
}

// Found by fuzz_gpu_catalog: a memory size of 3e77 MiB overflowed the conversion to bytes
// (undefined behaviour). Every figure is bounded and the error names the row and column.
TEST(GpuCatalogParseTest, AbsurdFiguresAreErrorsNamingTheColumn) {
  struct Case {
    const char* row;
    const char* expected;
  };
  const Case cases[] = {
      {"X,80,2000,312,312,600,NVLink,,327688888888888888888888888888888888888888888888,x",
       "gpus.csv:2: column memory_mib: expected at most 16777216"},
      {"X,1e300,2000,312,312,600,NVLink,,,x", "gpus.csv:2: column memory_gb: expected at most"},
      {"X,80,2e9,312,312,600,NVLink,,81920,x",
       "column hbm_bandwidth_gbps: expected at most 1000000"},
      {"X,80,2000,312,1e99,600,NVLink,,81920,x", "column peak_dense_fp16_tflops: expected at most"},
  };
  for (const Case& c : cases) {
    Result<GpuCatalog> r = GpuCatalog::ParseCsv(std::string(kHeader) + c.row + "\n", "gpus.csv");
    ASSERT_FALSE(r.ok()) << c.row;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos) << r.status().message();
  }
}

// nvlink_domain counts GPUs: a fraction was truncated silently (72.5 read as 72).
TEST(GpuCatalogParseTest, FractionalNvlinkDomainIsAnErrorNamingTheColumn) {
  const std::string header =
      std::string(kHeader).insert(std::string(kHeader).find('\n'), ",nvlink_domain");
  Result<GpuCatalog> r =
      GpuCatalog::ParseCsv(header + "X,80,2000,312,312,600,NVLink,,81920,x,72.5\n", "gpus.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "gpus.csv:2: column nvlink_domain: expected a whole number of GPUs, got '72.5'"),
            std::string::npos)
      << r.status().message();
  Result<GpuCatalog> ok =
      GpuCatalog::ParseCsv(header + "X,80,2000,312,312,600,NVLink,,81920,x,72\n", "gpus.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok->Find("X"))->nvlink_domain, 72);
}

TEST_F(GpuCsvErrorTest, QuotedFieldsAndGbFallback) {
  Result<GpuCatalog> ok = GpuCatalog::LoadCsv(Write(
      std::string(kHeader) + "X1,80,2000,312,312,600,NVLink,\"a, \"\"quoted\"\"\",,x1 X-one\n"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const GpuSpec* g = *ok->Find("x-one");
  EXPECT_EQ(g->memory_bytes, 80000000000);  // no memory_mib: marketing GB (10^9 bytes)
}

TEST(GpuCatalogTest, DefaultPathHonoursEnvironment) {
  const char* old = std::getenv("FMTE_ETC_DIR");
  std::string saved = old ? old : "";
  setenv("FMTE_ETC_DIR", "/tmp/fmte-etc", 1);
  EXPECT_EQ(GpuCatalog::DefaultPath(), "/tmp/fmte-etc/gpus.csv");
  if (old) {
    setenv("FMTE_ETC_DIR", saved.c_str(), 1);
  } else {
    unsetenv("FMTE_ETC_DIR");
  }
}

}  // namespace
}  // namespace fmte
