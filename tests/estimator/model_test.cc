// Parameter counts of the shipped catalog models against PUBLISHED figures.
//
// Oracles, in order of preference (docs/models.md, "Adding a model"):
//  (a) a checkpoint index `metadata.total_size` / bytes per dtype, named by repository and path;
//  (b) the Hugging Face Hub's safetensors parameter count (the exact number the Hub shows on the
//      model page), quoted in public GitHub files: `find_string "S"` in a comment means that
//      exact string S occurs there (several independent files quote each value);
//  (c) a paper or model card table;
//  (d) where nothing is published, a shape-by-shape derivation written beside the row.
// None of these values is printed by fmte itself.
#include "fmte/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace fmte {
namespace {

std::string CatalogDir() { return std::string(FMTE_SOURCE_DIR) + "/etc/models"; }

const ModelCatalog& Catalog() {
  static const ModelCatalog* catalog = [] {
    Result<ModelCatalog> c = ModelCatalog::LoadDir(CatalogDir());
    return c.ok() ? new ModelCatalog(std::move(c).value()) : new ModelCatalog();
  }();
  return *catalog;
}

struct PublishedCount {
  const char* id;
  int64_t total;
};

// clang-format off
const PublishedCount kPublished[] = {
    // Hub count (find_string "6,738,415,616", PEFT's "all params");
    // also total_size 13476839424 / 2 (find_string "\"total_size\": 13476839424").
    {"meta-llama/Llama-2-7b-hf", 6738415616},
    {"meta-llama/Llama-2-7b-chat-hf", 6738415616},   // same index as the base (7b-chat-hf, 2 shards).
    // LLaMA-1 7B: same tensors as Llama-2-7B (32000 vocab, 4096/11008/32 layers, MHA).
    {"huggyllama/llama-7b", 6738415616},
    // total_size 16060522496 / 2 (find_string "\"total_size\": 16060522496", many copies of the index).
    {"meta-llama/Llama-3.1-8B", 8030261248},
    // total_size 141107412992 / 2 (find_string "\"total_size\": 141107412992").
    {"meta-llama/Llama-3.1-70B", 70553706496},
    {"meta-llama/Llama-3.3-70B-Instruct", 70553706496},  // same shapes as 3.1-70B (config diff: none).
    // Hub count quoted as "Llama 3.1 ... 405B 405,853,388,800" (find_string "405,853,388,800").
    {"meta-llama/Llama-3.1-405B", 405853388800},
    // Hub count; single model.safetensors 2,471,628,800 payload bytes / 2 (find_string "1,235,814,400").
    {"meta-llama/Llama-3.2-1B-Instruct", 1235814400},
    // Derived: 28 x (q 3072*3072 + k,v 2*3072*1024 + o 3072*3072 + mlp 3*3072*8192 + norms 2*3072)
    //   = 28 x 100,669,440 = 2,818,744,320; + embed 128256*3072 = 394,002,432 (tied) + norm 3072.
    {"meta-llama/Llama-3.2-3B-Instruct", 3212749824},
    // Hub count (find_string "46,702,792,704");
    // also total_size 93405585408 / 2 (find_string "\"total_size\": 93405585408").
    {"mistralai/Mixtral-8x7B-v0.1", 46702792704},
    // Hub safetensors count of WizardLM-2-8x22B (a Mixtral-8x22B fine-tune with identical shapes),
    // find_string "140,620,634,112".
    {"mistralai/Mixtral-8x22B-v0.1", 140620634112},
    // total_size 14483464192 / 2 (find_string "\"total_size\": 14483464192").
    {"mistralai/Mistral-7B-Instruct-v0.2", 7241732096},
    // safetensors header: 291 tensors, 14,496,047,104 bytes (find_string "7,248,023,552").
    {"mistralai/Mistral-7B-Instruct-v0.3", 7248023552},
    // total_size 15231233024 / 2 (find_string "\"total_size\": 15231233024").
    {"Qwen/Qwen2.5-7B-Instruct", 7615616512},
    {"Qwen/Qwen2-7B-Instruct", 7615616512},  // Qwen2-7B: same shapes as Qwen2.5-7B.
    // total_size 65527752704 / 2 (find_string "\"total_size\": 65527752704").
    {"Qwen/Qwen2.5-32B", 32763876352},
    {"Qwen/Qwen2.5-Coder-32B-Instruct", 32763876352},
    // single model.safetensors: 290 BF16 tensors, 988,065,536 payload bytes (find_string "494,032,768").
    {"Qwen/Qwen2.5-0.5B", 494032768},
    // Qwen2.5-3B-Instruct loaded in transformers (same tensors as the base config in the catalog):
    // "Model parameters: 3,085,938,688" (find_string "3,085,938,688", several independent logs).
    {"Qwen/Qwen2.5-3B", 3085938688},
    // Hub counts (find_string "596,049,920", "1,720,574,976", "32,762,123,264").
    {"Qwen/Qwen3-0.6B", 596049920},
    {"Qwen/Qwen3-1.7B", 1720574976},
    {"Qwen/Qwen3-32B", 32762123264},
    // total_size 16381470720 / 2 (find_string "\"total_size\": 16381470720").
    {"Qwen/Qwen3-8B", 8190735360},
    // total_size 61064245248 / 2 (find_string "\"total_size\": 61064245248").
    {"Qwen/Qwen3-30B-A3B", 30532122624},
    // 235,093,634,560 params * 2 = total_size 470,187,269,120 (find_string "235,093,634,560").
    {"Qwen/Qwen3-235B-A22B", 235093634560},
    // model.num_parameters() of PhiForCausalLM; Hub count (find_string "2,779,683,840");
    // fp16 total_size 5559367680 / 2 (find_string "\"total_size\": 5559367680").
    {"microsoft/phi-2", 2779683840},
    // model.num_parameters() / print_trainable_parameters of Phi-3-mini (find_string
    // "3,821,079,552", several independent logs and tables).
    {"microsoft/Phi-3-mini-4k-instruct", 3821079552},
    // Summed numel of the loaded checkpoint, "number of parameters in
    // https://huggingface.co/stabilityai/stablelm-base-alpha-3b" (find_string "3637321728").
    {"stabilityai/stablelm-base-alpha-3b", 3637321728},
    // model.num_parameters() printed for microsoft/phi-1_5 (find_string "1,418,270,720").
    {"microsoft/phi-1_5", 1418270720},
    // Pythia paper / Hub: 162,322,944 "verified against the real checkpoint" (find_string "162,322,944").
    {"EleutherAI/pythia-160m", 162322944},
    // Summed tensor by tensor from the pinned weight file (find_string "6,050,882,784"). The model card's
    // 6,053,381,344 is not the HF checkpoint's count (it predates the HF conversion).
    {"EleutherAI/gpt-j-6b", 6050882784},
    // GPT-2 small, tied embedding counted once (find_string "124,439,808").
    {"openai-community/gpt2", 124439808},
    // Derived: 24 x (c_attn 1024*3072+3072 + c_proj 1024*1024+1024 + c_fc 1024*4096+4096
    //   + c_proj 4096*1024+1024 + 2 LayerNorms 4*1024) = 24 x 12,596,224 = 302,309,376;
    //   + wte 50257*1024 = 51,463,168 + wpe 1024*1024 = 1,048,576 + ln_f 2048 = 354,823,168.
    {"openai-community/gpt2-medium", 354823168},
    // Derived as above with h=1280, 36 layers: 36 x 19,677,440 = 708,387,840; + wte 64,328,960
    //   + wpe 1,310,720 + ln_f 2,560 = 774,030,080.
    {"openai-community/gpt2-large", 774030080},
    // Hub counts (find_string "1,100,048,384").
    {"TinyLlama/TinyLlama-1.1B-Chat-v1.0", 1100048384},
    // Hub count 15,706,484,224 BF16 parameters, 31.41 GB in 4 shards (find_string "15,706,484,224").
    {"deepseek-ai/DeepSeek-V2-Lite", 15706484224},
    // Exact checkpoint-header audit of the main model: 671026419200 (find_string "671026419200");
    // the MTP layer (model.layers.61) is excluded: it is in unloaded_checkpoint_params.
    {"deepseek-ai/DeepSeek-V3", 671026419200},
    // Logical parameters as laid out by the loader (MXFP4 experts dequantised):
    // find_string "20,914,757,184" and "116,829,156,672"; model card: 20.91B / 116.83B.
    {"openai/gpt-oss-20b", 20914757184},
    {"openai/gpt-oss-120b", 116829156672},
    // Derived (no published exact figure found): Llama-2-7B + vocab 32008 vs 32000: 8 more rows in
    // embed and lm_head: 6,738,415,616 + 2*8*4096 = 6,738,481,152.
    {"instructlab/granite-7b-lab", 6738481152},
    // Derived: Llama-2-7B with vocab 32016: 6,738,415,616 + 2*16*4096 = 6,738,546,688.
    {"codellama/CodeLlama-7b-hf", 6738546688},
    // Derived: per layer q,k,v,o 4*5120^2 = 104,857,600 + MLP 3*5120*13824 = 212,336,640 + norms
    //   2*5120 = 317,204,480; x 40 = 12,688,179,200; + embed and head 2*32016*5120 = 327,843,840
    //   + norm 5,120 = 13,016,028,160.
    {"codellama/CodeLlama-13b-hf", 13016028160},
    // Checkpoint index beside the config (HPMLL/llm-benchmark models/Llama-2-13b-hf): total_size
    // 52,063,467,520 fp32 bytes less 40 x 64 x 4 bytes of rotary inv_freq buffers, / 4.
    {"meta-llama/Llama-2-13b-hf", 13015864320},
    // Derived: 32 x (q 4608*4608+4608 + k,v 2*(4608*512+512) + o 4608*4608+4608 + c_fc
    //   4608*18432+18432 + c_proj 18432*4608+4608 + 2 LayerNorms 4*4608) = 32 x 217,106,944
    //   = 6,947,422,208; + embed 49152*4608 = 226,492,416 (tied) + norm 9,216 = 7,173,923,840
    //   (paper: "7B: 7.17B").
    {"bigcode/starcoder2-7b", 7173923840},
    // Derived: attention 4 x 2048^2 = 16,777,216 and norms 4,096 per layer; layer 0 dense MLP
    //   3*2048*10944 = 67,239,936; layers 1..27 MoE: gate 64*2048 = 131,072 + 64 experts x
    //   3*2048*1408 (= 8,650,752) = 553,648,128 + shared 3*2048*2816 = 17,301,504.
    //   0: 84,021,248; 1..27: 27 x 587,862,016 = 15,872,274,432; + embed and head 2 x 102400*2048
    //   = 419,430,400 + norm 2,048 -> 16,375,728,128 (model card: "16.4B").
    {"deepseek-ai/deepseek-moe-16b", 16375728128},
    // Multimodal models: the summed numel of the whole model (language model, vision encoder and
    // projector), the Hub's safetensors counts quoted in many independent files:
    // find_string "4,300,079,472", "27,432,406,640", "999,885,952" (text-only Gemma3ForCausalLM),
    // "8,292,166,656", "3,754,622,976", "24,011,361,280".
    {"google/gemma-3-4b-it", 4300079472},
    {"google/gemma-3-27b-it", 27432406640},
    {"google/gemma-3-1b-it", 999885952},
    {"Qwen/Qwen2.5-VL-7B-Instruct", 8292166656},
    {"Qwen/Qwen2.5-VL-3B-Instruct", 3754622976},
    // Qwen2-VL: the Hub's safetensors BF16 parameter_count as listed by floschne/gimmick
    // (src/gimmick/models/__init__.py @ 81c06a5e, HfApi().get_safetensors_metadata); the 2B's
    // also as Qwen2-VL-2B's model.safetensors.index.json total_size 4,417,971,200 bytes / 2.
    {"Qwen/Qwen2-VL-7B-Instruct", 8291375616},
    {"Qwen/Qwen2-VL-2B-Instruct", 2208985600},
    // InternVL2.5-78B (internvl_chat: InternViT-6B + Qwen2.5-72B): the same list's 78,408,318,336.
    {"OpenGVLab/InternVL2_5-78B", 78408318336},
    {"mistralai/Mistral-Small-3.1-24B-Instruct-2503", 24011361280},
    {"mistralai/Mistral-Small-3.2-24B-Instruct-2506", 24011361280},  // alias: same tensors
    // Hub / safetensors counts: find_string "14,768,307,200", "4,022,468,096" (also quoted for
    // Qwen3-4B-Instruct-2507 from the Hub API), "72,706,203,648", "1,543,714,304".
    {"Qwen/Qwen3-14B", 14768307200},
    {"Qwen/Qwen3-4B", 4022468096},
    {"Qwen/Qwen3-4B-Instruct-2507", 4022468096},
    {"Qwen/Qwen2.5-72B-Instruct", 72706203648},
    {"Qwen/Qwen2.5-1.5B-Instruct", 1543714304},
    // Safetensors metadata counts: find_string "12,247,782,400", "34,388,917,248".
    {"mistralai/Mistral-Nemo-Instruct-2407", 12247782400},
    {"01-ai/Yi-34B", 34388917248},
    // Derived (no published exact figure found): per layer q,o 2*8192^2 + k,v 2*8192*1024 + MLP
    //   3*8192*22016 + norms 2*8192 = 692,076,544; x 48 = 33,219,674,112; + embed and head
    //   2*32000*8192 = 524,288,000 + norm 8,192 = 33,743,970,304.
    {"codellama/CodeLlama-34b-Instruct-hf", 33743970304},
    // The Hub's safetensors.parameters.BF16 of Llama-4-Scout-17B-16E-Instruct, quoted publicly
    // (find_string "108,641,793,536"; one file splits it as text 107,769,861,120 + vision and
    // projector 871,932,416, as fmte does).
    {"meta-llama/Llama-4-Scout-17B-16E-Instruct", 108641793536},
    // Safetensors metadata counts: find_string "8,537,680,896"; "2,614,341,888" (a table of
    // google/gemma-2-2b, also quoted for gemma-2-2b-it).
    {"google/gemma-7b", 8537680896},
    {"google/gemma-2-2b", 2614341888},
    // Nemotron 3 Nano (nemotron_h: 23 Mamba-2, 23 MoE, 6 attention layers): llama.cpp's n_params of
    // its GGUF conversions, quoted in several public files (find_string "31577940288"); a public
    // Hub analysis gives 31,577,937,344 without the 23 x 128 router correction-bias buffers.
    {"nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31577940288},
    // Mistral Small 3 (2501): its model.safetensors.index.json total_size 47,144,806,400 bytes in
    // BF16 (a copy in OpenMOSE/RWKV-LM-RLHF) / 2; a Devstral-Small-2507 mirror's total_parameters
    // (find_string "23572403200") gives the same for the same text tensors.
    {"mistralai/Mistral-Small-24B-Instruct-2501", 23572403200},
    {"mistralai/Devstral-Small-2505", 23572403200},  // alias: the same tensors
    // The model card's "Parameters 8,019,808,256" (also a Hub API safetensors total quoted in a
    // public compliance table).
    {"mistralai/Ministral-8B-Instruct-2410", 8019808256},
    // The safetensors index's total_parameters of Olmo-3 7B, quoted for its base, SFT, DPO,
    // Instruct and Think checkpoints (find_string "7,298,011,136").
    {"allenai/Olmo-3-7B-Instruct", 7298011136},
    {"allenai/Olmo-3-7B-Instruct-SFT", 7298011136},  // alias
    // A public analysis report of the loaded model: "Parameters: 8,053,338,176" (with the two
    // xIELU scalars alpha_p and alpha_n of each layer's MLP).
    {"swiss-ai/Apertus-8B-Instruct-2509", 8053338176},
};
// clang-format on

TEST(ModelCountTest, MatchesPublishedTotals) {
  ASSERT_GT(Catalog().size(), 0u);
  for (const PublishedCount& p : kPublished) {
    Result<const ModelArch*> arch = Catalog().Find(p.id);
    ASSERT_TRUE(arch.ok()) << arch.status().ToString();
    EXPECT_EQ((*arch)->Counts().total, p.total) << p.id;
  }
}

// Papers that publish embedding / non-embedding splits. Their embedding rows use the 256,128-entry
// Gemini vocabulary, while the released checkpoints have 256,000 rows, so only the non-embedding
// (blocks + final norm) part is comparable.
TEST(ModelCountTest, GemmaNonEmbeddingMatchesPapers) {
  struct Row {
    const char* id;
    int64_t non_embedding;
  } rows[] = {
      {"google/gemma-2b", 1981884416},  // Gemma report (arXiv:2403.08295) Table 2.
      {"google/gemma-2b-it", 1981884416},
      {"google/gemma-2-9b", 8324201984},  // Gemma 2 report (arXiv:2408.00118) Table 2.
      {"google/gemma-2-27b", 26047480320},
  };
  for (const Row& r : rows) {
    const ModelArch* a = *Catalog().Find(r.id);
    ParamCounts c = a->Counts();
    EXPECT_EQ(c.blocks + c.final_norm, r.non_embedding) << r.id;
    EXPECT_EQ(c.lm_head, 0) << r.id;  // tied
    EXPECT_EQ(c.embedding, 256000 * a->hidden_size) << r.id;
  }
}

// Older checkpoints store the tied lm_head as its own tensor, so their index total_size counts the
// embedding twice: total_size / bytes = Counts().total + vocab * hidden.
TEST(ModelCountTest, CheckpointsWithDuplicatedTiedHead) {
  struct Row {
    const char* id;
    int64_t total_size_bytes;
    int bytes_per_param;
  } rows[] = {
      // Decentralised-AI/falcon-40b pytorch_model.bin.index.json (HF mirror, commit 56dde4b), bf16.
      {"tiiuae/falcon-40b", 83671941120, 2},
      // ananddhanabal/gemma model.safetensors.index.json (HF mirror of gemma-2b-it, float16 branch
      // commit 27b76a6), fp16.
      {"google/gemma-2b-it", 6060920832, 2},
  };
  for (const Row& r : rows) {
    const ModelArch* a = *Catalog().Find(r.id);
    ASSERT_TRUE(a->tie_word_embeddings) << r.id;
    EXPECT_EQ(a->Counts().total + a->vocab_size * a->hidden_size,
              r.total_size_bytes / r.bytes_per_param)
        << r.id;
  }
}

// Falcon-7B: no index in the mirror (2 .bin shards without index). Derived shape by shape:
// qkv 4544 -> (71 + 2*1)*64 = 4672 (multi-query), dense 4544^2, MLP 2*4544*18176, one LayerNorm
// 2*4544, no biases: per layer 207,070,080; 32 layers 6,626,242,560; + embed 65024*4544 =
// 295,469,056 (tied) + ln_f 9,088 = 6,921,720,704. The Hub's "7.22B" adds the stored duplicate
// head.
TEST(ModelCountTest, FalconSevenDerived) {
  const ModelArch* a = *Catalog().Find("tiiuae/falcon-7b");
  EXPECT_EQ(a->Counts().total, 6921720704);
  EXPECT_EQ(a->Counts().total + 65024 * 4544, 7217189760);  // Hub "7.22B params"
}

// DeepSeek-V3's published "685B" = 671B main model + 14B multi-token-prediction module.
TEST(ModelCountTest, DeepSeekV3MtpIsReportedSeparately) {
  const ModelArch* a = *Catalog().Find("deepseek-ai/DeepSeek-V3");
  double total_b = (a->Counts().total + a->unloaded_checkpoint_params) / 1e9;
  EXPECT_NEAR(total_b, 685, 0.6);
  EXPECT_NEAR(a->unloaded_checkpoint_params / 1e9, 14, 0.6);
  // DeepSeek-V3 report: 37B activated per token.
  EXPECT_NEAR(a->Counts().active / 1e9, 37, 0.6);
}

// Active parameters of MoE models against the model cards (rounded figures).
TEST(ModelCountTest, ActiveParametersOfMoe) {
  struct Row {
    const char* id;
    double active_b;
    double tolerance_b;
  } rows[] = {
      {"mistralai/Mixtral-8x7B-v0.1", 12.9, 0.05},   // Mistral: "12.9B active"
      {"mistralai/Mixtral-8x22B-v0.1", 39.1, 0.1},   // Mistral: "39B active of 141B"
      {"Qwen/Qwen3-30B-A3B", 3.3, 0.06},             // Qwen3 card: "3.3B activated"
      {"Qwen/Qwen3-235B-A22B", 22.0, 0.2},           // Qwen3 card: "22B activated"
      {"deepseek-ai/DeepSeek-V2-Lite", 2.66, 0.05},  // "active 2.66B" (torchtitan run, see above)
  };
  for (const Row& r : rows) {
    const ModelArch* a = *Catalog().Find(r.id);
    EXPECT_NEAR(a->Counts().active / 1e9, r.active_b, r.tolerance_b) << r.id;
  }
  // gpt-oss model card counts active parameters without the input embedding: 3.61B and 5.13B.
  for (auto [id, card_b] : {std::pair{"openai/gpt-oss-20b", 3.61}, {"openai/gpt-oss-120b", 5.13}}) {
    const ModelArch* a = *Catalog().Find(id);
    EXPECT_NEAR((a->Counts().active - a->embedding_params) / 1e9, card_b, 0.01) << id;
  }
}

// Models published only with rounded totals. soketlabs/pragna-1b: "1.25 billion parameters" (Soket
// AI's blog, soket.ai/blogs/pragna_1b) and one bf16 model.safetensors of "2.51 GB" (the Hub's file
// listing), which a vocabulary of 67,991 (a derivative's config) would not reach.
// OpenGVLab/InternVL2_5-8B: InternViT-300M + InternLM2.5-7B, "8.1B" on the InternVL2-8B card
// (same parts) and "8.08B params" on the Hub's widget of same-architecture internvl_chat 8B repos.
TEST(ModelCountTest, RoundedPublishedTotals) {
  const ModelArch* pragna = *Catalog().Find("soketlabs/pragna-1b");
  EXPECT_NEAR(pragna->Counts().total / 1e9, 1.25, 0.005);
  EXPECT_NEAR(2.0 * pragna->Counts().total / 1e9, 2.51, 0.005);
  const ModelArch* internvl = *Catalog().Find("OpenGVLab/InternVL2_5-8B");
  EXPECT_NEAR(internvl->Counts().total / 1e9, 8.08, 0.005);
}

}  // namespace
}  // namespace fmte

