// ParseJobRequest on the realistic scripts of tests/data/scripts (expected values are read off each
// script's own launch line), the precedence SPANK > #FMTE > launcher > Slurm, SPANK option names
// and validation, and tres_per_* parsing (string forms of docs/slurm.md §7.1).
#include "fmte/request.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fmte {
namespace {

std::string ReadScript(const std::string& name) {
  std::ifstream in(std::string(FMTE_SOURCE_DIR) + "/tests/data/scripts/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

JobRequest Parse(std::string_view script, const SlurmFacts& facts = {},
                 const std::vector<std::pair<std::string, std::string>>& spank = {}) {
  return ParseJobRequest(script, spank, facts);
}

struct ScriptCase {
  const char* file;
  const char* tres_per_node;
  int64_t nodes;
  const char* launcher;
  const char* model;
  Method method;
  Precision precision;
  Framework framework;
  Sharding sharding;
  Checkpointing ac;
  int64_t micro_batch, grad_accum, seq_len, tp, pp, gpus;
};

TEST(RequestTest, RealisticScripts) {
  const ScriptCase kCases[] = {
      {"trl_sft_lora_llama8b.sh", "gres:gpu:a100:4", 1, "torchrun", "meta-llama/Llama-3.1-8B",
       Method::kLora, Precision::kAmpBf16, Framework::kHf, Sharding::kNone, Checkpointing::kFull, 2,
       8, 4096, 1, 1, 4},
      {"hf_fsdp_full_llama8b.sh", "gres:gpu:8", 1, "torchrun", "meta-llama/Llama-3.1-8B",
       Method::kFull, Precision::kAmpBf16, Framework::kHf, Sharding::kFsdpFull,
       Checkpointing::kFull, 1, 4, 2048, 1, 1, 8},
      {"deepspeed_zero3_llama70b.sh", "gres:gpu:a100:8", 2, "deepspeed", "meta-llama/Llama-3.1-70B",
       Method::kFull, Precision::kMixedBf16, Framework::kDeepspeed, Sharding::kZero3,
       Checkpointing::kFull, 1, 16, 4096, 1, 1, 16},
      {"qlora_single_gpu.sh", "gres:gpu:1", 0, "python", "mistralai/Mistral-7B-Instruct-v0.2",
       Method::kQlora, Precision::kAmpBf16, Framework::kHf, Sharding::kNone, Checkpointing::kNone,
       4, 4, 2048, 1, 1, 1},
      {"torchtune_lora_single.sh", "gres:gpu:h100:1", 0, "tune", "meta-llama/Llama-3.1-8B",
       Method::kLora, Precision::kPureBf16, Framework::kTorchtune, Sharding::kNone,
       Checkpointing::kFull, 4, 8, 8192, 1, 1, 1},
      {"torchtune_full_distributed_70b.sh", "gres:gpu:h100:8", 1, "tune",
       "meta-llama/Llama-3.3-70B-Instruct", Method::kFull, Precision::kPureBf16,
       Framework::kTorchtune, Sharding::kFsdpFull, Checkpointing::kFull, 2, 1, 4096, 1, 1, 8},
      // Megatron: grad-accum = global 256 / (micro 1 x dp 16/(4x2)=2) = 128.
      {"megatron_gpt_arrays.sh", "gres:gpu:8", 2, "megatron", "megatron-gpt-40l-5120h",
       Method::kFull, Precision::kMixedBf16, Framework::kMegatron, Sharding::kZero1,
       Checkpointing::kSelective, 1, 128, 4096, 4, 2, 16},
      // 64 / (1 x 8/2) = 16.
      {"megatron_llama_flat.sh", "gres:gpu:h100:8", 1, "megatron", "megatron-llama-32l-4096h",
       Method::kFull, Precision::kMixedBf16, Framework::kMegatron, Sharding::kZero1,
       Checkpointing::kFull, 1, 16, 8192, 2, 1, 8},
      {"fmte_lines_custom.sh", "gres:gpu:h100:2", 0, "", "Qwen/Qwen2.5-7B-Instruct", Method::kFull,
       Precision::kMixedBf16, Framework::kFsdp, Sharding::kFsdpFull, Checkpointing::kFull, 1, 16,
       8192, 1, 1, 2},
      {"hf_full_70b_ddp_too_big.sh", "gres:gpu:a100:4", 0, "accelerate", "meta-llama/Llama-3.1-70B",
       Method::kFull, Precision::kAmpBf16, Framework::kHf, Sharding::kNone, Checkpointing::kNone, 1,
       8, 2048, 1, 1, 4},
      {"srun_apptainer_accelerate_fsdp.sh", "gres:gpu:a100:2", 1, "accelerate",
       "meta-llama/Llama-3.1-8B", Method::kFull, Precision::kAmpBf16, Framework::kHf,
       Sharding::kFsdpFull, Checkpointing::kFull, 4, 2, 2048, 1, 1, 2},
  };
  for (const ScriptCase& c : kCases) {
    SCOPED_TRACE(c.file);
    SlurmFacts f;
    f.tres_per_node = c.tres_per_node;
    f.min_nodes = c.nodes;
    const JobRequest r = Parse(ReadScript(c.file), f);
    EXPECT_TRUE(r.is_llm_job);
    EXPECT_EQ(r.launcher, c.launcher);
    EXPECT_EQ(r.job.model, c.model);
    EXPECT_EQ(r.job.method, c.method);
    EXPECT_EQ(r.job.precision, c.precision);
    EXPECT_EQ(r.job.framework, c.framework);
    EXPECT_EQ(r.job.sharding, c.sharding);
    EXPECT_EQ(r.job.activation_checkpointing, c.ac);
    EXPECT_EQ(r.job.micro_batch, c.micro_batch);
    EXPECT_EQ(r.job.grad_accum, c.grad_accum);
    EXPECT_EQ(r.job.seq_len, c.seq_len);
    EXPECT_EQ(r.job.tp, c.tp);
    EXPECT_EQ(r.job.pp, c.pp);
    EXPECT_EQ(r.job.gpus, c.gpus);
    EXPECT_TRUE(ValidateJob(r.job).ok()) << ValidateJob(r.job).ToString();
  }
}

TEST(RequestTest, ScriptDetailsBeyondTheTable) {
  SlurmFacts f;
  f.tres_per_node = "gres:gpu:1";
  JobRequest q = Parse(ReadScript("qlora_single_gpu.sh"), f);
  EXPECT_EQ(q.job.quant, Quant::kNf4);
  EXPECT_TRUE(q.job.double_quant);
  EXPECT_EQ(q.job.lora_r, 64);
  EXPECT_EQ(q.job.optimizer, Optimizer::kAdamW8bit);  // --optim paged_adamw_8bit
  EXPECT_EQ(q.job.steps, 500);
  ASSERT_EQ(q.job.lora_targets.size(), 1u);
  EXPECT_EQ(q.job.lora_targets[0], "all-linear");

  JobRequest t = Parse(ReadScript("trl_sft_lora_llama8b.sh"), f);
  EXPECT_EQ(t.job.lora_r, 32);
  EXPECT_EQ(t.job.lora_targets, (std::vector<std::string>{"q_proj", "k_proj", "v_proj", "o_proj"}));
  // A pattern stays one target; a list written as YAML's flow sequence is split.
  JobRequest pattern = Parse("#FMTE method=lora lora-targets='.*(q|v)_proj'\n", f);
  EXPECT_EQ(pattern.job.lora_targets, (std::vector<std::string>{".*(q|v)_proj"}));
  JobRequest flow = Parse("#FMTE method=lora lora-targets=[q_proj,v_proj]\n", f);
  EXPECT_EQ(flow.job.lora_targets, (std::vector<std::string>{"q_proj", "v_proj"}));
  for (const char* ok : {"q_proj,v_proj", "self_attn.q_proj",
                         "model.layers.[\\d]+.(mlp|self_attn).(up|down|gate|q|k|v|o)_proj"})
    EXPECT_TRUE(ValidateOption("lora-targets", ok, /*as_fmte_line=*/true).ok()) << ok;
  for (const char* bad : {"(q|v)_proj x", "q-proj;v"}) {
    const Status s = ValidateOption("lora-targets", bad, /*as_fmte_line=*/true);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("#FMTE lora-targets"), std::string::npos) << s.message();
  }
  EXPECT_EQ(t.launcher_procs_per_node, 4);
  EXPECT_EQ(t.job.epochs, 1.0);

  JobRequest d = Parse(ReadScript("deepspeed_zero3_llama70b.sh"), f);
  EXPECT_TRUE(d.job.offload_optimizer);  // "ds_z3_offload_config.json"
  EXPECT_TRUE(d.job.offload_params);
  EXPECT_EQ(d.launcher_procs_per_node, 8);
  EXPECT_EQ(d.launcher_nodes, 2);

  JobRequest m = Parse(ReadScript("megatron_gpt_arrays.sh"), f);
  EXPECT_TRUE(m.job.sequence_parallel);
  EXPECT_EQ(m.job.steps, 50000);
  EXPECT_EQ(m.job.global_batch, 256);
  EXPECT_EQ(m.launcher_procs_per_node, 8);  // from ${DISTRIBUTED_ARGS[@]}
  EXPECT_NE(m.arch_json.find("\"n_layer\":40"), std::string::npos);

  JobRequest ml = Parse(ReadScript("megatron_llama_flat.sh"), f);
  EXPECT_NE(ml.arch_json.find("\"num_key_value_heads\":8"), std::string::npos);
  EXPECT_NE(ml.arch_json.find("\"intermediate_size\":14336"), std::string::npos);
  EXPECT_NE(ml.arch_json.find("\"tie_word_embeddings\":false"), std::string::npos);
  EXPECT_EQ(ml.job.samples, 1000000);

  JobRequest tt = Parse(ReadScript("torchtune_lora_single.sh"), f);
  EXPECT_EQ(tt.job.steps, 1000);  // max_steps_per_epoch=1000 x epochs=1
  JobRequest tf = Parse(ReadScript("torchtune_full_distributed_70b.sh"), f);
  EXPECT_TRUE(tf.job.compile);
  EXPECT_EQ(tf.launcher_procs_per_node, 8);

  JobRequest fl = Parse(ReadScript("fmte_lines_custom.sh"), f);
  EXPECT_EQ(fl.job.tokens, 2000000000);  // tokens=2B
  ASSERT_NE(fl.SourceOf("seq-len"), nullptr);
  EXPECT_EQ(fl.SourceOf("seq-len")->source, Source::kFmteLine);
  EXPECT_EQ(fl.SourceOf("seq-len")->origin, "#FMTE line 5");
}

TEST(RequestTest, NonLlmJobIsUntouched) {
  SlurmFacts f;
  f.partition = "cpu";
  const JobRequest r = Parse(ReadScript("plain_cpu_job.sh"), f);
  EXPECT_FALSE(r.is_llm_job);
  EXPECT_TRUE(r.job.model.empty());
  EXPECT_FALSE(Parse("#!/bin/bash\nsrun hostname\n").is_llm_job);
  EXPECT_FALSE(Parse("").is_llm_job);
}

TEST(RequestTest, PrecedenceSpankOverFmteOverLauncherOverSlurm) {
  const std::string script =
      "#!/bin/bash\n"
      "#FMTE seq-len=4096 micro-batch=2 method=lora\n"
      "torchrun --nproc_per_node 4 train.py --model_name_or_path meta-llama/Llama-3.1-8B "
      "--max_seq_length 1024 --per_device_train_batch_size 8 --gradient_accumulation_steps 3 "
      "--bf16\n";
  SlurmFacts f;
  f.tres_per_job = "gres:gpu:4";
  const std::vector<std::pair<std::string, std::string>> spank = {{"micro-batch", "1"},
                                                                  {"model", "Qwen/Qwen3-8B"}};
  const JobRequest r = Parse(script, f, spank);
  EXPECT_EQ(r.job.model, "Qwen/Qwen3-8B");  // spank over launcher
  EXPECT_EQ(r.job.micro_batch, 1);          // spank over #FMTE over launcher
  EXPECT_EQ(r.job.seq_len, 4096);           // #FMTE over launcher
  EXPECT_EQ(r.job.method, Method::kLora);   // #FMTE only
  EXPECT_EQ(r.job.grad_accum, 3);           // launcher only
  EXPECT_EQ(r.job.precision, Precision::kAmpBf16);
  EXPECT_EQ(r.job.gpus, 4);  // Slurm
  EXPECT_EQ(r.SourceOf("model")->source, Source::kSpank);
  EXPECT_EQ(r.SourceOf("seq-len")->source, Source::kFmteLine);
  EXPECT_EQ(r.SourceOf("grad-accum")->source, Source::kLauncher);
  EXPECT_EQ(r.SourceOf("gpus")->source, Source::kSlurm);
}

TEST(RequestTest, BadValuesAreWarningsAndLowerPrecedenceStays) {
  const std::string script =
      "#FMTE seq-len=abc micro-batch=99999999999999999999999 colour=red method=lorra\n"
      "python train.py --model_name_or_path x/y --max_seq_length 512\n";
  const JobRequest r = Parse(script, {}, {{"precision", "bf17"}});
  EXPECT_EQ(r.job.seq_len, 512);
  EXPECT_EQ(r.job.micro_batch, 1);
  EXPECT_EQ(r.job.method, Method::kFull);
  EXPECT_EQ(r.job.precision, Precision::kAmpBf16);
  std::string all;
  for (const std::string& w : r.warnings) all += w + "\n";
  EXPECT_NE(all.find("#FMTE line 1: seq-len"), std::string::npos) << all;
  EXPECT_NE(all.find("micro-batch"), std::string::npos) << all;
  EXPECT_NE(all.find("unknown key 'colour'"), std::string::npos) << all;
  EXPECT_NE(all.find("full|lora|qlora"), std::string::npos) << all;
  EXPECT_NE(all.find("--fmte-precision"), std::string::npos) << all;
}

TEST(RequestTest, SpankOptionsContract) {
  const char* kNames[] = {
      "model",     "method",   "seq-len", "micro-batch", "grad-accum",
      "precision", "sharding", "tp",      "pp",          "activation-checkpointing",
      "lora-r",    "quant",    "tokens",  "samples",     "epochs",
      "steps",     "framework"};
  auto options = FmteOptions();
  ASSERT_EQ(options.size(), std::size(kNames));
  for (size_t i = 0; i < options.size(); ++i) EXPECT_EQ(options[i].key, kNames[i]);
  EXPECT_EQ(SpankEnvKey("model"), "_SLURM_SPANK_OPTION_fmte_fmte_model");
  EXPECT_EQ(SpankEnvKey("seq-len"), "_SLURM_SPANK_OPTION_fmte_fmte_seq_len");
}

TEST(RequestTest, ValidateOptionNamesOptionAndAcceptedValues) {
  struct Case {
    const char* key;
    const char* value;
    bool ok;
    const char* in_message;
  };
  const Case kCases[] = {
      {"method", "lora", true, ""},
      {"method", "lorra", false,
       "--fmte-method: expected one of full|lora|qlora|prompt-tuning|prefix-tuning"},
      {"seq-len", "4096", true, ""},
      {"seq-len", "-1", false, "--fmte-seq-len"},
      {"seq-len", "1180591620717411303424", false, "--fmte-seq-len"},  // 2^70
      {"tokens", "10B", true, ""},
      {"tokens", "10X", false, "--fmte-tokens"},
      {"epochs", "2.5", true, ""},
      {"epochs", "nan", false, "--fmte-epochs"},
      {"sharding", "zero3", true, ""},
      {"precision", "bf16", false, "amp-bf16"},
      {"model", "meta-llama/Llama-3.1-8B", true, ""},
      {"model", "has space", false, "--fmte-model"},
      {"colour", "red", false, "unknown option"},
  };
  for (const Case& c : kCases) {
    const Status s = ValidateOption(c.key, c.value);
    EXPECT_EQ(s.ok(), c.ok) << c.key << "=" << c.value << ": " << s.message();
    if (!c.ok) {
      EXPECT_NE(s.message().find(c.in_message), std::string::npos) << s.message();
    }
  }
}

TEST(RequestTest, SpankValuesFromEnv) {
  const char* env[] = {"_SLURM_SPANK_OPTION_fmte_fmte_model=meta-llama/Llama-3.1-8B",
                       "_SLURM_SPANK_OPTION_fmte_fmte_seq_len=4096",
                       "_SLURM_SPANK_OPTION_other_x=1",
                       nullptr,
                       "FMTE_ARCH={\"model_type\":\"llama\"}",
                       "PATH=/usr/bin"};
  auto v = SpankValuesFromEnv(env);
  ASSERT_EQ(v.size(), 3u);  // in key order
  EXPECT_EQ(v[0].first, "arch");
  EXPECT_EQ(v[1], (std::pair<std::string, std::string>{"model", "meta-llama/Llama-3.1-8B"}));
  EXPECT_EQ(v[2], (std::pair<std::string, std::string>{"seq-len", "4096"}));
  // The same entries in another order make the same list (a decision made in sbatch is bound to
  // it); of a key given twice, the later entry stays later (it wins in ParseJobRequest).
  const char* reordered[] = {"FMTE_ARCH={\"model_type\":\"llama\"}",
                             "_SLURM_SPANK_OPTION_fmte_fmte_seq_len=4096",
                             "_SLURM_SPANK_OPTION_fmte_fmte_model=meta-llama/Llama-3.1-8B"};
  EXPECT_EQ(SpankValuesFromEnv(reordered), v);
  const char* twice[] = {"_SLURM_SPANK_OPTION_fmte_fmte_seq_len=4096",
                         "_SLURM_SPANK_OPTION_fmte_fmte_model=a/b",
                         "_SLURM_SPANK_OPTION_fmte_fmte_seq_len=8192"};
  auto t = SpankValuesFromEnv(twice);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].second, "4096");
  EXPECT_EQ(t[2].second, "8192");
  EXPECT_EQ(Parse("", {}, t).job.seq_len, 8192);
  // Many entries (a hostile job's: past the insertion sort's handful) keep the same order rule.
  std::vector<std::string> many;
  for (int i = 0; i < 40; ++i)
    many.push_back(i % 2 ? "_SLURM_SPANK_OPTION_fmte_fmte_seq_len=" + std::to_string(i)
                         : "_SLURM_SPANK_OPTION_fmte_fmte_model=m/" + std::to_string(i));
  std::vector<const char*> many_env;
  for (const std::string& e : many) many_env.push_back(e.c_str());
  const auto m = SpankValuesFromEnv(many_env);
  ASSERT_EQ(m.size(), 40u);
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(m[i], (std::pair<std::string, std::string>{"model", "m/" + std::to_string(2 * i)}));
    EXPECT_EQ(m[20 + i],
              (std::pair<std::string, std::string>{"seq-len", std::to_string(2 * i + 1)}));
  }
}

