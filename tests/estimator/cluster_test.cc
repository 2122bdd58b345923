// Cluster configurations (cluster.h): parsing, errors naming the key, the shipped etc/clusters.
#include "fmte/cluster.h"

#include <gtest/gtest.h>

namespace fmte {
namespace {

TEST(Cluster, ParsesEveryKey) {
  auto c = ParseClusterJson(
      R"({"name":"x","gpu":"A100-SXM4-40GB","gpus_per_node":4,"intra_node_gbps":300,
      "inter_node_gbps":800,"pcie_gbps":25,"host_memory_gbps":100,"storage_gbps":5,"startup_s":120,
      "checkpoint_fixed_s":30,"source":"s"})",
      "x.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->gpus_per_node, 4);
  EXPECT_EQ(c->inter_node_gbps, 800);
  EXPECT_EQ(c->startup_s, 120);
  TrainingJob j;
  EXPECT_EQ(c->InterNodeGbps(j), 800);
  j.inter_node_gbps = 100;  // --inter-node-gbps overrides the configuration
  EXPECT_EQ(c->InterNodeGbps(j), 100);
}

TEST(Cluster, ErrorsNameTheKey) {
  struct Case {
    const char* json;
    const char* needle;
  };
  const Case cases[] = {{R"({"gpu":"a"})", "\"name\""},
                        {R"({"name":"a","gpus_per_node":0})", "gpus_per_node"},
                        {R"({"name":"a","gpus_per_node":2.5})", "gpus_per_node"},
                        // Found by fuzz_cluster_catalog: beyond int64_t (was converted first).
                        {R"({"name":"a","gpus_per_node":16888888888888882300})", "gpus_per_node"},
                        {R"({"name":"a","storage_gbps":-1})", "storage_gbps"},
                        {R"({"name":"a","storage_gbs":1})", "unknown key \"storage_gbs\""},
                        {R"({"name":)", "not valid JSON"}};
  for (const Case& c : cases) {
    auto r = ParseClusterJson(c.json, "f.json");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos) << r.status().message();
  }
}

TEST(Cluster, ShippedConfigsLoadAndResolve) {
  auto cat = ClusterCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/clusters");
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  auto p = cat->Find("Perlmutter");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->gpus_per_node, 4);  // NERSC: 4 A100 per GPU node
  GpuSpec g;
  g.name = "A100-SXM4-80GB";
  TrainingJob j;
  j.cluster = "nowhere";
  auto r = ResolveCluster(*cat, j, g);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--cluster"), std::string::npos);
  j.cluster = "";
  auto d = ResolveCluster(*cat, j, g);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->startup_s, 300);  // FM Training Estimator seed's start-up
}

}  // namespace
}  // namespace fmte