namespace fmte {
namespace {

// Published splits of multimodal models into their vision encoder (with its projector) and the
// rest: gemma-3-4b-it vision 419,816,304 and language blocks 3,209,010,688 with the final norm
// (find_string "419,816,304", a table of embedding / vision / blocks per Gemma-3 size);
// Qwen2.5-VL-3B-Instruct "Full vision parameters: 668,684,288" (find_string "668,684,288").
TEST(ModelCountTest, MultimodalVisionEncoderMatchesPublishedSplits) {
  const ModelArch* gemma = *Catalog().Find("google/gemma-3-4b-it");
  EXPECT_EQ(gemma->Counts().vision, 419816304);
  EXPECT_EQ(gemma->Counts().blocks + gemma->Counts().final_norm, 3209010688);
  EXPECT_EQ(gemma->multimodal_type, "gemma3");
  EXPECT_EQ(gemma->model_type, "gemma3_text");
  const ModelArch* qwen = *Catalog().Find("Qwen/Qwen2.5-VL-3B-Instruct");
  EXPECT_EQ(qwen->Counts().vision, 668684288);
  EXPECT_EQ((*Catalog().Find("google/gemma-3-1b-it"))->Counts().vision, 0);
}

// Llama 4: Scout's split into language model and vision (see kPublished) and its active
// parameters (one routed expert, the shared expert and everything else, the vision tower
// included); Maverick is Scout with 128 experts on every other layer and dense layers between
// (interleave_moe_layer_step 2, intermediate_size_mlp 16384): its checkpoint total
// "401,583,781,376" (find_string) checks the dense-layer path.
TEST(ModelCountTest, LlamaFourSplitsAndMaverick) {
  const ModelArch* scout = *Catalog().Find("meta-llama/Llama-4-Scout-17B-16E-Instruct");
  EXPECT_EQ(scout->Counts().vision, 871932416);
  EXPECT_EQ(scout->Counts().total - scout->Counts().vision, 107769861120);
  EXPECT_EQ(scout->Counts().active, 18044827136);
  Result<ModelArch> maverick = ParseModelConfig(
      R"({"model_type": "llama4", "text_config": {"model_type": "llama4_text",
            "num_local_experts": 128, "interleave_moe_layer_step": 2},
          "vision_config": {"hidden_size": 1408, "image_size": 336, "vision_output_dim": 4096}})",
      "x");
  ASSERT_TRUE(maverick.ok()) << maverick.status().ToString();
  EXPECT_EQ(maverick->Counts().total, 401583781376);
}