TEST(RequestTest, ForwardedArchitectureFollowsTheModelSource) {
  const JobRequest r =
      Parse("#FMTE method=lora\n", {}, {{"model", "/home/u/m"}, {"arch", "{\"a\":1}"}});
  EXPECT_EQ(r.arch_json, "{\"a\":1}");
  // A #FMTE model overrides the Megatron flags' ad-hoc architecture.
  const JobRequest m = Parse(
      "#FMTE model=meta-llama/Llama-3.1-8B\n"
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4\n");
  EXPECT_EQ(m.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_TRUE(m.arch_json.empty());
  // The client's reading carries the architecture of an #FMTE line's model it read (a local
  // directory): the controller takes it when that line wins here too, and only then.
  const std::string read =
      R"({"v":1,"launcher":"torchrun","procs":8,"nodes":0,"values":[],"unread":[],)"
      R"("files":[],"arch":"{\"b\":2}"})";
  const JobRequest f =
      Parse("#FMTE model=./ckpt/mine method=full\ntorchrun --nproc_per_node 8 train.py\n", {},
            {{std::string(kReadKey), read}});
  EXPECT_EQ(f.job.model, "./ckpt/mine");
  EXPECT_EQ(f.arch_json, "{\"b\":2}");
  const JobRequest spank_wins =
      Parse("#FMTE model=./ckpt/mine\n", {}, {{std::string(kReadKey), read}, {"model", "acme/x"}});
  EXPECT_TRUE(spank_wins.arch_json.empty());
}

TEST(RequestTest, ExpertParallelismFromMegatronFlagsAndFmteLines) {
  const JobRequest m = Parse(
      "#FMTE model=mistralai/Mixtral-8x7B-v0.1\n"
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
      "--num-attention-heads 32 --tensor-model-parallel-size 1 --expert-model-parallel-size 8 "
      "--use-distributed-optimizer --bf16\n");
  EXPECT_EQ(m.job.ep, 8);
  EXPECT_EQ(m.job.etp, 0);  // not set: the experts split like tp
  // The token dispatcher: Megatron-Core's default allgather where the script names none
  // (transformer_config.py moe_token_dispatcher_type), else --moe-token-dispatcher-type.
  EXPECT_EQ(m.job.moe_dispatcher, MoeDispatcher::kAllgather);
  const auto dispatcher = [](const std::string& flag) {
    return Parse(
        "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads "
        "4 --num-experts 8 --expert-model-parallel-size 8 --bf16 " +
        flag + "\n");
  };
  EXPECT_EQ(dispatcher("--moe-token-dispatcher-type alltoall").job.moe_dispatcher,
            MoeDispatcher::kAlltoall);
  EXPECT_EQ(dispatcher("--moe-token-dispatcher-type flex").job.moe_dispatcher,
            MoeDispatcher::kFlex);
  const JobRequest odd = dispatcher("--moe-token-dispatcher-type sometimes");
  EXPECT_EQ(odd.job.moe_dispatcher, MoeDispatcher::kAuto);
  bool warned = false;
  for (const std::string& w : odd.warnings)
    warned = warned || w.find("--moe-token-dispatcher-type") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(Parse("#FMTE moe-dispatcher=flex\n").job.moe_dispatcher, MoeDispatcher::kFlex);
  EXPECT_EQ(Parse("#FMTE ep=8\n").job.moe_dispatcher, MoeDispatcher::kAuto);
  EXPECT_EQ(Parse("#FMTE ep=4\n").job.ep, 4);
  const JobRequest folded = Parse(
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
      "--tensor-model-parallel-size 2 --expert-model-parallel-size 8 "
      "--expert-tensor-parallel-size 1 --bf16\n");
  EXPECT_EQ(folded.job.etp, 1);
  const JobRequest zero = Parse("#FMTE ep=0\n");
  EXPECT_EQ(zero.job.ep, 1);
  ASSERT_FALSE(zero.warnings.empty());
  EXPECT_NE(zero.warnings[0].find("ep"), std::string::npos) << zero.warnings[0];
  // From a variable the script does not set: unread (read favourably), never a default.
  const JobRequest u = Parse(
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
      "--expert-model-parallel-size $EP --bf16\n");
  EXPECT_EQ(u.job.ep, 1);
  bool unread = false;
  for (const UnreadSetting& s : u.unread) unread = unread || s.key == "ep";
  EXPECT_TRUE(unread);
}

// Megatron's partial full recompute (megatron/training/arguments.py --recompute-method
// uniform|block, --recompute-num-layers N) and torchtitan's every-Nth-layer checkpointing.
TEST(RequestTest, RecomputeMethodFromMegatronFlagsAndFmteLines) {
  const JobRequest m = Parse(
      "torchrun pretrain_gpt.py --num-layers 32 --hidden-size 64 --num-attention-heads 4 "
      "--recompute-granularity full --recompute-method block --recompute-num-layers 4 --bf16\n");
  EXPECT_EQ(m.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_EQ(m.job.recompute_method, RecomputeMethod::kBlock);
  EXPECT_EQ(m.job.recompute_num_layers, 4);
  const JobRequest bad = Parse(
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
      "--recompute-granularity full --recompute-method sometimes --bf16\n");
  EXPECT_EQ(bad.job.recompute_method, RecomputeMethod::kUniform);
  bool named = false;
  for (const std::string& w : bad.warnings)
    named = named || w.find("--recompute-method") != std::string::npos;
  EXPECT_TRUE(named);
  const JobRequest line = Parse(
      "#FMTE activation-checkpointing=full\n#FMTE recompute-method=interval\n"
      "#FMTE recompute-num-layers=3\n");
  EXPECT_EQ(line.job.recompute_method, RecomputeMethod::kInterval);
  EXPECT_EQ(line.job.recompute_num_layers, 3);
  // torchtitan's selective_ac_option N turns selective checkpointing into every Nth layer whole;
  // under another mode it is ignored, as torchtitan ignores it.
  const JobRequest tt =
      Parse("#FMTE activation-checkpointing=selective\n#FMTE recompute-every=2\n");
  EXPECT_EQ(tt.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_EQ(tt.job.recompute_method, RecomputeMethod::kInterval);
  EXPECT_EQ(tt.job.recompute_num_layers, 2);
  const JobRequest none = Parse("#FMTE activation-checkpointing=none\n#FMTE recompute-every=2\n");
  EXPECT_EQ(none.job.activation_checkpointing, Checkpointing::kNone);
  EXPECT_EQ(none.job.recompute_method, RecomputeMethod::kUniform);
}

// Megatron's --recompute-modules (nargs '*', megatron/training/arguments.py) with selective
// granularity, the same list on an #FMTE line in Python's list syntax, and a name Megatron does
// not have, refused with the field and the accepted names.
TEST(RequestTest, RecomputeModulesFromMegatronFlagsAndFmteLines) {
  const JobRequest m = Parse(
      "torchrun pretrain_gpt.py --num-layers 32 --hidden-size 64 --num-attention-heads 4 "
      "--recompute-granularity selective --recompute-modules moe layernorm --bf16\n");
  EXPECT_EQ(m.job.activation_checkpointing, Checkpointing::kSelective);
  EXPECT_TRUE(m.job.Recomputes(RecomputeModule::kMoe));
  EXPECT_TRUE(m.job.Recomputes(RecomputeModule::kLayernorm));
  EXPECT_FALSE(m.job.Recomputes(RecomputeModule::kCoreAttn));  // the list replaces the default
  EXPECT_EQ(RecomputeModulesText(m.job.recompute_modules), "layernorm,moe");
  const JobRequest plain = Parse(
      "torchrun pretrain_gpt.py --num-layers 32 --hidden-size 64 --num-attention-heads 4 "
      "--recompute-granularity selective --bf16\n");
  EXPECT_TRUE(plain.job.Recomputes(RecomputeModule::kCoreAttn));
  EXPECT_FALSE(plain.job.Recomputes(RecomputeModule::kMoe));
  const JobRequest line = Parse(
      "#FMTE activation-checkpointing=selective\n#FMTE "
      "recompute-modules=['moe_act','core_attn']\n");
  EXPECT_TRUE(line.job.Recomputes(RecomputeModule::kMoeAct));
  EXPECT_TRUE(line.job.Recomputes(RecomputeModule::kCoreAttn));
  // Without selective granularity Megatron recomputes no module.
  const JobRequest full =
      Parse("#FMTE activation-checkpointing=full\n#FMTE recompute-modules=moe\n");
  EXPECT_FALSE(full.job.Recomputes(RecomputeModule::kMoe));
  Result<uint32_t> bad = ParseRecomputeModules("moe,attention");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("recompute-modules"), std::string::npos);
  EXPECT_NE(bad.status().message().find("shared_experts"), std::string::npos);
}

TEST(RequestTest, ContextParallelismFromMegatronFlagsAndFmteLines) {
  const JobRequest m = Parse(
      "#SBATCH --gres=gpu:8\n"
      "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
      "--num-attention-heads 32 --tensor-model-parallel-size 2 --context-parallel-size 2 "
      "--seq-length 16384 --micro-batch-size 1 --global-batch-size 8 --bf16\n");
  EXPECT_EQ(m.job.cp, 2);
  EXPECT_EQ(m.job.DataParallel(), 2);
  EXPECT_EQ(m.job.grad_accum, 4);  // global 8 / (micro 1 x dp 2): cp ranks share the sequences
  EXPECT_EQ(Parse("#FMTE cp=4\n").job.cp, 4);
  const JobRequest u = Parse(
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
      "--context-parallel-size $CP --bf16\n");
  EXPECT_EQ(u.job.cp, 1);
  bool unread = false;
  for (const UnreadSetting& s : u.unread) unread = unread || s.key == "cp";
  EXPECT_TRUE(unread);
}

TEST(RequestTest, Fp8FromMegatronFlagsAndFmteLines) {
  const std::string line =
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --bf16 "
      "--fp8-format hybrid";
  EXPECT_EQ(Parse(line + "\n").job.fp8, Fp8::kDelayed);  // Megatron's default recipe
  EXPECT_EQ(Parse(line + " --fp8-recipe tensorwise\n").job.fp8, Fp8::kTensorwise);
  EXPECT_EQ(Parse(line + " --fp8-recipe mxfp8\n").job.fp8, Fp8::kMxfp8);
  EXPECT_EQ(Parse("#FMTE fp8=rowwise\n").job.fp8, Fp8::kRowwise);
  const JobRequest bad = Parse("#FMTE fp8=e5m2\n");
  EXPECT_EQ(bad.job.fp8, Fp8::kNone);
  ASSERT_FALSE(bad.warnings.empty());
  EXPECT_NE(bad.warnings[0].find("fp8"), std::string::npos) << bad.warnings[0];
  // Megatron's precision options (docs/memory.md "Megatron's precision options").
  const JobRequest opts = Parse(line + " --fp8-param-gather --grad-reduce-in-bf16\n");
  EXPECT_TRUE(opts.job.fp8_params);
  EXPECT_TRUE(opts.job.grad_reduce_bf16);
  EXPECT_FALSE(Parse(line + "\n").job.fp8_params);
  EXPECT_TRUE(Parse("#FMTE grad-reduce-in-bf16=true\n").job.grad_reduce_bf16);
  // The precision-aware optimizer's moments: both in bf16, or the states are taken as fp32.
  const std::string aware = line + " --use-precision-aware-optimizer --exp-avg-dtype bf16";
  EXPECT_TRUE(Parse(aware + " --exp-avg-sq-dtype bf16\n").job.optimizer_states_bf16);
  EXPECT_FALSE(Parse(aware + " --exp-avg-sq-dtype fp32\n").job.optimizer_states_bf16);
  EXPECT_FALSE(Parse(aware + "\n").job.optimizer_states_bf16);
  EXPECT_TRUE(Parse("#FMTE optimizer-states-bf16=true\n").job.optimizer_states_bf16);
}

TEST(RequestTest, GpuTresForms) {
  struct Case {
    const char* tres;
    int64_t count;
    const char* type;
  };
  const Case kCases[] = {
      {"gres:gpu:2", 2, ""},
      {"gres:gpu:a100:2", 2, "a100"},
      {"gres/gpu:h100=4", 4, "h100"},
      {"gres/gpu=3", 3, ""},
      {"gpu:1", 1, ""},
      {"gres:gpu", 1, ""},
      {"gres:nvme:1,gres:gpu:a100:8", 8, "a100"},
      {"gres:gpumem:10G", 0, ""},
      {"", 0, ""},
  };
  for (const Case& c : kCases) {
    auto g = ParseGpuTres(c.tres);
    ASSERT_TRUE(g.ok()) << c.tres << ": " << g.status().message();
    EXPECT_EQ(g->count, c.count) << c.tres;
    EXPECT_EQ(g->type, c.type) << c.tres;
  }
  EXPECT_FALSE(ParseGpuTres("gres:gpu:a100:1180591620717411303424").ok());
  EXPECT_FALSE(ParseGpuTres("gres:gpu:a100:x").ok());
  EXPECT_EQ(ReplaceGpuCount("gres:gpu:a100:2", 8), "gres:gpu:a100:8");
  EXPECT_EQ(ReplaceGpuCount("gres:gpu:2", 4), "gres:gpu:4");
  EXPECT_EQ(ReplaceGpuCount("gres:nvme:1,gres:gpu:h100:2", 4), "gres:nvme:1,gres:gpu:h100:4");
  EXPECT_EQ(ReplaceGpuCount("", 4), "gres:gpu:4");
}

TEST(RequestTest, SlurmGpuFields) {
  SlurmFacts f;
  f.tres_per_task = "gres:gpu:1";
  f.num_tasks = 8;
  JobRequest r = Parse("#FMTE model=x/y\n", f);
  EXPECT_EQ(r.slurm_gpus, 8);
  EXPECT_EQ(r.gpu_field, GpuTresField::kPerTask);
  SlurmFacts n;
  n.tres_per_node = "gres:gpu:a100:4";
  n.min_nodes = 2;
  r = Parse("#FMTE model=x/y\n", n);
  EXPECT_EQ(r.slurm_gpus, 8);
  EXPECT_EQ(r.job.gpus_per_node, 4);
  EXPECT_EQ(r.gres_gpu_type, "a100");
  EXPECT_EQ(r.gpu_field, GpuTresField::kPerNode);
}

}  // namespace
}  // namespace fmte

