// ModelCatalog: loads every shipped config, case-insensitive lookup, "did you mean" suggestions,
// ResolveModel (id or path), DefaultDir and $FMTE_ETC_DIR.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fmte/model.h"

namespace fmte {
namespace {

std::string CatalogDir() { return std::string(FMTE_SOURCE_DIR) + "/etc/models"; }

TEST(ModelCatalogTest, LoadsEveryShippedConfig) {
  Result<ModelCatalog> catalog = ModelCatalog::LoadDir(CatalogDir());
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(CatalogDir())) {
    if (e.path().filename() == "config.json") ++files;
  }
  EXPECT_EQ(catalog->size(), files);
  EXPECT_GE(files, 48u);  // 34 primary + 14 secondary configs (etc/PROVENANCE-models.md)
  for (const std::string& id : catalog->Ids()) {
    const ModelArch* a = *catalog->Find(id);
    EXPECT_EQ(a->id, id);
    EXPECT_GT(a->Counts().total, 0) << id;
    EXPECT_EQ(a->block_kind_of_layer.size(), static_cast<size_t>(a->num_layers)) << id;
  }
}

TEST(ModelCatalogTest, FindIsCaseInsensitive) {
  ModelCatalog catalog = *ModelCatalog::LoadDir(CatalogDir());
  Result<const ModelArch*> a = catalog.Find("META-LLAMA/llama-3.1-8b");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->id, "meta-llama/Llama-3.1-8B");
}

// A bare name (litgpt's model_name, a hub id without its organisation) is the one catalog model of
// that name; a name two organisations share is not guessed.
TEST(ModelCatalogTest, BareNameOfOneModel) {
  ModelCatalog catalog = *ModelCatalog::LoadDir(CatalogDir());
  Result<const ModelArch*> a = catalog.Find("pragna-1b");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->id, "soketlabs/pragna-1b");
  EXPECT_EQ((*catalog.Find("Qwen3-8B"))->id, "Qwen/Qwen3-8B");
  ModelCatalog two;
  for (const char* id : {"a/tiny", "b/tiny"}) {
    ModelArch m = **catalog.Find("Qwen/Qwen3-0.6B");
    m.id = id;
    two.Add(std::move(m));
  }
  EXPECT_FALSE(two.Find("tiny").ok());
  EXPECT_TRUE(two.Find("a/tiny").ok());
}

// A checkpoint folder named after its base model (what fine-tuning scripts write: output_dir
// "<base>_<task>-<method>") is that model: separators '-', '_' and '.' alike, the longest catalog
// name wins, and a remainder that starts with a size is another model of the family.
TEST(ModelCatalogTest, NamedAfterACatalogModel) {
  ModelCatalog catalog = *ModelCatalog::LoadDir(CatalogDir());
  auto named = [&](std::string_view path) {
    Result<const ModelArch*> a = catalog.NamedAfter(path);
    return a.ok() ? (*a)->id : std::string();
  };
  EXPECT_EQ(named("../../data/jc/Qwen2-VL-2B-Instruct_EVQA-RAG5_LoRA-SFT"),
            "Qwen/Qwen2-VL-2B-Instruct");
  EXPECT_EQ(named("./work_dirs/v2_5/internvl2_5_8b_internlm2_5_7b_dynamic_res_stage1/"),
            "OpenGVLab/InternVL2_5-8B");
  EXPECT_EQ(named("/ckpt/gemma-2b-it-sft"), "google/gemma-2b-it");  // not gemma-2b: longest name
  EXPECT_EQ(named("/ckpt/Qwen2.5-7B-Instruct.dpo"), "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(named("./out/Meta-Llama-3-8B-Instruct-kto"), "meta-llama/Llama-3.1-8B");  // an alias
  EXPECT_EQ(named("/ckpt/gpt2-xl-finetuned"), "");    // GPT-2 XL is not GPT-2
  EXPECT_EQ(named("/ckpt/pythia-160m-1b-data"), "");  // a size right after the name
  EXPECT_EQ(named("/ckpt/pragna-1b"), "");            // the name alone: Find's, not a copy
  EXPECT_EQ(named("/ckpt/pragna-1bx"), "");           // no separator after the name
  EXPECT_EQ(named("/ckpt/my-model-v2"), "");
  EXPECT_EQ(named("acme/Llama-3.1-70B-v2"), "");  // a hub id: its own config is read, not guessed
}

TEST(ModelCatalogTest, AliasesResolveToTheSameTensors) {
  ModelCatalog catalog = *ModelCatalog::LoadDir(CatalogDir());
  EXPECT_GE(catalog.alias_count(), 15u);
  // Meta's model card gives 8.03B parameters for Meta-Llama-3-8B (and -Instruct), as for 3.1.
  for (const char* id : {"meta-llama/Meta-Llama-3-8B", "meta-llama/meta-llama-3-8b-instruct"}) {
    Result<const ModelArch*> a = catalog.Find(id);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ((*a)->id, "meta-llama/Llama-3.1-8B");
    EXPECT_NEAR(static_cast<double>((*a)->Counts().total), 8.03e9, 0.01e9) << id;
  }
  // Mistral-7B-v0.1: 7.24B parameters (Mistral's model card), the v0.2 tensors.
  Result<const ModelArch*> m = catalog.Find("mistralai/Mistral-7B-v0.1");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_NEAR(static_cast<double>((*m)->Counts().total), 7.24e9, 0.01e9);
  // An alias that is a catalog id, or that names no catalog model, is refused.
  EXPECT_FALSE(catalog.AddAlias("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B").ok());
  EXPECT_FALSE(catalog.AddAlias("org/new", "org/missing").ok());
  EXPECT_TRUE(catalog.AddAlias("org/new", "meta-llama/Llama-3.1-70B").ok());
  EXPECT_EQ((*catalog.Find("ORG/NEW"))->id, "meta-llama/Llama-3.1-70B");
}

TEST(ModelCatalogTest, MalformedAliasFileNamesTheLine) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("fmte_alias_" + std::to_string(::getpid()));
  fs::create_directories(dir / "org" / "m");
  fs::copy_file(CatalogDir() + "/meta-llama/Llama-3.1-8B/config.json", dir / "org/m/config.json",
                fs::copy_options::overwrite_existing);
  std::ofstream(dir / "aliases.tsv") << "# comment\norg/a\torg/m\tsame\norg/b org/m\n";
  Result<ModelCatalog> c = ModelCatalog::LoadDir(dir.string());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("aliases.tsv:3"), std::string::npos) << c.status().message();
  std::ofstream(dir / "aliases.tsv") << "org/a\torg/nothing\twhy\n";
  c = ModelCatalog::LoadDir(dir.string());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("org/nothing"), std::string::npos) << c.status().message();
  fs::remove_all(dir);
}