// Llama-3.2-11B-Vision: the language model is MllamaTextConfig's default (Llama-3.1-8B's shapes,
// 40 layers of which 8 cross-attend to the image) and the encoder MllamaVisionConfig's at the 560
// pixels the checkpoint uses; published count "10,670,220,835" (find_string: NVIDIA's model spec
// and a table of "meta-llama/llama-3.2-11b-vision-instruct"). A cross-attention layer list that
// names a layer the model does not have is an error naming the key.
TEST(ModelCountTest, LlamaVisionMatchesThePublishedCount) {
  Result<ModelArch> a = ParseModelConfig(
      R"({"model_type": "mllama", "text_config": {"model_type": "mllama_text_model"},
          "vision_config": {"model_type": "mllama_vision_model", "image_size": 560}})",
      "x");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->Counts().total, 10670220835);
  EXPECT_EQ(a->multimodal_type, "mllama");
  EXPECT_EQ(std::count(a->block_kind_of_layer.begin(), a->block_kind_of_layer.end(), 1), 8);
  auto bad = ParseModelConfig(
      R"({"model_type": "mllama", "text_config": {"cross_attention_layers": [3, 40]}})", "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cross_attention_layers"), std::string::npos)
      << bad.status().message();
}

// Gemma-3-4B's published text_config names neither its vocabulary, heads nor head size: they are
// Gemma3TextConfig's defaults (transformers configuration_gemma3.py: vocab_size 262208, 8 heads,
// 4 KV heads, head_dim 256, sliding_window_pattern 6), which the published count above confirms.
// Five of each six layers slide (Gemma 3 report: 5 local layers per global one).
TEST(ModelConfigTest, SparseMultimodalConfigTakesTheClassDefaults) {
  const ModelArch* a = *Catalog().Find("google/gemma-3-4b-it");
  EXPECT_EQ(a->vocab_size, 262208);
  EXPECT_EQ(a->num_heads, 8);
  EXPECT_EQ(a->num_kv_heads, 4);
  EXPECT_EQ(a->head_dim, 256);
  EXPECT_TRUE(a->tie_word_embeddings);
  EXPECT_EQ(a->sliding_window, 1024);
  EXPECT_EQ(a->sliding_window_layers, 34 - 34 / 6);
  EXPECT_EQ(a->torch_dtype, "bfloat16");  // the top level's: text_config names none
}