namespace fmte {
namespace {

// A bash script (not an sbatch one) that makes its own allocation on the launch line, as
// InternVL's finetune scripts do: `srun -p P --gres=gpu:8 --nodes=N --ntasks=... python train.py`
// with one rank per task. srun's task counts are the launch's processes; its other options,
// values in separate words and boolean ones, are skipped without taking the launcher for a value.
TEST(RequestTest, SrunPrefixTasksAreTheLaunchsProcesses) {
  const JobRequest joined = Parse(
      "GPUS=${GPUS:-32}\nGPUS_PER_NODE=8\nNODES=$((GPUS / GPUS_PER_NODE))\n"
      "srun -p VC5 --gres=gpu:${GPUS_PER_NODE} --nodes=${NODES} --ntasks=${GPUS} \\\n"
      "  --ntasks-per-node=${GPUS_PER_NODE} --cpus-per-task=10 --kill-on-bad-exit=1 \\\n"
      "  python -u train.py --model_name_or_path meta-llama/Llama-3.1-8B --bf16 True\n");
  EXPECT_EQ(joined.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(joined.launcher_procs_per_node, 8);
  EXPECT_EQ(joined.launcher_nodes, 4);
  EXPECT_EQ(joined.job.gpus, 32);
  EXPECT_EQ(joined.job.gpus_per_node, 8);
  ASSERT_NE(joined.SourceOf("gpus"), nullptr);
  EXPECT_EQ(joined.SourceOf("gpus")->origin, "line 4: srun --ntasks-per-node and --nodes");
  // The client's reading forwards that origin (FMTE_READ "porigin"); the controller names it too.
  const JobRequest ctld =
      ParseJobRequest("", {{std::string(kReadKey), EncodeClientReading(joined)}}, SlurmFacts{});
  ASSERT_NE(ctld.SourceOf("gpus"), nullptr);
  EXPECT_EQ(ctld.SourceOf("gpus")->origin, "line 4: srun --ntasks-per-node and --nodes");
  EXPECT_EQ(ctld.job.gpus, 32);

  // Separate values, a total task count only, and boolean options fmte does not list.
  const JobRequest separate = Parse(
      "srun -N 2 --ntasks 16 --exclusive --no-container-mount-home python train.py "
      "--model_name_or_path meta-llama/Llama-3.1-8B\n");
  EXPECT_EQ(separate.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(separate.launcher_procs_per_node, 8);
  EXPECT_EQ(separate.launcher_nodes, 2);

  // A launcher that starts its own processes says how many; srun's one task per node does not.
  const JobRequest torchrun = Parse(
      "srun --nodes=2 --ntasks-per-node=1 torchrun --nnodes 2 --nproc_per_node 4 train.py "
      "--model_name_or_path meta-llama/Llama-3.1-8B\n");
  EXPECT_EQ(torchrun.launcher_procs_per_node, 4);
  EXPECT_EQ(torchrun.job.gpus, 8);

  // Slurm's own GPU request wins over the tasks (and a different count is warned about).
  SlurmFacts facts;
  facts.tres_per_node = "gres:gpu:4";
  facts.min_nodes = 1;
  const JobRequest slurm = Parse(
      "srun --ntasks-per-node=8 python train.py --model_name_or_path meta-llama/Llama-3.1-8B\n",
      facts);
  EXPECT_EQ(slurm.job.gpus, 4);
  bool warned = false;
  for (const std::string& w : slurm.warnings)
    warned = warned || w.find("the launcher starts 8 processes") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace fmte