TEST(ModelCatalogTest, IdsAreTheFoldersAsListedBelowTheCatalog) {
  // A site keeps its own models in a folder elsewhere, linked into the catalog, and names the
  // catalog with a trailing slash: the ids are the folder names as the catalog lists them.
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("fmte_ids_" + std::to_string(::getpid()));
  fs::create_directories(root / "catalog" / "org" / "m");
  fs::create_directories(root / "elsewhere" / "site-models" / "big");
  const std::string config = CatalogDir() + "/meta-llama/Llama-3.1-8B/config.json";
  fs::copy_file(config, root / "catalog/org/m/config.json");
  fs::copy_file(config, root / "elsewhere/site-models/big/config.json");
  fs::create_directory_symlink(root / "elsewhere" / "site-models", root / "catalog" / "site");
  Result<ModelCatalog> c = ModelCatalog::LoadDir((root / "catalog").string() + "/");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->size(), 2u);
  EXPECT_TRUE(c->Find("org/m").ok());
  EXPECT_TRUE(c->Find("site/big").ok()) << "a linked folder keeps its name in the catalog";
  fs::remove_all(root);
}

TEST(ModelCatalogTest, NotFoundSuggestsClosestIds) {
  ModelCatalog catalog = *ModelCatalog::LoadDir(CatalogDir());
  struct Row {
    const char* typed;
    const char* expected_first;
  } rows[] = {
      {"meta-llama/Llama-3.1-8", "meta-llama/Llama-3.1-8B"},
      {"Llama-2-7b", "meta-llama/Llama-2-7b-hf"},
      {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"},
      {"qwen3-8", "Qwen/Qwen3-8B"},
      {"gpt-oss-20", "openai/gpt-oss-20b"},
  };
  for (const Row& r : rows) {
    std::vector<std::string> closest = catalog.Closest(r.typed);
    ASSERT_FALSE(closest.empty());
    EXPECT_EQ(closest[0], r.expected_first) << r.typed;
    Result<const ModelArch*> miss = catalog.Find(r.typed);
    ASSERT_FALSE(miss.ok());
    EXPECT_EQ(miss.status().code(), Status::Code::kNotFound);
    EXPECT_NE(miss.status().message().find(r.expected_first), std::string::npos)
        << miss.status().message();
  }
}

TEST(ModelCatalogTest, ResolveModelByIdOrPath) {
  ModelCatalog catalog = *ModelCatalog::LoadDir(CatalogDir());
  Result<ModelArch> by_id = ResolveModel(catalog, "microsoft/phi-2");
  ASSERT_TRUE(by_id.ok());
  Result<ModelArch> by_dir = ResolveModel(catalog, CatalogDir() + "/microsoft/phi-2");
  ASSERT_TRUE(by_dir.ok()) << by_dir.status().ToString();
  Result<ModelArch> by_file = ResolveModel(catalog, CatalogDir() + "/microsoft/phi-2/config.json");
  ASSERT_TRUE(by_file.ok()) << by_file.status().ToString();
  EXPECT_EQ(by_dir->Counts().total, by_id->Counts().total);
  EXPECT_EQ(by_file->Counts().total, by_id->Counts().total);

  Result<ModelArch> miss = ResolveModel(catalog, "microsoft/phi-3");
  ASSERT_FALSE(miss.ok());
  EXPECT_EQ(miss.status().code(), Status::Code::kNotFound);
  EXPECT_NE(miss.status().message().find("microsoft/phi-2"), std::string::npos);
}

TEST(ModelCatalogTest, AddAndMissingDir) {
  ModelCatalog catalog;
  ModelArch a;
  a.id = "Org/Name";
  catalog.Add(a);
  EXPECT_TRUE(catalog.Find("org/name").ok());
  EXPECT_FALSE(ModelCatalog::LoadDir("/nonexistent/fmte/models").ok());
}

TEST(ModelCatalogTest, DefaultDirHonoursEnvironment) {
  const char* old = std::getenv("FMTE_ETC_DIR");
  std::string saved = old ? old : "";
  setenv("FMTE_ETC_DIR", "/tmp/fmte-etc", 1);
  EXPECT_EQ(ModelCatalog::DefaultDir(), "/tmp/fmte-etc/models");
  unsetenv("FMTE_ETC_DIR");
  std::string compiled = ModelCatalog::DefaultDir();
  EXPECT_NE(compiled.find("/models"), std::string::npos);
  if (old) setenv("FMTE_ETC_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace fmte