TEST(ModelConfigTest, MultimodalConfigErrorsNameTheSubConfig) {
  const auto parse = [](const std::string& text) { return ParseModelConfig(text, "x"); };
  // A vision_config that is not an object, a text_config that is another multimodal model, and a
  // vision encoder key of the wrong type: each error names where.
  auto bad_vision = parse(R"({"model_type": "gemma3", "vision_config": 7})");
  ASSERT_FALSE(bad_vision.ok());
  EXPECT_NE(bad_vision.status().message().find("vision_config: expected an object"),
            std::string::npos)
      << bad_vision.status().message();
  auto nested = parse(R"({"model_type": "llava", "text_config": {"model_type": "gemma3"}})");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("is not a language model"), std::string::npos)
      << nested.status().message();
  auto bad_key = parse(R"({"model_type": "qwen2_5_vl", "hidden_size": 2048, "num_hidden_layers": 2,
                "num_attention_heads": 16, "num_key_value_heads": 2, "vocab_size": 1000,
                "intermediate_size": 11008, "vision_config": {"depth": "32"}})");
  ASSERT_FALSE(bad_key.ok());
  EXPECT_NE(bad_key.status().message().find("vision_config"), std::string::npos)
      << bad_key.status().message();
  EXPECT_NE(bad_key.status().message().find("depth"), std::string::npos)
      << bad_key.status().message();
  // Dimensions no real encoder has (each within the 2^31 a key may hold; their products would
  // overflow 64 bits) are refused by name, with no undefined arithmetic on the way.
  auto huge = parse(R"({"model_type": "gemma3", "vision_config": {"hidden_size": 2147483647,
      "intermediate_size": 2147483647, "num_hidden_layers": 99999, "image_size": 2147483647,
      "patch_size": 1}})");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("10^15"), std::string::npos) << huge.status().message();
  // InternVL: its language model is llm_config (here InternLM2, whose wqkv and wo carry biases
  // when `bias` is set), and a downsample_ratio the pixel shuffle cannot do is refused by name.
  const std::string internvl =
      R"({"model_type": "internvl_chat", "vision_config": {"model_type": "intern_vit_6b",
          "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
          "num_attention_heads": 16, "image_size": 448, "norm_type": "layer_norm",
          "qkv_bias": true, "qk_normalization": false}, )";
  const std::string internlm2 =
      R"("llm_config": {"model_type": "internlm2", "hidden_size": 4096, "num_hidden_layers": 32,
          "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
          "vocab_size": 92553, "tie_word_embeddings": false)";
  auto chat = parse(internvl + internlm2 + R"(, "bias": false}})");
  ASSERT_TRUE(chat.ok()) << chat.status().ToString();
  EXPECT_EQ(chat->multimodal_type, "internvl_chat");
  EXPECT_EQ(chat->num_layers, 32);
  auto biased = parse(internvl + internlm2 + R"(, "bias": true}})");
  ASSERT_TRUE(biased.ok()) << biased.status().ToString();
  EXPECT_EQ(biased->Counts().total - chat->Counts().total, 32 * ((4096 + 2 * 1024) + 4096));
  // InternLM2Config's own default is bias true: a config that does not say is counted with them.
  auto unsaid = parse(internvl + internlm2 + "}}");
  ASSERT_TRUE(unsaid.ok()) << unsaid.status().ToString();
  EXPECT_EQ(unsaid->Counts().total, biased->Counts().total);
  auto ratio = parse(internvl + internlm2 + R"(}, "downsample_ratio": 0})");
  ASSERT_FALSE(ratio.ok());
  EXPECT_NE(ratio.status().message().find("downsample_ratio"), std::string::npos)
      << ratio.status().message();
  // An unknown model_type is refused with the types fmte reads, the multimodal ones included
  // (each parsed above or in the catalog).
  auto refused = parse(R"({"model_type": "mystery"})");
  ASSERT_FALSE(refused.ok());
  for (const char* type : {"gemma3", "qwen2_vl", "mistral3", "llava", "mllama", "internvl_chat"})
    EXPECT_NE(refused.status().message().find(type), std::string::npos)
        << type << ": " << refused.status().message();
  // An unknown encoder is refused, not guessed.
  auto unknown = parse(R"({"model_type": "llava", "vision_config": {"model_type": "mystery"}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'mystery'"), std::string::npos)
      << unknown.status().message();
}

// Llama-shaped families with their own biases, norms and MLPs, each from its published dimensions
// (config.json values, as quoted in public files) against its published count (the safetensors
// or model.parameters() count; find_string the number):
//   Apertus-8B-Instruct-2509 "8,053,338,176" (model.parameters(); its safetensors also hold the
//     xIELU beta/eps buffers: 8,053,338,240), Seed-OSS-36B "36,151,104,512" (index metadata),
//   SmolLM3-3B "3,075,098,624", Ministral-8B-Instruct-2410 "8,019,808,256", GLM-4-9B-0414
//   "9,400,279,040", aya-expanse-8b (cohere) "8028033024", stablelm-2-1_6b "1,644,515,328".
TEST(ModelCountTest, LlamaVariantsMatchPublishedCounts) {
  struct Row {
    const char* config;
    int64_t total;
  } rows[] = {
      // InternLM2.5 chat models (vocabulary 92544, untied, "bias": false as published): the Hub's
      // safetensors counts 1,889,110,016, 7,737,708,544 and 19,861,149,696 (github
      // floschne/gimmick's list; the 7B also "7737708544 (7.7B) parameters" printed by
      // InternLM's own chat demo).
      {R"({"model_type": "internlm2", "vocab_size": 92544, "hidden_size": 2048,
           "intermediate_size": 8192, "num_hidden_layers": 24, "num_attention_heads": 16,
           "num_key_value_heads": 8, "bias": false, "tie_word_embeddings": false})",
       1889110016},
      {R"({"model_type": "internlm2", "vocab_size": 92544, "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "bias": false, "tie_word_embeddings": false})",
       7737708544},
      {R"({"model_type": "internlm2", "vocab_size": 92544, "hidden_size": 6144,
           "intermediate_size": 16384, "num_hidden_layers": 48, "num_attention_heads": 48,
           "num_key_value_heads": 8, "bias": false, "tie_word_embeddings": false})",
       19861149696},
      {R"({"model_type": "apertus", "vocab_size": 131072, "hidden_size": 4096,
           "intermediate_size": 21504, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "hidden_act": "xielu", "tie_word_embeddings": false})",
       8053338176},
      {R"({"model_type": "seed_oss", "vocab_size": 155136, "hidden_size": 5120,
           "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 80,
           "num_key_value_heads": 8, "head_dim": 128, "attention_bias": true,
           "attention_out_bias": false, "mlp_bias": false, "tie_word_embeddings": false})",
       36151104512},
      {R"({"model_type": "smollm3", "vocab_size": 128256, "hidden_size": 2048,
           "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16,
           "num_key_value_heads": 4})",
       3075098624},
      {R"({"model_type": "ministral", "vocab_size": 131072, "hidden_size": 4096,
           "intermediate_size": 12288, "num_hidden_layers": 36, "num_attention_heads": 32,
           "num_key_value_heads": 8, "head_dim": 128, "tie_word_embeddings": false})",
       8019808256},
      {R"({"model_type": "glm4", "vocab_size": 151552, "hidden_size": 4096,
           "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32,
           "num_key_value_heads": 2, "head_dim": 128, "attention_bias": true,
           "tie_word_embeddings": false})",
       9400279040},
      {R"({"model_type": "cohere", "vocab_size": 256000, "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "use_qk_norm": false})",
       8028033024},
      {R"({"model_type": "stablelm", "vocab_size": 100352, "hidden_size": 2048,
           "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 32,
           "num_key_value_heads": 32, "use_qkv_bias": true, "use_parallel_residual": false,
           "qk_layernorm": false, "tie_word_embeddings": false})",
       1644515328},
  };
  for (const Row& row : rows) {
    Result<ModelArch> a = ParseModelConfig(row.config, "x");
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(a->Counts().total, row.total) << a->model_type;
  }
  // Cohere's use_qk_norm (Command-R+): q_norm = CohereLayerNorm((num_heads, head_dim)) and k_norm =
  // CohereLayerNorm((num_key_value_heads, head_dim)), weights only (transformers
  // modeling_cohere.py), so a layer gains (heads + kv_heads) x head_dim parameters; no published
  // count was found, so this is the derivation: Command-R+'s 64 layers x (96 + 8) x 128.
  const auto cohere = [](bool qk_norm) {
    return ParseModelConfig(std::string(R"({"model_type": "cohere", "vocab_size": 256000,
        "hidden_size": 12288, "intermediate_size": 33792, "num_hidden_layers": 64,
        "num_attention_heads": 96, "num_key_value_heads": 8, "use_qk_norm": )") +
                                (qk_norm ? "true}" : "false}"),
                            "x");
  };
  Result<ModelArch> with = cohere(true), without = cohere(false);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_EQ(with->Counts().total - without->Counts().total, int64_t{64} * (96 + 8) * 128);
}

// OLMo-2 and OLMo-3 7B have the same tensors: 32 layers, hidden 4096, MLP 11008, 32 heads,
// vocabulary 100352, untied (a published table of OLMo-2 shapes, find_string
// "allenai/OLMo-2-1124-7B` | `7df9a825"), and 7,298,617,344 parameters each (safetensors metadata;
// find_string "7,298,617,344", which also names the OLMo-3 7B baseline). The configs are written
// here from those published dimensions; q_norm/k_norm span the whole projection, so a GQA variant
// shows the k_norm width.
TEST(ModelCountTest, OlmoTwoAndThreeMatchThePublishedCount) {
  for (const char* type : {"olmo2", "olmo3"}) {
    const bool olmo3 = std::string(type) == "olmo3";
    const std::string text = std::string(R"({"model_type": ")") + type + R"(",
        "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 100352,
        "tie_word_embeddings": false)" +
                             (olmo3 ? R"(, "sliding_window": 4096})" : "}");
    Result<ModelArch> a = ParseModelConfig(text, type);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(a->Counts().total, 7298617344) << type;
    // OLMo-3: three sliding layers for every full one (Olmo3Config's default layer_types).
    EXPECT_EQ(a->sliding_window_layers, olmo3 ? 24 : 0) << type;
  }
}

}  // namespace
}  // namespace fmte
