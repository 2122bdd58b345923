// The launcher table (etc/launchers.json) and the client-side reading of the files a script
// names: config files read into the request with their origins, scripts' arguments and variables,
// `source`, `bash -c`, heredoc-written configs, arithmetic, and errors that name what is wrong.
// Scripts and config files here are written for the test in the forms real jobs use (LLaMA-
// Factory YAML naming a DeepSpeed JSON, accelerate FSDP YAML, torchtitan TOML).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "fmte/estimator.h"
#include "fmte/model.h"
#include "fmte/policy.h"
#include "fmte/request.h"
#include "fmte/script_files.h"

namespace fmte {
namespace {

class ScriptFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fmte_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "cfg");
    auto table = LoadLauncherTable(FMTE_SOURCE_DIR "/etc");
    ASSERT_TRUE(table.ok()) << table.status().message();
    table_ = std::move(table).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  JobRequest Read(const std::string& script, std::vector<std::string> args = {},
                  std::vector<std::pair<std::string, std::string>> env = {},
                  std::string script_dir = "") {
    files_ = std::make_unique<DiskFiles>(dir_.string());
    ScriptContext ctx;
    ctx.args = std::move(args);
    ctx.env = std::move(env);
    ctx.files = files_.get();
    ctx.launchers = &table_;
    ctx.script_dir = std::move(script_dir);
    SlurmFacts facts;
    facts.tres_per_node = "gres:gpu:8";
    return ParseJobRequest(script, {}, facts, ctx);
  }
  static std::string ValueOf(const JobRequest& r, std::string_view key) {
    const FieldSource* s = r.SourceOf(key);
    return s == nullptr ? "" : s->value;
  }
  static std::string OriginOf(const JobRequest& r, std::string_view key) {
    const FieldSource* s = r.SourceOf(key);
    return s == nullptr ? "" : s->origin;
  }

  std::filesystem::path dir_;
  LauncherTable table_;
  std::unique_ptr<DiskFiles> files_;
};

TEST_F(ScriptFilesTest, LlamaFactoryYamlNamesItsDeepSpeedConfig) {
  Write("cfg/sft.yaml",
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nfinetuning_type: lora\nlora_rank: 8\n"
        "lora_target: all\ncutoff_len: 4096\nper_device_train_batch_size: 4\n"
        "deepspeed: cfg/z3.json\nbf16: true\n");
  Write("cfg/z3.json",
        R"({"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}})");
  const JobRequest r = Read("#!/bin/bash\nllamafactory-cli train cfg/sft.yaml\n");
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.job.model, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(ValueOf(r, "method"), "lora");
  EXPECT_EQ(ValueOf(r, "seq-len"), "4096");
  EXPECT_EQ(OriginOf(r, "seq-len"), "cfg/sft.yaml: cutoff_len");
  EXPECT_EQ(ValueOf(r, "micro-batch"), "4");  // "auto" in the JSON leaves the YAML's value
  EXPECT_EQ(ValueOf(r, "sharding"), "zero3");
  EXPECT_EQ(OriginOf(r, "sharding"), "cfg/z3.json: zero_optimization.stage");
  EXPECT_EQ(ValueOf(r, "lora-targets"), "all-linear");
  EXPECT_EQ(r.files_read, (std::vector<std::string>{"cfg/sft.yaml", "cfg/z3.json"}));
}

// LLaMA-Factory run as a script from its checkout, as its examples and READMEs launch it: `torchrun
// / accelerate launch / deepspeed ... src/train.py cfg.yaml [key=value ...]` (src/train.py calls
// llamafactory.train.tuner.run_exp, which reads a YAML first argument and an OmegaConf dotlist
// after it) and, before 0.8, `src/train_bash.py --stage sft ...` flags. Its defaults apply as for
// llamafactory-cli (gradient checkpointing on: model_utils/checkpointing.py). Other projects name
// a script src/train.py too: without LLaMA-Factory's stage/finetuning_type on the line or in the
// file, none of that is assumed.
TEST_F(ScriptFilesTest, LlamaFactorySrcTrainPyIsLlamaFactory) {
  Write("cfg/sft.yaml",
        "model_name_or_path: meta-llama/Llama-3.1-8B-Instruct\nstage: sft\nfinetuning_type: lora\n"
        "lora_target: all\ncutoff_len: 2048\nper_device_train_batch_size: 1\nbf16: true\n");
  Write("cfg/fsdp.yaml", "distributed_type: FSDP\nmixed_precision: bf16\nnum_processes: 8\n");
  for (const std::string line :
       {"torchrun --nproc_per_node 8 src/train.py cfg/sft.yaml cutoff_len=4096\n",
        "accelerate launch --config_file cfg/fsdp.yaml src/train.py cfg/sft.yaml cutoff_len=4096\n",
        "FORCE_TORCHRUN=1 deepspeed --num_gpus 8 /opt/LLaMA-Factory/src/train.py cfg/sft.yaml "
        "cutoff_len=4096\n"}) {
    const JobRequest r = Read(line);
    ASSERT_TRUE(r.is_llm_job) << line;
    EXPECT_EQ(r.job.model, "meta-llama/Llama-3.1-8B-Instruct") << line;
    EXPECT_EQ(ValueOf(r, "method"), "lora") << line;
    EXPECT_EQ(ValueOf(r, "seq-len"), "4096") << line;  // the dotlist's, after the file's
    EXPECT_EQ(ValueOf(r, "activation-checkpointing"), "full") << line;
    EXPECT_EQ(OriginOf(r, "activation-checkpointing"), "launcher llamafactory") << line;
  }
  EXPECT_EQ(
      ValueOf(Read("accelerate launch --config_file cfg/fsdp.yaml src/train.py cfg/sft.yaml\n"),
              "sharding"),
      "fsdp-full");
  // The 0.7-era flags form.
  const JobRequest bash = Read(
      "deepspeed --num_gpus 8 src/train_bash.py --stage sft --do_train --model_name_or_path "
      "meta-llama/Llama-2-7b-hf --finetuning_type lora --lora_target q_proj,v_proj "
      "--per_device_train_batch_size 4 --bf16\n");
  ASSERT_TRUE(bash.is_llm_job);
  EXPECT_EQ(ValueOf(bash, "activation-checkpointing"), "full");
  EXPECT_EQ(ValueOf(bash, "lora-targets"), "q_proj,v_proj");
  // Its own switch turns checkpointing off.
  Write("cfg/nockpt.yaml",
        "model_name_or_path: meta-llama/Llama-3.1-8B-Instruct\nstage: sft\nfinetuning_type: full\n"
        "disable_gradient_checkpointing: true\n");
  EXPECT_EQ(ValueOf(Read("torchrun src/train.py cfg/nockpt.yaml\n"), "activation-checkpointing"),
            "none");
  // Another project's src/train.py: not LLaMA-Factory's.
  Write("cfg/resnet.yaml", "model: resnet50\nbatch_size: 256\n");
  EXPECT_FALSE(Read("python src/train.py cfg/resnet.yaml\n").is_llm_job);
  const JobRequest hf = Read(
      "torchrun --nproc_per_node 8 src/train.py --model_name_or_path meta-llama/Llama-3.1-8B "
      "--per_device_train_batch_size 2 cutoff_len=4096\n");
  ASSERT_TRUE(hf.is_llm_job);
  EXPECT_EQ(ValueOf(hf, "activation-checkpointing"), "");
  EXPECT_EQ(ValueOf(hf, "seq-len"), "");  // an undotted word is no override of another trainer
}

// ms-swift (modelscope/ms-swift): `swift sft|pt|rlhf` train, its other subcommands do not
// (swift/cli/main.py). Defaults read from its argument classes at v3.12.6 (swift/llm/argument/
// base_args/base_args.py train_type 'lora', tuner_args.py target_modules ['all-linear'] and
// lora_rank 8, trainers/arguments.py gradient_checkpointing True, quant_args.py: bnb with
// quant_bits 4 is QLoRA, quant_bits alone quantises nothing) and 4.x (swift/arguments/: tuner_type;
// a config file as the first positional, its ENV map setting NPROC_PER_NODE). Without
// NPROC_PER_NODE swift runs one process that spreads the model over the visible GPUs
// (swift/utils/env.py), which fmte does not model: the sharding is then unread (never rejected on).
TEST_F(ScriptFilesTest, MsSwiftFlagsAndDefaults) {
  const JobRequest lora = Read(
      "NPROC_PER_NODE=8 swift sft --model Qwen/Qwen2.5-7B-Instruct --dataset a.jsonl b.jsonl "
      "--per_device_train_batch_size 2 --max_length 4096 --deepspeed zero3_offload\n");
  ASSERT_TRUE(lora.is_llm_job);
  EXPECT_EQ(lora.job.model, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(ValueOf(lora, "method"), "lora");
  EXPECT_EQ(ValueOf(lora, "lora-targets"), "all-linear");
  EXPECT_EQ(ValueOf(lora, "lora-r"), "8");
  EXPECT_EQ(ValueOf(lora, "activation-checkpointing"), "full");
  EXPECT_EQ(ValueOf(lora, "sharding"), "zero3");
  EXPECT_EQ(ValueOf(lora, "offload-params"), "true");
  EXPECT_EQ(ValueOf(lora, "precision"), "mixed-bf16");  // DeepSpeed's fp32 master
  EXPECT_EQ(ValueOf(lora, "seq-len"), "4096");
  EXPECT_TRUE(lora.job.seq_len_is_cap);
  for (const std::string& w : lora.warnings)  // a named built-in config is no file to read
    EXPECT_EQ(w.find("zero3_offload: cannot read"), std::string::npos) << w;
  EXPECT_TRUE(lora.unread.empty()) << lora.unread.front().key;

  const JobRequest full = Read(
      "NPROC_PER_NODE=4 swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type full "
      "--torch_dtype bfloat16 --gradient_checkpointing false --max_length 2048 --packing true\n");
  EXPECT_EQ(ValueOf(full, "method"), "full");
  EXPECT_EQ(ValueOf(full, "activation-checkpointing"), "none");
  EXPECT_EQ(ValueOf(full, "precision"), "pure-bf16");  // bf16 weights under bf16 autocast
  EXPECT_FALSE(full.job.seq_len_is_cap);               // packed rows are full

  const JobRequest qlora = Read(
      "NPROC_PER_NODE=1 swift sft --model Qwen/Qwen2.5-7B-Instruct --quant_method bnb "
      "--quant_bits 4 --target_modules q_proj v_proj --max_length 2048\n");
  EXPECT_EQ(ValueOf(qlora, "method"), "qlora");
  EXPECT_EQ(ValueOf(qlora, "lora-targets"), "q_proj,v_proj");
  EXPECT_EQ(ValueOf(Read("NPROC_PER_NODE=1 swift sft --model Qwen/Qwen2.5-7B-Instruct "
                         "--quant_bits 4 --max_length 2048\n"),
                    "method"),
            "lora");

  // 4.x: the config file first, its ENV map starting torchrun.
  Write("cfg/swift.yaml",
        "model: Qwen/Qwen2.5-7B-Instruct\ntuner_type: full\nfsdp: fsdp2\nmax_length: 8192\n"
        "ENV:\n  NPROC_PER_NODE: 8\n");
  const JobRequest yaml = Read("swift sft cfg/swift.yaml --per_device_train_batch_size 2\n");
  ASSERT_TRUE(yaml.is_llm_job);
  EXPECT_EQ(ValueOf(yaml, "method"), "full");
  EXPECT_EQ(ValueOf(yaml, "sharding"), "fsdp-full");
  EXPECT_EQ(ValueOf(yaml, "micro-batch"), "2");
  EXPECT_EQ(OriginOf(yaml, "seq-len"), "cfg/swift.yaml: max_length");

  // One process over every GPU (device_map): the sharding is unread; no max_length: the model's
  // context length, unread.
  const JobRequest mp = Read(
      "CUDA_VISIBLE_DEVICES=0,1,2,3 swift sft --model Qwen/Qwen2.5-72B-Instruct --train_type "
      "lora\n");
  ASSERT_TRUE(mp.is_llm_job);
  std::vector<std::string> unread;
  for (const UnreadSetting& u : mp.unread) unread.push_back(u.key);
  EXPECT_NE(std::find(unread.begin(), unread.end(), "sharding"), unread.end());
  EXPECT_NE(std::find(unread.begin(), unread.end(), "seq-len"), unread.end());

  // 2.x: sft_type, model_id_or_path, max_length 2048 by default.
  const JobRequest v2 = Read(
      "NPROC_PER_NODE=2 swift sft --model_id_or_path Qwen/Qwen2-7B-Instruct --sft_type lora "
      "--quantization_bit 4 --deepspeed default-zero2\n");
  EXPECT_EQ(v2.job.model, "Qwen/Qwen2-7B-Instruct");
  EXPECT_EQ(ValueOf(v2, "method"), "qlora");
  EXPECT_EQ(ValueOf(v2, "seq-len"), "2048");
  EXPECT_EQ(ValueOf(v2, "sharding"), "zero2");

  // 3.x with --model_type beside --model is no 2.x job; swift's script run by torchrun.
  const JobRequest typed = Read(
      "torchrun --standalone --nnodes=1 --nproc_per_node=4 /opt/venv/bin/swift sft --model "
      "Qwen/Qwen2.5-7B-Instruct --model_type qwen2_5 --freeze_vit false --max_length 1024\n");
  ASSERT_TRUE(typed.is_llm_job);
  EXPECT_EQ(ValueOf(typed, "lora-targets"), "all-linear");
  EXPECT_EQ(ValueOf(typed, "freeze-vision"), "false");
  EXPECT_TRUE(typed.unread.empty()) << typed.unread.front().key;

  // Preference training: the objective each trainer names (its own option where it has one),
  // and a note for the generating ones, which fmte does not model.
  const auto noted = [](const JobRequest& r) {
    for (const std::string& w : r.warnings)
      if (w.find("the policy's update step is estimated") != std::string::npos) return true;
    return false;
  };
  const auto objective = [](const JobRequest& r) { return std::string(ToString(r.job.objective)); };
  EXPECT_EQ(objective(Read("NPROC_PER_NODE=8 swift rlhf --rlhf_type dpo --model "
                           "Qwen/Qwen2.5-7B-Instruct --max_length 2048\n")),
            "dpo");
  // ms-swift's rlhf_type defaults to dpo (swift/arguments/rlhf_args.py).
  EXPECT_EQ(objective(Read("swift rlhf --model Qwen/Qwen2.5-7B-Instruct\n")), "dpo");
  EXPECT_EQ(objective(Read("swift rlhf --rlhf_type simpo --model Qwen/Qwen2.5-3B-Instruct\n")),
            "simpo");
  EXPECT_EQ(objective(Read("swift rlhf --rlhf_type kto --model Qwen/Qwen2.5-7B-Instruct\n")),
            "kto");
  const JobRequest grpo =
      Read("swift rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct --num_generations 8\n");
  EXPECT_EQ(objective(grpo), "grpo");
  EXPECT_TRUE(noted(grpo));
  // For GRPO, PPO and GKD ms-swift's --max_length is the prompt's (Command-line-parameters.md);
  // the sequence adds --max_completion_length (512 by default, rlhf_args.py). Megatron-SWIFT too.
  EXPECT_EQ(Read("swift rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct --max_length 2048 "
                 "--max_completion_length 1024\n")
                .job.seq_len,
            2048 + 1024);
  EXPECT_EQ(Read("swift rlhf --rlhf_type gkd --model Qwen/Qwen2.5-7B-Instruct --max_length 2048\n")
                .job.seq_len,
            2048 + 512);
  EXPECT_EQ(Read("megatron rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct "
                 "--max_length 1024 --max_completion_length 4096\n")
                .job.seq_len,
            1024 + 4096);
  EXPECT_EQ(Read("swift rlhf --rlhf_type dpo --model Qwen/Qwen2.5-7B-Instruct --max_length 2048 "
                 "--max_completion_length 1024\n")
                .job.seq_len,
            2048);  // offline: max_length is the whole sequence
  // Their colocated vLLM (--vllm_mode colocate, required with --use_vllm) holds
  // --vllm_gpu_memory_utilization of each GPU (0.9 by default, args_mixin.py); --sleep_level 1 or
  // 2 frees it while the policy trains; with the policy's states offloaded while vLLM generates,
  // the generation phase is told, not counted.
  const auto swift_grpo = [&](const std::string& flags) {
    return Read("swift rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct --use_vllm true " +
                flags + "\n")
        .job;
  };
  EXPECT_DOUBLE_EQ(swift_grpo("--vllm_mode colocate").generation_memory, 0.9);
  EXPECT_FALSE(swift_grpo("--vllm_mode colocate").generation_sleeps);
  const TrainingJob swift_sleeping =
      swift_grpo("--vllm_mode colocate --vllm_gpu_memory_utilization 0.4 --sleep_level 1");
  EXPECT_DOUBLE_EQ(swift_sleeping.generation_memory, 0.4);
  EXPECT_TRUE(swift_sleeping.generation_sleeps);
  EXPECT_EQ(
      swift_grpo("--vllm_mode colocate --sleep_level 1 --offload_model true").generation_memory, 0);
  EXPECT_DOUBLE_EQ(swift_grpo("--vllm_mode colocate --offload_model true").generation_memory,
                   0.9);  // awake through the update: held beside it
  EXPECT_EQ(swift_grpo("--vllm_mode server").generation_memory, 0);
  // Its sync into vLLM gathers the weights in one batch unless --move_model_batches splits them.
  EXPECT_TRUE(swift_grpo("--vllm_mode colocate").generation_gathers);
  EXPECT_FALSE(swift_grpo("--vllm_mode colocate --move_model_batches 8").generation_gathers);
  // Its reference: GRPO's beta is 0.04 by default (rlhf_args.py), 0 drops the reference.
  EXPECT_TRUE(swift_grpo("--vllm_mode colocate").kl_reference);
  EXPECT_FALSE(swift_grpo("--vllm_mode colocate --beta 0").kl_reference);
  EXPECT_DOUBLE_EQ(Read("megatron rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct "
                        "--use_vllm true --vllm_mode colocate --vllm_gpu_memory_utilization 0.5\n")
                       .job.generation_memory,
                   0.5);
  EXPECT_EQ(objective(Read("NPROC_PER_NODE=8 swift sft --model Qwen/Qwen2.5-7B-Instruct "
                           "--max_length 2048\n")),
            "sft");
  Write("cfg/lf_dpo.yaml",
        "model_name_or_path: meta-llama/Llama-3.1-8B-Instruct\nstage: dpo\nfinetuning_type: lora\n"
        "cutoff_len: 2048\n");
  EXPECT_EQ(objective(Read("llamafactory-cli train cfg/lf_dpo.yaml\n")), "dpo");
  // LLaMA-Factory's pref_loss: orpo and simpo are reference-free objectives of stage dpo.
  Write("cfg/lf_orpo.yaml",
        "model_name_or_path: meta-llama/Llama-3.1-8B-Instruct\nstage: dpo\npref_loss: orpo\n"
        "finetuning_type: full\n");
  EXPECT_EQ(objective(Read("llamafactory-cli train cfg/lf_orpo.yaml\n")), "orpo");
  const JobRequest trl_dpo = Read(
      "accelerate launch trl/scripts/dpo.py --model_name_or_path "
      "Qwen/Qwen2.5-7B-Instruct --per_device_train_batch_size 2 "
      "--precompute_ref_log_probs true\n");
  EXPECT_EQ(objective(trl_dpo), "dpo");
  EXPECT_TRUE(trl_dpo.job.reference_precomputed);
  EXPECT_EQ(objective(Read("trl dpo --model_name_or_path Qwen/Qwen2.5-7B-Instruct\n")), "dpo");
  Write("cfg/axo_dpo.yaml", "base_model: meta-llama/Llama-3.1-8B\nrl: ipo\nadapter: lora\n");
  EXPECT_EQ(objective(Read("axolotl train cfg/axo_dpo.yaml\n")), "dpo");  // IPO: a DPO loss
  EXPECT_EQ(objective(Read("accelerate launch trl/scripts/sft.py --model_name_or_path "
                           "Qwen/Qwen2.5-7B-Instruct\n")),
            "sft");
  // A script called rlhf.py names no objective (dpo by default is ms-swift's subcommand's).
  const JobRequest rlhf_py = Read(
      "torchrun --nproc_per_node 8 train/rlhf.py --model_name_or_path "
      "meta-llama/Llama-3.1-8B --per_device_train_batch_size 4\n");
  EXPECT_EQ(objective(rlhf_py), "sft");
  EXPECT_FALSE(noted(rlhf_py));
  // An --rlhf_type the script leaves to the environment: unread, read favourably, never a guess.
  const JobRequest unknown =
      Read("swift rlhf --rlhf_type $RLHF_TYPE --model Qwen/Qwen2.5-7B-Instruct\n");
  EXPECT_EQ(objective(unknown), "sft");
  bool objective_unread = false;
  for (const UnreadSetting& u : unknown.unread)
    objective_unread = objective_unread || u.key == "objective";
  EXPECT_TRUE(objective_unread);
  // Reward models put both sequences of a pair through the model: a note says what is not counted.
  const auto reward_noted = [](const JobRequest& r) {
    for (const std::string& w : r.warnings)
      if (w.find("a reward model") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(reward_noted(
      Read("swift rlhf --rlhf_type rm --model Qwen/Qwen2.5-7B-Instruct --max_length 4096\n")));
  // TRL's own launches take its configs' defaults: max_length 1024 (a cap), and checkpointing
  // on since TRL 0.22, off before: unread.
  const JobRequest trl_defaults = Read("trl dpo --model_name_or_path Qwen/Qwen2.5-7B-Instruct\n");
  EXPECT_EQ(trl_defaults.job.seq_len, 1024);
  EXPECT_TRUE(trl_defaults.job.seq_len_is_cap);
  bool ac_unread = false;
  for (const UnreadSetting& u : trl_defaults.unread)
    ac_unread = ac_unread || u.key == "activation-checkpointing";
  EXPECT_TRUE(ac_unread);
  const JobRequest trl_given = Read(
      "trl sft --model_name_or_path Qwen/Qwen2.5-7B-Instruct --max_length 4096 "
      "--gradient_checkpointing false\n");
  EXPECT_EQ(trl_given.job.seq_len, 4096);
  EXPECT_TRUE(trl_given.unread.empty());
  // torchtune's DPO recipes.
  EXPECT_EQ(objective(Read("tune run --nproc_per_node 8 full_dpo_distributed --config "
                           "llama3_1/8B_full_dpo\n")),
            "dpo");

  // Not training.
  EXPECT_FALSE(
      Read("swift infer --model Qwen/Qwen2.5-7B-Instruct --adapters out/ckpt\n").is_llm_job);
  EXPECT_FALSE(Read("swift export --model Qwen/Qwen2.5-7B-Instruct --quant_bits 4\n").is_llm_job);
  EXPECT_FALSE(Read("swift build -c release\n").is_llm_job);  // the Swift language's
  EXPECT_FALSE(Read("swift main.swift\n").is_llm_job);
  // The SWIFT astrophysics code with its YAML parameter file (swiftsim.com): no LLM job.
  Write("cfg/eagle_25.yml", "Cosmology:\n  h: 0.6777\nTimeIntegration:\n  time_begin: 0.\n");
  EXPECT_FALSE(Read("srun ./swift --cosmology --hydro --threads=28 cfg/eagle_25.yml\n").is_llm_job);
  // A non-training subcommand under a launcher.
  EXPECT_FALSE(Read("torchrun --nproc_per_node=4 /opt/venv/bin/swift infer --model "
                    "Qwen/Qwen2.5-72B-Instruct\n")
                   .is_llm_job);

  // NPROC_PER_NODE exported on an earlier line (a multi-node script's form) starts torchrun too;
  // set without export, swift does not see it.
  const auto sharding_unread = [](const JobRequest& r) {
    for (const UnreadSetting& u : r.unread)
      if (u.key == "sharding") return true;
    return false;
  };
  const std::string launch = "swift sft --model Qwen/Qwen2.5-7B-Instruct --max_length 2048\n";
  EXPECT_FALSE(
      sharding_unread(Read("export NPROC_PER_NODE=8\nexport NNODES=$SLURM_NNODES\n" + launch)));
  EXPECT_FALSE(sharding_unread(Read("declare -x NPROC_PER_NODE=8\n" + launch)));
  EXPECT_TRUE(sharding_unread(Read("NPROC_PER_NODE=8\n" + launch)));
  EXPECT_TRUE(sharding_unread(Read(launch)));

  // 2.x with its own model type alone: training, the model unread, the other flags read.
  const JobRequest typed2 = Read(
      "NPROC_PER_NODE=8 swift sft --model_type qwen2-7b-instruct --sft_type lora --lora_rank 64 "
      "--max_length 8192 --gradient_accumulation_steps 16 --deepspeed default-zero3\n");
  ASSERT_TRUE(typed2.is_llm_job);
  EXPECT_TRUE(typed2.job.model.empty());
  EXPECT_EQ(ValueOf(typed2, "lora-r"), "64");
  EXPECT_EQ(ValueOf(typed2, "seq-len"), "8192");
  EXPECT_EQ(ValueOf(typed2, "grad-accum"), "16");
  EXPECT_EQ(ValueOf(typed2, "sharding"), "zero3");

  // --bf16 chooses the autocast only: the weights stay as loaded; FSDP upcasts them (accelerate).
  const std::string base = "NPROC_PER_NODE=8 swift sft --model Qwen/Qwen2.5-7B-Instruct ";
  EXPECT_EQ(ValueOf(Read(base + "--bf16 true\n"), "precision"), "pure-bf16");
  EXPECT_EQ(ValueOf(Read(base + "--fsdp fsdp2\n"), "precision"), "amp-bf16");
  EXPECT_EQ(ValueOf(Read(base + "--torch_dtype float32 --deepspeed zero2\n"), "precision"),
            "mixed-fp16");

  // 4.x's ENV map alone starts torchrun: no one-process reading.
  Write("cfg/swift_env.yaml",
        "model: Qwen/Qwen2.5-7B-Instruct\nmax_length: 4096\nENV:\n  NPROC_PER_NODE: 8\n");
  const JobRequest env = Read("swift sft cfg/swift_env.yaml\n");
  ASSERT_TRUE(env.is_llm_job);
  EXPECT_TRUE(env.unread.empty()) << env.unread.front().key;
}

// Megatron-SWIFT: `megatron sft` with Megatron-LM's flags spelled with underscores (read by the
// Megatron reader) and ms-swift's own (swift/megatron/argument/megatron_args.py at v3.12.6:
// train_type default 'full', use_distributed_optimizer default True, recompute_granularity
// default 'selective'; model_args torch_dtype default the model's). The script is ms-swift's
// examples/megatron/lora/moe.sh shape. Megatron turns sequence parallelism off without tensor
// parallelism (megatron/training/arguments.py), so `--sequence_parallel true` at tp 1 is no error.
TEST_F(ScriptFilesTest, MegatronSwiftFlagsAndDefaults) {
  const JobRequest lora = Read(
      "NPROC_PER_NODE=2 megatron sft --model Qwen/Qwen3-30B-A3B --load_safetensors true "
      "--train_type lora --lora_rank 8 --target_modules all-linear --expert_model_parallel_size 2 "
      "--micro_batch_size 8 --global_batch_size 16 --recompute_granularity full "
      "--recompute_method uniform --recompute_num_layers 1 --max_epochs 1 --max_length 2048 "
      "--sequence_parallel true\n");
  ASSERT_TRUE(lora.is_llm_job);
  EXPECT_EQ(lora.job.model, "Qwen/Qwen3-30B-A3B");
  EXPECT_EQ(ValueOf(lora, "framework"), "megatron");
  EXPECT_EQ(ValueOf(lora, "method"), "lora");
  EXPECT_EQ(ValueOf(lora, "lora-r"), "8");
  EXPECT_EQ(ValueOf(lora, "ep"), "2");
  EXPECT_EQ(ValueOf(lora, "micro-batch"), "8");
  EXPECT_EQ(ValueOf(lora, "activation-checkpointing"), "full");
  EXPECT_EQ(ValueOf(lora, "sharding"), "zero1");
  EXPECT_EQ(ValueOf(lora, "precision"), "mixed-bf16");
  EXPECT_EQ(ValueOf(lora, "seq-len"), "2048");
  EXPECT_TRUE(lora.job.seq_len_is_cap);
  EXPECT_EQ(ValueOf(lora, "sp"), "");
  const JobRequest full = Read(
      "NPROC_PER_NODE=8 megatron pt --model Qwen/Qwen2.5-7B --tensor_model_parallel_size 2 "
      "--sequence_parallel true --use_distributed_optimizer false --max_length 4096 "
      "--packing true --torch_dtype float16\n");
  EXPECT_EQ(ValueOf(full, "method"), "full");
  EXPECT_EQ(ValueOf(full, "activation-checkpointing"), "selective");
  EXPECT_EQ(ValueOf(full, "sharding"), "ddp");
  EXPECT_EQ(ValueOf(full, "sp"), "true");
  EXPECT_EQ(ValueOf(full, "precision"), "mixed-fp16");
  EXPECT_FALSE(full.job.seq_len_is_cap);
  EXPECT_FALSE(Read("megatron export --load out/ckpt --to_hf true\n").is_llm_job);
}

// A YAML of the HF Trainer's and TRL's own argument names: TrlParser reads `--config x.yaml` (TRL's
// CLI `trl sft --config`, open-r1's src/open_r1/sft.py), the alignment-handbook's
// H4ArgumentParser a YAML first argument (scripts/run_sft.py recipes/.../config_full.yaml); the
// line's own flags win. A --config or .yaml of another program is no such file (Lightning CLI's
// `fit --config`): only one with model_name_or_path is read.
TEST_F(ScriptFilesTest, HfArgumentYamlOfTrlAndTheAlignmentHandbook) {
  Write("cfg/sft_full.yaml",
        "model_name_or_path: mistralai/Mistral-7B-v0.1\ntorch_dtype: bfloat16\nbf16: true\n"
        "gradient_checkpointing: true\nmax_seq_length: 2048\nper_device_train_batch_size: 16\n"
        "gradient_accumulation_steps: 2\nnum_train_epochs: 1\n");
  Write("cfg/zero3.yaml",
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\nmixed_precision: bf16\n");
  for (const std::string line :
       {"accelerate launch --config_file cfg/zero3.yaml scripts/run_sft.py cfg/sft_full.yaml\n",
        "accelerate launch --config_file cfg/zero3.yaml src/open_r1/sft.py --config "
        "cfg/sft_full.yaml\n"}) {
    const JobRequest r = Read(line);
    ASSERT_TRUE(r.is_llm_job) << line;
    EXPECT_EQ(r.job.model, "mistralai/Mistral-7B-v0.1") << line;
    EXPECT_EQ(ValueOf(r, "micro-batch"), "16") << line;
    EXPECT_EQ(ValueOf(r, "sharding"), "zero3") << line;
    EXPECT_EQ(OriginOf(r, "activation-checkpointing"), "cfg/sft_full.yaml: gradient_checkpointing")
        << line;
  }
  const JobRequest trl =
      Read("trl sft --config cfg/sft_full.yaml --per_device_train_batch_size 4\n");
  ASSERT_TRUE(trl.is_llm_job);
  EXPECT_EQ(ValueOf(trl, "micro-batch"), "4");  // the line's flag over the file's key
  Write("cfg/lightning.yaml", "model:\n  class_path: MyNet\n  lr: 0.1\ntrainer:\n  devices: 8\n");
  EXPECT_FALSE(Read("python main.py fit --config cfg/lightning.yaml\n").is_llm_job);
  Write("cfg/resnet.yaml", "model: resnet50\nbatch_size: 256\n");
  EXPECT_FALSE(Read("torchrun --nproc_per_node 8 train.py cfg/resnet.yaml\n").is_llm_job);
}

// A trainer launched through accelerate is the trainer's launch: axolotl's own settings apply
// (kbit-upcast false: axolotl casts norms and embeddings back after PEFT's preparation), also
// when only accelerate's file is read (LLaMA-Factory's flags form, an axolotl YAML missing).
TEST_F(ScriptFilesTest, TrainerUnderAccelerateKeepsItsOwnSettings) {
  Write("cfg/acc.yaml", "distributed_type: FSDP\nmixed_precision: bf16\n");
  const JobRequest lf = Read(
      "accelerate launch --config_file cfg/acc.yaml src/train_bash.py --stage sft "
      "--model_name_or_path meta-llama/Llama-2-7b-hf --finetuning_type lora\n");
  ASSERT_TRUE(lf.is_llm_job);
  EXPECT_EQ(ValueOf(lf, "freeze-vision"), "true");  // LLaMA-Factory's rule's, not accelerate's
  EXPECT_TRUE(
      Read("accelerate launch --config_file cfg/acc.yaml -m axolotl.cli.train missing.yml\n")
          .is_llm_job);
  Write("cfg/fsdp.yaml", "distributed_type: FSDP\nmixed_precision: bf16\n");
  Write("cfg/axo.yaml",
        "base_model: meta-llama/Llama-3.1-8B\nadapter: qlora\nload_in_4bit: true\n");
  const JobRequest r =
      Read("accelerate launch --config_file cfg/fsdp.yaml -m axolotl.cli.train cfg/axo.yaml\n");
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(ValueOf(r, "kbit-upcast"), "false");
  EXPECT_EQ(ValueOf(r, "sharding"), "fsdp-full");
}

// Evaluation while training and its batch (eval-batch): transformers.TrainingArguments evaluates
// when eval_strategy (evaluation_strategy before 4.41) is steps or epoch, or after training with
// --do_eval in the example scripts, per_device_eval_batch_size sequences per GPU (default 8);
// axolotl when val_set_size > 0, eval_batch_size sequences (default micro_batch_size); LLaMA-
// Factory passes the Trainer's keys through.
TEST_F(ScriptFilesTest, EvaluationAndItsBatchAreRead) {
  const std::string hf =
      "torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B "
      "--per_device_train_batch_size 2 ";
  EXPECT_EQ(Read(hf + "\n").job.eval_batch, 0);
  EXPECT_EQ(Read(hf + "--eval_strategy steps --eval_steps 500\n").job.eval_batch, 8);
  EXPECT_EQ(
      Read(hf + "--evaluation_strategy epoch --per_device_eval_batch_size 4\n").job.eval_batch, 4);
  EXPECT_EQ(Read(hf + "--eval_strategy no --per_device_eval_batch_size 4\n").job.eval_batch, 0);
  EXPECT_EQ(Read(hf + "--do_eval\n").job.eval_batch, 8);
  EXPECT_EQ(OriginOf(Read(hf + "--do_eval --per_device_eval_batch_size 2\n"), "eval-batch"),
            "line 1: --per_device_eval_batch_size");
  Write("cfg/lf.yaml",
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nfinetuning_type: lora\ncutoff_len: 1024\n"
        "per_device_train_batch_size: 1\nval_size: 0.001\nper_device_eval_batch_size: 1\n"
        "eval_strategy: steps\neval_steps: 10000\n");
  const JobRequest lf = Read("llamafactory-cli train cfg/lf.yaml\n");
  EXPECT_EQ(lf.job.eval_batch, 1);
  EXPECT_EQ(OriginOf(lf, "eval-batch"), "cfg/lf.yaml: per_device_eval_batch_size");
  Write("cfg/axo.yaml",
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 16\nsequence_len: 2048\n"
        "micro_batch_size: 2\nval_set_size: 0.05\n");
  EXPECT_EQ(Read("accelerate launch -m axolotl.cli.train cfg/axo.yaml\n").job.eval_batch, 2);
  Write("cfg/axo0.yaml",
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nmicro_batch_size: 2\n"
        "val_set_size: 0\n");
  EXPECT_EQ(Read("accelerate launch -m axolotl.cli.train cfg/axo0.yaml\n").job.eval_batch, 0);
  // A strategy from the environment is not guessed.
  EXPECT_EQ(Read(hf + "--eval_strategy $STRATEGY\n").job.eval_batch, 0);
}

// How often a job saves and evaluates (save-every, eval-every, eval-samples), as each framework
// lets people say it; what a script does not say stays unset (the framework's default applies,
// walltime.h PeriodicWorkOf).
TEST_F(ScriptFilesTest, SavesAndEvaluationsAreRead) {
  const std::string hf =
      "torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B "
      "--per_device_train_batch_size 2 ";
  const auto every = [](const JobRequest& r, bool save) {
    return ToString(save ? r.job.save_every : r.job.eval_every);
  };
  EXPECT_EQ(every(Read(hf + "\n"), true), "default");
  EXPECT_EQ(every(Read(hf + "--save_steps 200\n"), true), "200");
  EXPECT_EQ(every(Read(hf + "--save_steps 0.1\n"), true), "0.1");
  EXPECT_EQ(every(Read(hf + "--save_strategy epoch --save_steps 200\n"), true), "1/epoch");
  EXPECT_EQ(every(Read(hf + "--save_strategy no\n"), true), "never");
  // Evaluation: every eval_steps, else logging_steps; "no" with --do_eval evaluates after
  // training only.
  EXPECT_EQ(every(Read(hf + "--eval_strategy steps --eval_steps 250\n"), false), "250");
  EXPECT_EQ(every(Read(hf + "--eval_strategy steps --logging_steps 10\n"), false), "10");
  EXPECT_EQ(every(Read(hf + "--eval_strategy steps\n"), false), "default");
  EXPECT_EQ(every(Read(hf + "--do_eval\n"), false), "never");
  EXPECT_EQ(every(Read(hf + "--eval_steps 250\n"), false), "default");  // no evaluation at all
  // Both names (transformers 4.41-4.45): evaluation_strategy overrides eval_strategy
  // (TrainingArguments.__post_init__), whichever comes first on the line.
  for (const char* both : {"--eval_strategy no --evaluation_strategy steps --eval_steps 250\n",
                           "--evaluation_strategy steps --eval_strategy no --eval_steps 250\n"}) {
    const JobRequest r = Read(hf + both);
    EXPECT_EQ(every(r, false), "250") << both;
    EXPECT_GT(r.job.eval_batch, 0) << both;
  }
  EXPECT_EQ(every(Read(hf + "--eval_strategy steps --evaluation_strategy epoch\n"), false),
            "1/epoch");
  EXPECT_EQ(Read(hf + "--do_eval --max_eval_samples 1000\n").job.eval_samples, 1000);
  Write("cfg/axo.yaml",
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 16\nsequence_len: 2048\n"
        "micro_batch_size: 2\nval_set_size: 0.05\nsaves_per_epoch: 4\nevals_per_epoch: 2\n");
  const JobRequest axo = Read("accelerate launch -m axolotl.cli.train cfg/axo.yaml\n");
  EXPECT_EQ(every(axo, true), "4/epoch");
  EXPECT_EQ(every(axo, false), "2/epoch");
  EXPECT_EQ(axo.job.eval_samples, 0.05);
  Write("cfg/lf.yaml",
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nfinetuning_type: lora\ncutoff_len: 1024\n"
        "per_device_train_batch_size: 1\nval_size: 2000\neval_strategy: steps\neval_steps: 100\n"
        "save_steps: 1000\n");
  const JobRequest lf = Read("llamafactory-cli train cfg/lf.yaml\n");
  EXPECT_EQ(every(lf, true), "1000");
  EXPECT_EQ(every(lf, false), "100");
  EXPECT_EQ(lf.job.eval_samples, 2000);
  // Megatron: nothing is written without --save; --eval-iters global batches per evaluation.
  const std::string meg =
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 256 --num-attention-heads 4 "
      "--seq-length 512 --micro-batch-size 2 --global-batch-size 64 ";
  EXPECT_EQ(every(Read(meg + "\n"), true), "never");
  EXPECT_EQ(every(Read(meg + "--save ckpt\n"), true), "default");
  const JobRequest m = Read(meg +
                            "--save ckpt --save-interval 2500 --eval-interval 500 "
                            "--eval-iters 10\n");
  EXPECT_EQ(every(m, true), "2500");
  EXPECT_EQ(every(m, false), "500");
  EXPECT_EQ(m.job.eval_samples, 640);
  EXPECT_EQ(every(Read(meg + "--eval-iters 0\n"), false), "never");
  // torchtitan: checkpoints only when enabled, every checkpoint.interval steps (default 500);
  // validation only when enabled, every validation.freq steps.
  for (const auto& [toml, save, eval] :
       {std::tuple{"[checkpoint]\nenable = true\ninterval = 250\n", "250", "default"},
        std::tuple{"[checkpoint]\nenable = true\n", "500", "default"},
        std::tuple{"[checkpoint]\nenable = false\ninterval = 250\n", "never", "default"},
        std::tuple{"[training]\nsteps = 100\n", "default", "default"},
        std::tuple{"[validation]\nenable = true\nfreq = 250\n", "default", "250"},
        std::tuple{"[validation]\nenable = false\nfreq = 250\n", "default", "never"}}) {
    Write("cfg/titan.toml", std::string("[model]\nname = \"llama3\"\nflavor = \"8B\"\n") + toml);
    const JobRequest titan =
        Read("torchrun -m torchtitan.train --job.config_file cfg/titan.toml\n");
    EXPECT_EQ(every(titan, true), save) << toml;
    EXPECT_EQ(every(titan, false), eval) << toml;
  }
  // litgpt: train.save_interval and eval.interval.
  Write("cfg/lit.yaml",
        "checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf\ntrain:\n  save_interval: 800\n"
        "  micro_batch_size: 1\neval:\n  interval: 100\n");
  const JobRequest lit = Read("litgpt finetune lora --config cfg/lit.yaml\n");
  EXPECT_EQ(every(lit, true), "800");
  EXPECT_EQ(every(lit, false), "100");
  // Under DeepSpeed (framework deepspeed) the HF Trainer's own defaults are written out.
  Write("cfg/z3.json", "{\"zero_optimization\": {\"stage\": 3}}");
  const std::string ds =
      "deepspeed train.py --model_name_or_path meta-llama/Llama-3.1-8B "
      "--deepspeed cfg/z3.json ";
  EXPECT_EQ(every(Read(ds + "\n"), true), "500");
  EXPECT_EQ(every(Read(ds + "--save_steps 100\n"), true), "100");
  EXPECT_EQ(every(Read(ds + "--eval_strategy steps\n"), false), "500");
  EXPECT_EQ(every(Read(ds + "\n"), false), "default");
  // A bad value is the user's error, named with its origin, and nothing else is lost.
  const JobRequest bad = Read(hf + "--save_steps 0\n");
  EXPECT_EQ(every(bad, true), "default");
}

// How an FSDP job saves (state-dict): accelerate's fsdp_state_dict_type, axolotl's
// fsdp_config.state_dict_type; FSDP2 (fsdp_version 2) saves sharded unless told.
TEST_F(ScriptFilesTest, StateDictTypeIsRead) {
  Write("cfg/fsdp.yaml",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
        "  fsdp_state_dict_type: SHARDED_STATE_DICT\n");
  const std::string line =
      "accelerate launch --config_file cfg/fsdp.yaml train.py --model_name_or_path "
      "meta-llama/Llama-3.1-8B --bf16\n";
  const JobRequest acc = Read(line);
  EXPECT_EQ(acc.job.state_dict, StateDict::kSharded);
  EXPECT_NE(OriginOf(acc, "state-dict").find("cfg/fsdp.yaml"), std::string::npos)
      << OriginOf(acc, "state-dict");
  Write("cfg/fsdp.yaml",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n");
  EXPECT_EQ(Read(line).job.state_dict, StateDict::kAuto);
  EXPECT_TRUE(Read(line).job.SavesFullStateDict());
  Write("cfg/fsdp.yaml",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
        "  fsdp_version: 2\n");
  EXPECT_EQ(Read(line).job.state_dict, StateDict::kSharded);
  Write("cfg/axo.yaml",
        "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nfsdp_version: 2\n"
        "fsdp_config:\n  state_dict_type: FULL_STATE_DICT\n");
  EXPECT_EQ(Read("accelerate launch -m axolotl.cli.train cfg/axo.yaml\n").job.state_dict,
            StateDict::kFull);
  // DeepSpeed ZeRO-3 consolidating its 16-bit weights at each save.
  Write(
      "cfg/z3.json",
      R"({"zero_optimization": {"stage": 3, "stage3_gather_16bit_weights_on_model_save": true}})");
  const JobRequest z3 = Read(
      "deepspeed train.py --model_name_or_path meta-llama/Llama-3.1-8B --deepspeed cfg/z3.json\n");
  EXPECT_EQ(z3.job.sharding, Sharding::kZero3);
  EXPECT_EQ(z3.job.state_dict, StateDict::kFull);
  EXPECT_TRUE(z3.job.SavesFullStateDict());
}

// Which dtype the weights are loaded in decides their bytes and the optimizer's (torch's AdamW
// allocates its states like the parameter): axolotl and LLaMA-Factory load in their bf16 compute
// dtype, TRL in --torch_dtype; LLaMA-Factory casts full fine-tuning's parameters to fp32 unless
// pure_bf16 (model/adapter.py); DeepSpeed keeps an fp32 master whatever the load dtype.
TEST_F(ScriptFilesTest, WeightsLoadedInBf16TrainAsPureBf16) {
  Write("cfg/axo.yaml",
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 16\nsequence_len: 2048\n"
        "micro_batch_size: 2\nbf16: auto\n");
  JobRequest r = Read("#!/bin/bash\naxolotl train cfg/axo.yaml\n");
  EXPECT_EQ(r.job.precision, Precision::kPureBf16) << ValueOf(r, "precision");
  // LLaMA-Factory freezes a multimodal model's vision tower unless freeze_vision_tower: false;
  // InternVL's --freeze_backbone says so on the line.
  Write("cfg/lf_vl.yaml",
        "model_name_or_path: Qwen/Qwen2-VL-7B-Instruct\nfinetuning_type: full\nbf16: true\n");
  EXPECT_TRUE(Read("llamafactory-cli train cfg/lf_vl.yaml\n").job.freeze_vision);
  EXPECT_FALSE(
      Read("llamafactory-cli train cfg/lf_vl.yaml freeze_vision_tower=false\n").job.freeze_vision);
  const std::string internvl =
      "torchrun --nproc_per_node 8 internvl/train/internvl_chat_finetune.py --model_name_or_path "
      "OpenGVLab/InternVL2_5-8B --freeze_llm False --freeze_backbone ";
  EXPECT_TRUE(Read(internvl + "True\n").job.freeze_vision);
  EXPECT_FALSE(Read(internvl + "False\n").job.freeze_vision);
  EXPECT_FALSE(Read(internvl + "False\n").job.freeze_language);
  // InternVL's stage 1.5 (--freeze_llm True) and LLaMA-Factory's freeze_language_model freeze the
  // language model instead.
  const std::string stage15 =
      "torchrun --nproc_per_node 8 internvl/train/internvl_chat_pretrain.py --model_name_or_path "
      "OpenGVLab/InternVL2_5-8B --freeze_llm True --freeze_backbone False --freeze_mlp False\n";
  EXPECT_TRUE(Read(stage15).job.freeze_language);
  EXPECT_FALSE(Read(stage15).job.freeze_vision);
  EXPECT_TRUE(Read("llamafactory-cli train cfg/lf_vl.yaml freeze_language_model=true "
                   "freeze_vision_tower=false\n")
                  .job.freeze_language);
  // axolotl converts what PEFT's prepare_model_for_kbit_training cast to fp32 back (kbit-upcast);
  // a TRL script does not.
  EXPECT_FALSE(r.job.kbit_upcast);
  EXPECT_TRUE(Read("accelerate launch trl/scripts/sft.py --model_name_or_path "
                   "meta-llama/Llama-3.1-8B --load_in_4bit\n")
                  .job.kbit_upcast);

  Write("cfg/lf_full.yaml",
        "model_name_or_path: meta-llama/Llama-3.1-8B\nfinetuning_type: full\nbf16: true\n");
  r = Read("#!/bin/bash\nllamafactory-cli train cfg/lf_full.yaml\n");
  EXPECT_EQ(r.job.precision, Precision::kAmpBf16);
  Write("cfg/lf_pure.yaml",
        "model_name_or_path: meta-llama/Llama-3.1-8B\nfinetuning_type: full\nbf16: true\n"
        "pure_bf16: true\n");
  r = Read("#!/bin/bash\nllamafactory-cli train cfg/lf_pure.yaml\n");
  EXPECT_EQ(r.job.precision, Precision::kPureBf16);

  const std::string sft =
      "accelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B ";
  const std::string trl = sft + "--bf16 ";
  EXPECT_EQ(Read(trl + "--torch_dtype bfloat16\n").job.precision, Precision::kPureBf16);
  EXPECT_EQ(Read(trl + "\n").job.precision, Precision::kAmpBf16);  // loaded as the default fp32
  EXPECT_EQ(Read(sft + "--torch_dtype bfloat16 --fp16\n").job.precision, Precision::kAmpFp16);
  EXPECT_EQ(Read(trl + "--torch_dtype bfloat16 --deepspeed cfg/ds_zero2.json\n").job.precision,
            Precision::kMixedBf16);
  EXPECT_EQ(Read(trl + "--torch_dtype bfloat16 --fsdp 'full_shard auto_wrap'\n").job.precision,
            Precision::kAmpBf16);  // accelerate upcasts FSDP's parameters to fp32
}

// litgpt's YAML (config_hub/finetune/*/lora.yaml): its own framework, LoRA dropout read.
TEST_F(ScriptFilesTest, LitgptYamlIsLitgpt) {
  Write("cfg/lora.yaml",
        "checkpoint_dir: meta-llama/Llama-2-7b-hf\nlora_r: 8\nlora_dropout: 0.05\n"
        "train:\n  micro_batch_size: 4\n  max_seq_length: 512\ndevices: 1\n");
  const JobRequest r = Read("#!/bin/bash\nlitgpt finetune_lora --config cfg/lora.yaml\n");
  EXPECT_EQ(r.job.framework, Framework::kLitgpt);
  EXPECT_EQ(r.job.lora_r, 8);
  EXPECT_DOUBLE_EQ(r.job.lora_dropout, 0.05);
  // Its LoRA parts, as config_hub/finetune/*/lora.yaml sets them: all of them here.
  Write("cfg/all.yaml",
        "checkpoint_dir: google/gemma-2b\nlora_r: 8\nlora_query: true\nlora_key: true\n"
        "lora_value: true\nlora_projection: true\nlora_mlp: true\nlora_head: true\n");
  EXPECT_EQ(Read("#!/bin/bash\nlitgpt finetune_lora --config cfg/all.yaml\n").job.lora_targets,
            (std::vector<std::string>{"q", "k", "v", "o", "gate", "up", "down", "lm_head"}));
}

// litgpt's LoRA parts, one boolean each (litgpt/finetune/lora.py setup(): query and value on by
// default, key, projection, mlp and head off).
TEST_F(ScriptFilesTest, LitgptLoraPartsOnItsCommandLine) {
  using V = std::vector<std::string>;
  const std::string run = "litgpt finetune lora microsoft/phi-2 ";
  EXPECT_EQ(Read("#!/bin/bash\n" + run + "--lora_mlp true --lora_head true\n").job.lora_targets,
            (V{"q", "v", "gate", "up", "down", "lm_head"}));
  EXPECT_EQ(Read("#!/bin/bash\n" + run + "--lora_query false --lora_key true\n").job.lora_targets,
            (V{"k", "v"}));
  EXPECT_TRUE(Read("#!/bin/bash\n" + run + "\n").job.lora_targets.empty());
}

// litgpt's command line sets its config's fields by their dotted paths (jsonargparse, as
// `litgpt finetune_lora --help` lists them), over what its --config file says.
TEST_F(ScriptFilesTest, LitgptCommandLineSetsItsTrainFields) {
  Write("cfg/lora.yaml",
        "checkpoint_dir: meta-llama/Llama-2-7b-hf\ntrain:\n  micro_batch_size: 1\n"
        "  global_batch_size: 64\n  max_seq_length: 2048\ndevices: 8\n");
  const JobRequest r = Read(
      "#!/bin/bash\nlitgpt finetune_lora --config cfg/lora.yaml --train.micro_batch_size 4 "
      "--train.max_seq_length 512 --train.epochs 3\n");
  EXPECT_EQ(r.job.micro_batch, 4);
  EXPECT_EQ(r.job.seq_len, 512);
  EXPECT_TRUE(r.job.seq_len_is_cap);
  EXPECT_DOUBLE_EQ(r.job.epochs, 3);
  EXPECT_EQ(r.job.global_batch, 64);  // from the file: 64 / (4 x 8 devices) = 2 accumulated
  EXPECT_EQ(r.job.grad_accum, 2);
  EXPECT_EQ(ValueOf(r, "method"), "lora");
  // litgpt rounds the accumulation down (litgpt/args.py: global_batch_size // devices //
  // micro_batch_size): 100 / 8 / 4 = 3, so a step takes 3 x 32 = 96 sequences, which the time
  // model's global batch must then be (it refuses one that is not a multiple).
  const JobRequest rounded = Read(
      "#!/bin/bash\nlitgpt finetune_lora --config cfg/lora.yaml --train.micro_batch_size 4 "
      "--train.global_batch_size 100\n");
  EXPECT_EQ(rounded.job.grad_accum, 3);
  EXPECT_EQ(rounded.job.global_batch, 96);
}

// PEFT modules_to_save as the trainers spell it: axolotl's lora_modules_to_save (a YAML list; its
// docs ask for [embed_tokens, lm_head] when new tokens are added), LLaMA-Factory's
// additional_target (comma-separated), TRL's --lora_modules_to_save (nargs).
TEST_F(ScriptFilesTest, ModulesToSaveFromTheTrainersKeys) {
  Write("cfg/axo.yaml",
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 16\n"
        "lora_modules_to_save:\n  - embed_tokens\n  - lm_head\n");
  Write("cfg/lf.yaml",
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nfinetuning_type: lora\n"
        "additional_target: lm_head\n");
  const struct {
    const char* script;
    bool embedding, head;
  } kCases[] = {
      {"accelerate launch -m axolotl.cli.train cfg/axo.yaml\n", true, true},
      {"llamafactory-cli train cfg/lf.yaml\n", false, true},
      {"accelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B "
       "--use_peft --lora_modules_to_save embed_tokens lm_head\n",
       true, true},
  };
  for (const auto& c : kCases) {
    const JobRequest r = Read(c.script);
    EXPECT_EQ(r.job.save_embedding, c.embedding) << c.script;
    EXPECT_EQ(r.job.save_head, c.head) << c.script;
  }
  // LLaMA-Factory casts every trainable parameter to fp32 unless pure_bf16 (model/adapter.py
  // cast_trainable_params_to_fp32), its saved head with them; axolotl and TRL do not.
  Write("cfg/lf_bf16.yaml",
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nfinetuning_type: lora\nbf16: true\n"
        "additional_target: lm_head\n");
  EXPECT_TRUE(Read("llamafactory-cli train cfg/lf_bf16.yaml\n").job.trainable_fp32);
  Write("cfg/lf_pure.yaml",
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nfinetuning_type: lora\npure_bf16: true\n"
        "additional_target: lm_head\n");
  EXPECT_FALSE(Read("llamafactory-cli train cfg/lf_pure.yaml\n").job.trainable_fp32);
  EXPECT_FALSE(Read(kCases[0].script).job.trainable_fp32);
}

// DoRA as the trainers spell it (TRL/PEFT --use_dora, axolotl peft_use_dora, LLaMA-Factory
// use_dora): read, and refused by the estimator with a message that names it, so the job is
// accepted unestimated rather than given a memory figure or a time limit that DoRA would exceed.
TEST_F(ScriptFilesTest, DoraIsReadAndNotEstimated) {
  Write("cfg/axo.yaml",
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\npeft_use_dora: true\n");
  Write("cfg/lf.yaml",
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nfinetuning_type: lora\nuse_dora: true\n");
  for (const char* script :
       {"accelerate launch -m axolotl.cli.train cfg/axo.yaml\n",
        "llamafactory-cli train cfg/lf.yaml\n",
        "accelerate launch trl/scripts/sft.py --model_name_or_path meta-llama/Llama-3.1-8B "
        "--use_peft --use_dora\n"}) {
    const JobRequest r = Read(script);
    EXPECT_TRUE(r.job.dora) << script;
    const Status v = ValidateJob(r.job);
    ASSERT_FALSE(v.ok()) << script;
    EXPECT_NE(v.message().find("DoRA is not modelled"), std::string::npos) << v.message();
  }
  EXPECT_FALSE(Read("llamafactory-cli train cfg/lf.yaml\n").job.save_head);  // nothing else set
}

// litgpt's --quantize on the command line (finetune/lora.py: bnb.nf4, bnb.nf4-dq, bnb.fp4,
// bnb.fp4-dq, bnb.int8, applied by Lightning's BitsandbytesPrecision): the LoRA runs on a
// quantised base, as the config files' `quantize` key says.
TEST_F(ScriptFilesTest, LitgptQuantizeFlagIsQlora) {
  const std::string run = "#!/bin/bash\nlitgpt finetune lora --checkpoint_dir x --quantize ";
  const JobRequest nf4 = Read(run + "bnb.nf4\n");
  EXPECT_EQ(nf4.job.method, Method::kQlora);
  EXPECT_EQ(nf4.job.quant, Quant::kNf4);
  EXPECT_FALSE(nf4.job.double_quant);
  const JobRequest dq = Read(run + "bnb.fp4-dq\n");
  EXPECT_EQ(dq.job.quant, Quant::kFp4);
  EXPECT_TRUE(dq.job.double_quant);
  EXPECT_EQ(Read(run + "bnb.int8\n").job.quant, Quant::kInt8);
  EXPECT_EQ(Read("#!/bin/bash\nlitgpt finetune lora --checkpoint_dir x\n").job.method,
            Method::kLora);
}

// litgpt's model on the command line: the checkpoint folder after the subcommand (`litgpt finetune
// lora microsoft/phi-2`, litgpt/__main__.py's positional checkpoint_dir) or --checkpoint_dir
// (lit-gpt's scripts); its own framework either way.
TEST_F(ScriptFilesTest, LitgptModelOnTheCommandLine) {
  const JobRequest pos =
      Read("#!/bin/bash\nlitgpt finetune lora microsoft/phi-2 --quantize bnb.nf4\n");
  EXPECT_EQ(pos.job.model, "microsoft/phi-2");
  EXPECT_EQ(pos.job.framework, Framework::kLitgpt);
  EXPECT_EQ(pos.job.method, Method::kQlora);
  EXPECT_EQ(
      Read("#!/bin/bash\nlitgpt finetune_full checkpoints/meta-llama/Llama-2-7b-hf\n").job.model,
      "checkpoints/meta-llama/Llama-2-7b-hf");
  const JobRequest flag =
      Read("#!/bin/bash\nlitgpt finetune lora --checkpoint_dir checkpoints/microsoft/phi-2\n");
  EXPECT_EQ(flag.job.model, "checkpoints/microsoft/phi-2");
  EXPECT_EQ(flag.job.framework, Framework::kLitgpt);
  // Not training: `litgpt download` names a model too.
  EXPECT_FALSE(Read("#!/bin/bash\nlitgpt download microsoft/phi-2\n").is_llm_job);
}

// litgpt pretrain --config: a model given by its litgpt.Config fields (model_config) instead of a
// name. With TinyLlama-1.1B's fields (litgpt/config.py "tiny-llama-1.1b": LLaMAMLP, 22 layers, 4
// query groups, 5632, vocabulary 32000) the count is the published 1,100,048,384 (TinyLlama's
// model card and safetensors); with Pythia-160m's (litgpt's defaults GptNeoxMLP, rotary 0.25,
// parallel residual; padded vocabulary 50304) the published 162,322,944 (Pythia paper / Hub).
TEST_F(ScriptFilesTest, LitgptModelConfigDescribesTheModel) {
  Write("cfg/tiny.yaml",
        "model_name:\nmodel_config:\n  name: my-1b\n  block_size: 2048\n  vocab_size: 32000\n"
        "  padding_multiple: 64\n  n_layer: 22\n  n_head: 32\n  n_embd: 2048\n"
        "  rotary_percentage: 1.0\n  parallel_residual: false\n  bias: false\n"
        "  norm_class_name: RMSNorm\n  mlp_class_name: LLaMAMLP\n  intermediate_size: 5632\n"
        "  n_query_groups: 4\ntrain:\n  micro_batch_size: 8\n  max_seq_length: 2048\n"
        "devices: auto\n");
  const JobRequest r = Read("#!/bin/bash\nsrun litgpt pretrain --config cfg/tiny.yaml\n");
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.job.framework, Framework::kLitgpt);
  EXPECT_EQ(r.job.model, "litgpt-llama-22l-2048h");
  EXPECT_EQ(OriginOf(r, "model"), "cfg/tiny.yaml: model_config.n_embd");
  auto tiny = ParseModelConfig(r.arch_json, r.job.model);
  ASSERT_TRUE(tiny.ok()) << tiny.status().message() << "\n" << r.arch_json;
  EXPECT_EQ(tiny->Counts().total, 1100048384);

  Write("cfg/pythia.yaml",
        "model_config:\n  n_layer: 12\n  n_head: 12\n  n_embd: 768\n  vocab_size: 50254\n"
        "  padded_vocab_size: 50304\n  block_size: 2048\n");
  const JobRequest p = Read("#!/bin/bash\nlitgpt pretrain --config cfg/pythia.yaml\n");
  EXPECT_EQ(p.job.model, "litgpt-gpt-12l-768h");
  auto pythia = ParseModelConfig(p.arch_json, p.job.model);
  ASSERT_TRUE(pythia.ok()) << pythia.status().message() << "\n" << p.arch_json;
  EXPECT_EQ(pythia->Counts().total, 162322944);

  // A mixture of experts cannot be built from these fields: the model stays unread, with a
  // warning naming the key, never counted as a dense model.
  Write("cfg/moe.yaml",
        "model_config:\n  n_layer: 32\n  n_head: 32\n  n_embd: 4096\n"
        "  mlp_class_name: LLaMAMoE\n  n_expert: 8\n");
  const JobRequest moe = Read("#!/bin/bash\nlitgpt pretrain --config cfg/moe.yaml\n");
  EXPECT_TRUE(moe.job.model.empty()) << moe.job.model;
  EXPECT_TRUE(moe.arch_json.empty());
  bool warned = false;
  for (const std::string& w : moe.warnings)
    warned = warned || w.find("model_config.mlp_class_name") != std::string::npos;
  EXPECT_TRUE(warned);
  // A named model wins: the fields describe nothing then.
  Write("cfg/named.yaml",
        "model_name: pythia-160m\nmodel_config:\n  n_layer: 2\n  n_head: 2\n  n_embd: 64\n");
  const JobRequest named = Read("#!/bin/bash\nlitgpt pretrain --config cfg/named.yaml\n");
  EXPECT_TRUE(named.arch_json.empty());
  EXPECT_EQ(named.job.model, "pythia-160m");
}

TEST_F(ScriptFilesTest, FlagsOnTheLineWinOverTheFile) {
  Write("cfg/fsdp.yaml",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n"
        "  fsdp_activation_checkpointing: true\nmixed_precision: bf16\nnum_processes: 8\n");
  const JobRequest r = Read(
      "accelerate launch --config_file cfg/fsdp.yaml --mixed_precision fp16 train.py "
      "--model_name_or_path meta-llama/Llama-3.1-8B\n");
  EXPECT_EQ(ValueOf(r, "sharding"), "fsdp-grad-op");
  EXPECT_EQ(ValueOf(r, "activation-checkpointing"), "full");
  EXPECT_EQ(ValueOf(r, "precision"), "amp-fp16");  // the line's --mixed_precision
  EXPECT_EQ(r.launcher_procs_per_node, 8);
  EXPECT_TRUE(r.unread.empty());
}

TEST_F(ScriptFilesTest, TorchtitanTomlSetsRequestKeys) {
  Write("cfg/t.toml",
        "[model]\nname = \"llama3\"\nflavor = \"70B\"\n[training]\nlocal_batch_size = 2\n"
        "seq_len = 8192\n[parallelism]\ntensor_parallel_degree = 8\n"
        "data_parallel_shard_degree = -1\n[activation_checkpoint]\nmode = \"selective\"\n");
  const JobRequest r = Read(
      "torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file cfg/t.toml "
      "--training.seq_len 4096\n");
  EXPECT_EQ(r.job.model, "meta-llama/Llama-3.1-70B");
  EXPECT_EQ(r.launcher, "torchtitan");
  EXPECT_EQ(ValueOf(r, "tp"), "8");
  EXPECT_EQ(ValueOf(r, "micro-batch"), "2");
  EXPECT_EQ(ValueOf(r, "sharding"), "fsdp-full");
  EXPECT_EQ(ValueOf(r, "activation-checkpointing"), "selective");
  // torchtitan's optimizer default is implementation = "fused" (torchtitan config Optimizer).
  EXPECT_EQ(r.job.optimizer_impl, OptimizerImpl::kFused);
  EXPECT_EQ(Read("torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file cfg/t.toml "
                 "--optimizer.implementation foreach\n")
                .job.optimizer_impl,
            OptimizerImpl::kForeach);
  // torchtitan's command line overrides the TOML's dotted keys (its own Slurm script passes "$@").
  EXPECT_EQ(ValueOf(r, "seq-len"), "4096");
  EXPECT_EQ(OriginOf(r, "seq-len"), "line 1: --training.seq_len");
  const JobRequest r8 = Read(
      "torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file cfg/t.toml "
      "--model.flavor=8B --parallelism.tensor-parallel-degree 2\n");
  EXPECT_EQ(r8.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(ValueOf(r8, "tp"), "2");
  // selective_ac_option: "op" is the op-level policy, an integer N every Nth block whole.
  Write("cfg/op.toml",
        "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n");
  Write("cfg/every.toml",
        "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"2\"\n");
  const std::string tt = "torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file ";
  EXPECT_EQ(Read(tt + "cfg/op.toml\n").job.activation_checkpointing, Checkpointing::kSelective);
  const JobRequest every = Read(tt + "cfg/every.toml\n");
  EXPECT_EQ(every.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_EQ(every.job.recompute_method, RecomputeMethod::kInterval);
  EXPECT_EQ(every.job.recompute_num_layers, 2);
  EXPECT_EQ(ValueOf(r8, "seq-len"), "8192");
  EXPECT_EQ(OriginOf(r8, "seq-len"), "cfg/t.toml: training.seq_len");
}

// OLMo's trainer (python scripts/train.py CONFIG --key=value ...) describes the model by its
// dimensions. OLMo-7B's published shape: d_model 4096, 32 layers and heads, SwiGLU MLP whose input
// projection (mlp_hidden_size) is 22016 = 2 x 11008, untied 50304-row embeddings. Its Hugging Face
// checkpoint has 6,888,095,744 parameters (OLMoForCausalLM, find_string "6,888,095,744"); OLMo's
// LayerNorm has no weights, the Llama-style config fmte builds adds 266,240 RMSNorm weights.
TEST_F(ScriptFilesTest, OlmoYamlDescribesTheModelAndTheLineOverridesIt) {
  Write("cfg/olmo7.yaml",
        "run_name: olmo7\nmodel:\n  d_model: 4096\n  n_heads: 32\n  n_layers: 32\n"
        "  mlp_hidden_size: 22016\n  weight_tying: false\n  activation_type: swiglu\n"
        "  max_sequence_length: 2048\n  vocab_size: 50280\n  embedding_size: 50304\n"
        "global_train_batch_size: 2048\ndevice_train_microbatch_size: 2\nprecision: amp_bf16\n"
        "fsdp:\n  wrapping_strategy: by_block\n  precision: mixed\n");
  const JobRequest r = Read(
      "#!/bin/bash\nsrun scripts/run_with_environment.sh python scripts/train.py "
      "cfg/olmo7.yaml ${@} --run_name=${SLURM_JOB_ID} --device_train_microbatch_size=4 \\\n"
      "  --activation_checkpointing=whole_layer --fsdp.sharding_strategy=SHARD_GRAD_OP\n");
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.launcher, "olmo");
  EXPECT_EQ(r.job.model, "olmo-llama-32l-4096h");
  EXPECT_EQ(OriginOf(r, "model"), "cfg/olmo7.yaml: model.d_model");
  auto arch = ParseModelConfig(r.arch_json, r.job.model);
  ASSERT_TRUE(arch.ok()) << arch.status().message() << "\n" << r.arch_json;
  EXPECT_NEAR(static_cast<double>(arch->Counts().total), 6888095744.0, 6888095744.0 * 1e-4);
  EXPECT_EQ(r.job.seq_len, 2048);
  EXPECT_EQ(r.job.global_batch, 2048);
  EXPECT_EQ(r.job.precision, Precision::kAmpBf16);
  // The line's --key=value overrides, dotted or not, win over the file.
  EXPECT_EQ(r.job.micro_batch, 4);
  EXPECT_EQ(r.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_EQ(r.job.sharding, Sharding::kFsdpGradOp);
  EXPECT_EQ(OriginOf(r, "sharding"), "line 2: --fsdp.sharding_strategy");
  // Absurd dimensions are passed on for the model's parser to refuse by name (an estimate error
  // naming hidden_size), never multiplied into an overflow.
  Write("cfg/huge.yaml",
        "model:\n  d_model: 1099511627776\n  n_heads: 32\n  n_layers: 32\n"
        "  mlp_ratio: 99999999\n");
  const JobRequest huge = Read("#!/bin/bash\npython scripts/train.py cfg/huge.yaml\n");
  auto refused = ParseModelConfig(huge.arch_json, huge.job.model);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("hidden_size: expected a positive integer up to 2^31"),
            std::string::npos)
      << refused.status().message();
  // The same trainer's name elsewhere (a train.py that is not OLMo's) is not read as OLMo.
  const JobRequest other = Read("#!/bin/bash\npython other/train.py cfg/olmo7.yaml\n");
  EXPECT_NE(other.launcher, "olmo");
}

// GPT-NeoX: `python ./deepy.py train.py -d configs a.yml b.yml` merges the files in order from the
// -d folder; keys are written with '-' or '_', with # comments and trailing commas. Pythia-160M's
// NeoX shape (12 layers, 768 hidden, 12 heads, GeLU MLP of 4h, untied 50304-row embeddings) has
// 162,322,944 parameters (Pythia paper / Hub, as in model_test.cc); fmte's GPT-2 shape adds a
// learned position table (2048 x 768 = 1,572,864, 1%) where Pythia uses rotary embeddings.
TEST_F(ScriptFilesTest, NeoxYamlsMergedFromTheDirectoryFlag) {
  std::filesystem::create_directories(dir_ / "configs");
  Write("configs/pythia-160m.yml",
        "{\n  # model\n  \"num-layers\": 12,\n  \"hidden-size\": 768,\n"
        "  \"num-attention-heads\": 12,\n  \"seq-length\": 2048,\n"
        "  \"max-position-embeddings\": 2048,\n  \"pos-emb\": \"rotary\",\n"
        "  \"no-weight-tying\": true,\n  \"activation\": \"gelu\",\n"
        "  \"zero_optimization\": {\"stage\": 1, \"overlap_comm\": True,},\n"
        "  \"train_micro_batch_size_per_gpu\": 32,\n  \"fp16\": {\"enabled\": true},\n"
        "  \"checkpoint-activations\": false,\n}\n");
  Write("configs/local.yml",
        "{\n  \"train_micro_batch_size_per_gpu\": 16,\n"
        "  \"model_parallel_size\": 2,\n}\n");
  const JobRequest r =
      Read("#!/bin/bash\npython ./deepy.py train.py -d configs pythia-160m.yml local.yml\n");
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.launcher, "gpt-neox");
  EXPECT_EQ(r.job.model, "gpt-neox-gpt-12l-768h");
  auto arch = ParseModelConfig(r.arch_json, r.job.model);
  ASSERT_TRUE(arch.ok()) << arch.status().message() << "\n" << r.arch_json;
  EXPECT_NEAR(static_cast<double>(arch->Counts().total), 162322944.0 + 1572864.0,
              162322944.0 * 1e-3);
  EXPECT_EQ(r.job.micro_batch, 16);  // the later file wins
  EXPECT_EQ(OriginOf(r, "micro-batch"), "configs/local.yml: train_micro_batch_size_per_gpu");
  EXPECT_EQ(r.job.tp, 2);
  EXPECT_EQ(r.job.sharding, Sharding::kZero1);
  EXPECT_EQ(r.job.precision, Precision::kMixedFp16);
  EXPECT_EQ(r.job.activation_checkpointing, Checkpointing::kNone);
  EXPECT_EQ(r.job.seq_len, 2048);
}

// Megatron-Bridge: `run_recipe.py --recipe NAME` with Hydra-style overrides. The recipe's name
// gives the model and the mode (its recipes are named <model>_{pretrain,sft,finetune,peft}_config,
// scripts/training/README.md); the layout and batch are Python defaults, unread unless overridden.
TEST_F(ScriptFilesTest, MegatronBridgeRecipeNamesTheModel) {
  const std::string launch =
      "#!/bin/bash\nTP=$1\nsrun uv run --no-sync python "
      "/opt/Megatron-Bridge/scripts/training/run_recipe.py --recipe ";
  const JobRequest peft = Read(launch +
                               "qwen3_8b_peft_config train.micro_batch_size=2 "
                               "model.tensor_model_parallel_size=$TP model.seq_length=4096\n");
  ASSERT_TRUE(peft.is_llm_job);
  EXPECT_EQ(peft.launcher, "megatron-bridge");
  EXPECT_EQ(peft.job.model, "Qwen/Qwen3-8B");
  EXPECT_EQ(OriginOf(peft, "model"), "line 3: --recipe");
  EXPECT_EQ(peft.job.method, Method::kLora);  // "*_peft_*" is more specific than "*"
  EXPECT_EQ(peft.job.micro_batch, 2);
  EXPECT_EQ(peft.job.seq_len, 4096);
  EXPECT_EQ(peft.job.sharding, Sharding::kZero1);  // the distributed optimizer
  // The TP from an unknown argument and the recipe's own layout stay unread.
  std::vector<std::string> unread;
  for (const UnreadSetting& u : peft.unread) unread.push_back(u.key);
  EXPECT_EQ(unread, (std::vector<std::string>{"tp", "layout"}));
  // Megatron's recompute settings as Bridge's model config spells them (TransformerConfig
  // recompute_granularity / recompute_method / recompute_num_layers).
  const JobRequest block = Read(launch +
                                "qwen3_8b_pretrain_config model.recompute_granularity=full "
                                "model.recompute_method=block model.recompute_num_layers=4\n");
  EXPECT_EQ(block.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_EQ(block.job.recompute_method, RecomputeMethod::kBlock);
  EXPECT_EQ(block.job.recompute_num_layers, 4);
  // The precision-aware optimizer's moment dtypes (OptimizerConfig exp_avg_dtype and
  // exp_avg_sq_dtype, which Bridge's MoE recipes set to torch.bfloat16).
  const JobRequest moments = Read(launch +
                                  "moonlight_16b_pretrain_config "
                                  "optimizer.exp_avg_dtype=torch.bfloat16 "
                                  "optimizer.exp_avg_sq_dtype=torch.bfloat16\n");
  EXPECT_EQ(moments.job.model, "moonshotai/Moonlight-16B-A3B");
  // Selective recompute's modules as a Hydra list (model.recompute_modules).
  const JobRequest modules = Read(launch +
                                  "nemotron_3_nano_pretrain_config "
                                  "model.recompute_granularity=selective "
                                  "model.recompute_modules=[moe,layernorm]\n");
  EXPECT_TRUE(modules.job.Recomputes(RecomputeModule::kMoe));
  EXPECT_TRUE(modules.job.Recomputes(RecomputeModule::kLayernorm));
  EXPECT_TRUE(moments.job.optimizer_states_bf16);
  EXPECT_FALSE(peft.job.optimizer_states_bf16);
  const JobRequest sft = Read(launch + "gpt_oss_20b_sft_config\n");
  EXPECT_EQ(sft.job.model, "openai/gpt-oss-20b");
  EXPECT_EQ(sft.job.method, Method::kFull);
  // A recipe the table does not know names no model: no estimate on a guess, but still LLM
  // training (run_recipe.py trains LLMs), its model unread.
  const JobRequest unknown = Read(launch + "nemotron_3_super_pretrain_config\n");
  EXPECT_TRUE(unknown.is_llm_job);
  EXPECT_TRUE(unknown.job.model.empty());
  // Nemotron 3 Nano's recipes (examples/models/nemotron/nemotron_3/nano/slurm_pretrain.sh:
  // MODEL_NAME=nemotron_3_nano, --recipe ${MODEL_NAME}_pretrain_config).
  EXPECT_EQ(Read(launch + "nemotron_3_nano_pretrain_config\n").job.model,
            "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
}

// A script written to be submitted from its own folder (OpenRLHF's examples/scripts:
// `source ./train_dpo_llama.sh slurm`) but submitted from elsewhere: the file is read beside the
// script, with a note; in the working directory it wins.
TEST_F(ScriptFilesTest, SourcedFileBesideTheScript) {
  std::filesystem::create_directories(dir_ / "examples/scripts");
  Write("examples/scripts/env.sh", "MODEL=meta-llama/Llama-3.1-8B\n");
  const std::string script =
      "#!/bin/bash\nsource ./env.sh\ntorchrun --nproc_per_node 8 sft.py "
      "--model_name_or_path $MODEL\n";
  const JobRequest beside = Read(script, {}, {}, "examples/scripts");
  EXPECT_EQ(beside.job.model, "meta-llama/Llama-3.1-8B");
  bool noted = false;
  for (const std::string& w : beside.warnings)
    noted = noted || w.find("read examples/scripts/env.sh beside the script") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_TRUE(Read(script).job.model.empty());  // no script folder known: not guessed
  Write("env.sh", "MODEL=Qwen/Qwen3-8B\n");
  EXPECT_EQ(Read(script, {}, {}, "examples/scripts").job.model, "Qwen/Qwen3-8B");
}

// A script written to run from a folder above its own (InternVL's
// internvl_chat/shell/internvl2.5/.../x.sh runs from internvl_chat/, where its --deepspeed file
// lies): a config file not in the submission directory is looked for in the script's folder and
// the folders above it, nearest first, and the note says where it was read. InternVL's
// --grad_checkpoint is the HF --gradient_checkpointing.
TEST_F(ScriptFilesTest, ConfigFileInAFolderAboveTheScript) {
  std::filesystem::create_directories(dir_ / "chat/shell/v2/finetune");
  Write("chat/ds.json", R"({"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}})");
  const std::string script =
      "srun -p P --gres=gpu:8 --nodes=1 --ntasks=8 --ntasks-per-node=8 python -u "
      "chat/train/finetune.py --model_name_or_path meta-llama/Llama-3.1-8B --deepspeed ds.json "
      "--grad_checkpoint True --bf16 True\n";
  const JobRequest above = Read(script, {}, {}, "chat/shell/v2/finetune");
  EXPECT_EQ(ValueOf(above, "sharding"), "zero3");
  EXPECT_EQ(ValueOf(above, "activation-checkpointing"), "full");
  EXPECT_EQ(OriginOf(above, "activation-checkpointing"), "line 1: --grad_checkpoint");
  bool noted = false;
  for (const std::string& w : above.warnings)
    noted = noted || w.find("ds.json is not in the submission directory; read chat/ds.json") !=
                         std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_NE(std::find(above.files_read.begin(), above.files_read.end(), "chat/ds.json"),
            above.files_read.end());
  // No script folder known, or the file nowhere above it: not read (the --deepspeed flag alone
  // says ZeRO, its stage is unread).
  EXPECT_NE(ValueOf(Read(script), "sharding"), "zero3");
  EXPECT_NE(ValueOf(Read(script, {}, {}, "other/folder"), "sharding"), "zero3");
  // The submission directory's own file wins over one above the script.
  Write("ds.json", R"({"zero_optimization": {"stage": 2}})");
  EXPECT_EQ(ValueOf(Read(script, {}, {}, "chat/shell/v2/finetune"), "sharding"), "zero2");
}

// Trainers whose config file gives the decoder by its dimensions, each checked against a
// published parameter count of the model with those dimensions (as in model_test.cc): llm-foundry
// (below), Fast-LLM
// (`torchrun --no_python fast-llm train gpt --config F`, Mistral-7B's shape as its example:
// 7,241,732,096) and nanotron (`torchrun run_train.py --config-file F`, transformers' LlamaConfig
// names; Llama-3.2-1B's shape, tied: 1,235,814,400).
TEST_F(ScriptFilesTest, DecoderDimensionsFromConfigFiles) {
  Write("cfg/mistral.yaml",
        "training:\n  train_iters: 100\ndata:\n  micro_batch_size: 8192\n"
        "  maximum_document_length: 4096\nmodel:\n  base_model:\n    embeddings:\n"
        "      vocab_size: 32000\n    decoder:\n      block:\n        mixer:\n"
        "          heads: 32\n          head_groups: 8\n          head_size: 128\n"
        "        mlp:\n          intermediate_size: 14336\n          gated: true\n"
        "      num_blocks: 32\n    hidden_size: 4096\n    tied_embedding_weight: false\n"
        "  multi_stage:\n    zero_stage: 2\n  distributed:\n    compute_dtype: bf16\n");
  Write("cfg/tiny.yaml",
        "model:\n  dtype: bfloat16\n  model_config:\n    hidden_size: 2048\n"
        "    intermediate_size: 8192\n    num_attention_heads: 32\n    num_hidden_layers: 16\n"
        "    num_key_value_heads: 8\n    tie_word_embeddings: true\n    vocab_size: 128256\n"
        "    max_position_embeddings: 131072\noptimizer:\n  zero_stage: 1\n"
        "parallelism:\n  dp: 4\n  tp: 2\n  pp: 1\ntokens:\n  micro_batch_size: 3\n"
        "  sequence_length: 4096\n  batch_accumulation_per_replica: 2\n");
  // llm-foundry's composer (LLM-Shearing's fork, Llama-2-7B's shape: 6,738,415,616, as in
  // model_test.cc) after `then` on an if line, its sequence length an OmegaConf interpolation of a
  // top-level key.
  Write("cfg/llama2_7b.yaml",
        "max_seq_len: 4096\nmodel:\n  name: mosaic_llama2_7b\n  d_model: 4096\n  n_heads: 32\n"
        "  n_layers: 32\n  intermediate_size: 11008\n  max_seq_len: ${max_seq_len}\n"
        "  vocab_size: 32000\nglobal_train_batch_size: 32\ndevice_train_microbatch_size: 4\n"
        "precision: amp_bf16\nfsdp_config:\n  sharding_strategy: FULL_SHARD\n");
  struct Case {
    const char* script;
    const char* launcher;
    const char* model;
    double params;
    int64_t micro_batch, seq_len;
    Sharding sharding;
    Precision precision;
  };
  const Case cases[] = {
      {"srun bash -c \"torchrun --nproc_per_node=\\$SLURM_GPUS_PER_NODE --no_python fast-llm "
       "train gpt --config cfg/mistral.yaml\"\n",
       "fast-llm", "fast-llm-llama-32l-4096h", 7241732096.0, 1, 8192, Sharding::kZero2,
       Precision::kMixedBf16},
      {": ${CONFIG_FILE:=\"cfg/tiny.yaml\"}\nsrun torchrun --nproc_per_node=8 "
       "/fsx/nanotron/run_train.py --config-file ${CONFIG_FILE}\n",
       "nanotron", "nanotron-llama-16l-2048h", 1235814400.0, 3, 4096, Sharding::kZero1,
       Precision::kMixedBf16},
      {"PROJ_DIR=/proj\nif [[ $N == 1 ]]; then composer $PROJ_DIR/llmshearing/train.py "
       "cfg/llama2_7b.yaml run_name=x; else srun bash launch.sh; fi\n",
       "llm-foundry", "llm-foundry-llama-32l-4096h", 6738415616.0, 4, 4096, Sharding::kFsdpFull,
       Precision::kAmpBf16},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.launcher);
    const JobRequest r = Read(std::string("#!/bin/bash\n") + c.script);
    ASSERT_TRUE(r.is_llm_job);
    EXPECT_EQ(r.launcher, c.launcher);
    EXPECT_EQ(r.job.model, c.model);
    auto arch = ParseModelConfig(r.arch_json, r.job.model);
    ASSERT_TRUE(arch.ok()) << arch.status().message() << "\n" << r.arch_json;
    EXPECT_NEAR(static_cast<double>(arch->Counts().total), c.params, c.params * 1e-6);
    EXPECT_EQ(r.job.micro_batch, c.micro_batch);
    EXPECT_EQ(r.job.seq_len, c.seq_len);
    EXPECT_EQ(r.job.sharding, c.sharding);
    EXPECT_EQ(r.job.precision, c.precision);
    for (const std::string& w : r.warnings)  // an interpolation is not a value to complain about
      EXPECT_EQ(w.find("${"), std::string::npos) << w;
  }
}

TEST_F(ScriptFilesTest, ShellAsPeopleWriteIt) {
  // Arguments, ${N-default}, arithmetic, a sourced file, a heredoc-written DeepSpeed JSON and a
  // launch line inside `srun bash -c "..."`.
  Write("env.sh", "export MICRO=4\n");
  const std::string script =
      "#!/bin/bash\n"
      "source env.sh\n"
      "MODEL=$1\nSEQ=${2-2048}\nNODES=2\nPROCS=$((NODES * 4))\n"
      "cat > ds.json <<EOF\n{\"zero_optimization\": {\"stage\": 2},\n"
      " \"train_micro_batch_size_per_gpu\": $MICRO}\nEOF\n"
      "srun bash -c \"deepspeed --num_gpus $PROCS train.py --model_name_or_path $MODEL "
      "--max_seq_length $SEQ --deepspeed ds.json\"\n";
  const JobRequest r = Read(script, {"meta-llama/Llama-3.1-8B"});
  EXPECT_EQ(r.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(ValueOf(r, "seq-len"), "2048");
  EXPECT_EQ(ValueOf(r, "sharding"), "zero2");
  EXPECT_EQ(ValueOf(r, "micro-batch"), "4");
  EXPECT_EQ(r.launcher_procs_per_node, 8);
  // Without the context (the controller), no file is read: the heredoc's ZeRO stage is unknown.
  EXPECT_EQ(ValueOf(ParseJobRequest(script, {}, {}), "sharding"), "");
}

TEST_F(ScriptFilesTest, ContinuedLaunchLineInsideBashCAndHydraOverrides) {
  // As HALOs' Slurm scripts: an accelerate launch continued with backslash-newlines inside
  // `srun bash -c "..."` (bash removes them inside double quotes, so the inner script sees one
  // line), the model given as a Hydra override (++model.name_or_path=$MODEL_PATH, the variable
  // exported inside the string and escaped for it), config groups (model=llama) that are not flags.
  Write("fsdp.yaml",
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n");
  const std::string script =
      "#!/bin/bash\n"
      "srun --ntasks-per-node=1 bash -c \"\n"
      "export MODEL_PATH=meta-llama/Meta-Llama-3-8B\n"
      "accelerate launch \\\n"
      "    --config_file fsdp.yaml \\\n"
      "    launch.py loss=sft model=llama ++model.name_or_path=\\$MODEL_PATH \\\n"
      "    ++model.use_peft=false ++lr=1e-6\n"
      "\"\n";
  const JobRequest r = Read(script);
  ASSERT_TRUE(r.is_llm_job) << ::testing::PrintToString(r.warnings);
  EXPECT_EQ(r.job.model, "meta-llama/Meta-Llama-3-8B");
  EXPECT_EQ(r.launcher, "accelerate");
  EXPECT_EQ(ValueOf(r, "sharding"), "fsdp-full")  // the config file was read
      << ::testing::PrintToString(r.warnings);
  EXPECT_EQ(r.job.method, Method::kFull);
  EXPECT_TRUE(r.unread.empty());
}

TEST_F(ScriptFilesTest, ScriptsTheBatchScriptRuns) {
  // fms-fsdp's train.slurm: `srun ./scripts/train.sh`, the launch line in that file; and a script
  // run with arguments, which are its own $1... while it is read (the batch script's afterwards).
  Write("train.sh",
        "#!/bin/bash\nMODEL=${1:-meta-llama/Llama-3.1-70B}\n"
        "torchrun --nproc_per_node=8 train.py --model_name_or_path $MODEL --max_seq_length $2\n");
  const JobRequest r = Read(
      "#!/bin/bash\nsrun --comment team --nodes=2 ./train.sh "
      "meta-llama/Llama-3.1-8B 4096\necho $1\n",
      {"outer-arg"});
  EXPECT_EQ(r.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(ValueOf(r, "seq-len"), "4096");
  const JobRequest bare = Read("#!/bin/bash\nbash train.sh \"\" 1024\n");
  EXPECT_EQ(bare.job.model, "meta-llama/Llama-3.1-70B");  // ${1:-default} with an empty $1
  // Another program's argument that ends in .sh is not run: srun python x.py out.sh.
  const JobRequest other = Read("#!/bin/bash\nsrun python tool.py train.sh\n");
  EXPECT_FALSE(other.is_llm_job);
}

TEST_F(ScriptFilesTest, UnreadableFilesAreNamedAndLeftUnread) {
  Write("cfg/bad.yaml", "distributed_type: FSDP\nfsdp_config: [unclosed\n");
  const JobRequest r = Read(
      "accelerate launch --config_file cfg/bad.yaml train.py --model_name_or_path "
      "meta-llama/Llama-3.1-8B\naccelerate launch --config_file /dev/zero train.py "
      "--model_name_or_path meta-llama/Llama-3.1-8B\n");
  ASSERT_TRUE(r.is_llm_job);
  bool named = false;
  for (const std::string& w : r.warnings)
    named = named || (w.find("cfg/bad.yaml:") != std::string::npos &&
                      w.find("not valid YAML") != std::string::npos);
  EXPECT_TRUE(named) << ::testing::PrintToString(r.warnings);
  ASSERT_FALSE(r.unread.empty());  // the policy reads the sharding favourably
  EXPECT_EQ(r.unread[0].key, "sharding");
}

// An LLM trainer (launchers.json "trains_llms") whose config file is not there: still LLM training,
// the model unread and named in the warning; its non-training subcommands and generic launchers
// (accelerate running a script with no model) stay untouched.
TEST_F(ScriptFilesTest, AnLlmTrainerWhoseConfigIsMissingIsStillLlmTraining) {
  struct Case {
    const char* script;
    bool llm;
  };
  const Case cases[] = {
      {"srun axolotl train train.yaml --launcher torchrun -- --nproc_per_node=8\n", true},
      {"llamafactory-cli train examples/missing.yaml\n", true},
      {"python -m torchtitan.train --job.config_file missing.toml\n", true},
      {"srun axolotl preprocess train.yaml\n", false},
      {"llamafactory-cli chat examples/missing.yaml\n", false},
      {"litgpt serve out/checkpoint\n", false},
      {"accelerate launch --config_file missing.yaml complete_nlp_example.py\n", false},
      // A model flag the script leaves to the submitter's environment (OLMo-core's SFT script).
      {"torchrun --nproc-per-node=8 OLMo-sft.py train --model.model_path=\"$BASE_CKPT\"\n", true},
      {"python prepare.py --tokenizer_name_or_path \"$TOKENIZER\"\n", false},
  };
  for (const Case& c : cases) {
    const JobRequest r = Read(c.script);
    EXPECT_EQ(r.is_llm_job, c.llm) << c.script;
    if (!c.llm) continue;
    EXPECT_TRUE(r.job.model.empty()) << c.script;
    bool named = false;
    for (const std::string& w : r.warnings)
      named = named || (w.starts_with("model: the launch trains an LLM") &&
                        (w.find("(not read)") != std::string::npos ||
                         w.find("(unknown value)") != std::string::npos));
    EXPECT_TRUE(named) << c.script << ::testing::PrintToString(r.warnings);
  }
}

// A trainer's subcommand that does not train is no training job even when its file or flags name a
// model (`llamafactory-cli chat` takes the training YAML's model_name_or_path and adapter): until
// 2026-11-29 it was estimated as training, and could have been rejected.
TEST_F(ScriptFilesTest, NonTrainingSubcommandsWithAModelAreNoTraining) {
  Write("cfg/sft.yaml",
        "model_name_or_path: meta-llama/Llama-3.1-70B\nstage: sft\nfinetuning_type: full\n"
        "per_device_train_batch_size: 8\n");
  EXPECT_TRUE(Read("llamafactory-cli train cfg/sft.yaml\n").is_llm_job);
  EXPECT_FALSE(Read("llamafactory-cli chat cfg/sft.yaml\n").is_llm_job);
  EXPECT_FALSE(Read("llamafactory-cli export cfg/sft.yaml\n").is_llm_job);
  EXPECT_FALSE(Read("litgpt generate meta-llama/Llama-3.1-8B --prompt hi\n").is_llm_job);
}

// A script written for its cluster names its repository by an absolute path that does not exist
// here (apptainer exec --pwd /scratch/...): the same folders and file below the submission
// directory are read instead.
TEST_F(ScriptFilesTest, AbsolutePathsOfAnotherClusterResolveBelowTheSubmissionDirectory) {
  std::filesystem::create_directories(dir_ / "examples/train_lora");
  Write("examples/train_lora/sft.yaml",
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nfinetuning_type: lora\n");
  const JobRequest r = Read(
      "apptainer exec --nv --pwd /nonexistent-fmte/u/LLaMA-Factory image.sif \\\n"
      "  llamafactory-cli train /nonexistent-fmte/u/LLaMA-Factory/examples/train_lora/sft.yaml\n");
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.job.model, "Qwen/Qwen2.5-7B-Instruct");
  // A bare file name is not matched anywhere: at least a folder and the file.
  Write("lone.yaml", "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\n");
  const JobRequest lone = Read("llamafactory-cli train /nonexistent-fmte/lone.yaml\n");
  EXPECT_TRUE(lone.job.model.empty());
}

// A site's in-house launcher as data: its own flag names the model through value patterns, where
// '*' matches any run of characters, an exact value wins, then the most specific pattern.
TEST(LauncherTableTest, FlagKeysWithValuePatterns) {
  auto table = ParseLauncherTable(
      R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": "site", "programs":
          ["site_train.py"], "flags": ["config"], "format": "x", "reader": "keys",
          "flag_keys": [{"path": "preset", "key": "model", "values": {
            "llama-8b": "meta-llama/Llama-3.1-8B", "llama-*": "meta-llama/Llama-3.1-70B",
            "llama-8b-*-lora": "meta-llama/Llama-3.2-1B", "*a*a*b": "Qwen/Qwen3-8B"}}]}]})",
      "launchers.json");
  ASSERT_TRUE(table.ok()) << table.status().message();
  ScriptContext ctx;
  ctx.launchers = &table.value();
  SlurmFacts facts;
  facts.tres_per_node = "gres:gpu:8";
  auto model = [&](const std::string& preset) {
    return ParseJobRequest("torchrun --nproc_per_node 8 site_train.py --preset " + preset + "\n",
                           {}, facts, ctx)
        .job.model;
  };
  EXPECT_EQ(model("llama-8b"), "meta-llama/Llama-3.1-8B");           // exact
  EXPECT_EQ(model("LLAMA-8B-sft-LoRA"), "meta-llama/Llama-3.2-1B");  // most specific, any case
  EXPECT_EQ(model("llama-70b"), "meta-llama/Llama-3.1-70B");
  EXPECT_EQ(model("mistral"), "");  // no pattern: no model, nothing guessed
  // A long value (a logical line holds up to 64 KiB) against a pattern with several stars is
  // matched in at most pattern x value steps, never exponentially many (user input).
  EXPECT_EQ(model(std::string(60000, 'a') + "b"), "Qwen/Qwen3-8B");
  EXPECT_EQ(model(std::string(60000, 'a')), "");
}

TEST(LauncherTableTest, ErrorsNameTheEntryAndField) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {"[]", "expected an object with \"formats\" and \"launchers\""},
      {R"({"formats": {"x": {"syntax": "ini"}}, "launchers": []})",
       "formats.x.syntax: expected json, yaml or toml"},
      {R"({"formats": {"x": {"syntax": "json", "keys": [{"path": "a"}]}}, "launchers": []})",
       "formats.x.keys[0]: expected exactly one of \"flag\" and \"key\""},
      {R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": "l", "programs": "p",
          "flags": ["config"], "format": "y"}]})",
       "launchers[0].format: expected the name of one of the formats"},
      {R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": "l", "programs": "p",
          "format": "x"}]})",
       "launchers[0]: expected \"flags\" or \"positional\": true"},
      {R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": "l", "programs": "p",
          "flags": ["c"], "format": "x", "flag_keys": [{"path": ["a", "b"], "key": "model"}]}]})",
       "launchers[0].flag_keys[0]: expected one flag name in \"path\" and a request \"key\""},
      {"{not json", "not valid JSON"},
      // Found by fuzz_launcher_table: a field of another type threw out of the parser.
      {R"({"formats": {"": {"syntax": []}}, "launchers": []})",
       "formats..syntax: expected a string, got []"},
      {R"({"formats": {"x": {"syntax": "json", "dashes_as_underscores": "yes"}}, "launchers": []})",
       "formats.x.dashes_as_underscores: expected true or false"},
      {R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": 7}]})",
       "launchers[0].name: expected a string, got 7"},
      {R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": "l", "programs": "p",
          "flags": ["c"], "positional": 1, "format": "x"}]})",
       "launchers[0].positional: expected true or false"},
      {R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": "l", "programs": "p",
          "flags": ["c"], "format": {}, "reader": "hf"}]})",
       "launchers[0].format: expected a string"},
      {R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": "l", "programs": "p",
          "flags": ["c"], "format": "x", "subcommand_set": ["finetune"]}]})",
       "launchers[0].subcommand_set: expected an object of objects of strings"},
      {R"({"formats": {"x": {"syntax": "json"}}, "launchers": [{"name": "l", "programs": "p",
          "flags": ["c"], "format": "x", "subcommand_set": {"finetune": {"method": 1}}}]})",
       "launchers[0].subcommand_set.finetune.method: expected a string"},
  };
  for (const Case& c : cases) {
    auto t = ParseLauncherTable(c.json, "launchers.json");
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_NE(t.status().message().find(c.expected), std::string::npos) << t.status().message();
    EXPECT_TRUE(t.status().message().starts_with("launchers.json: "));
  }
}

TEST(ConfigTextTest, YamlAndTomlBecomeTypedTrees) {
  auto y = ParseConfigText("a.yaml", "a: 3\nb: 'x'\nc: true\nd: 1.5\ne: [1, two]\nf: ~\n", "");
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ((*y)["a"], 3);
  EXPECT_EQ((*y)["b"], "x");
  EXPECT_EQ((*y)["c"], true);
  EXPECT_EQ((*y)["d"], 1.5);
  EXPECT_EQ((*y)["e"][1], "two");
  EXPECT_TRUE((*y)["f"].is_null());
  auto t = ParseConfigText("a.toml", "[s]\nn = -1\nb = false\n", "");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)["s"]["n"], -1);
  auto bad = ParseConfigText("a.toml", "[s\n", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().message().starts_with("a.toml:1: not valid TOML"))
      << bad.status().message();
  // A stack-deep input is refused before any parser recurses into it.
  auto deep = ParseConfigText("d.yaml", std::string(100000, '['), "");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nested deeper than"), std::string::npos);
}

// Found by fuzz_config_toml: a float too large for int64_t was converted to one before its type was
// looked at (undefined behaviour; UBSan aborted). Each value keeps its own type.
TEST(ConfigTextTest, TomlValuesKeepTheirOwnType) {
  auto t = ParseConfigText("c.toml", "[ac]\nl = 10e80\nn = 3\nf = 2.5\ns = \"x\"\n", "");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE((*t)["ac"]["l"].is_number_float());
  EXPECT_EQ((*t)["ac"]["l"], 10e80);
  EXPECT_TRUE((*t)["ac"]["n"].is_number_integer());
  EXPECT_EQ((*t)["ac"]["n"], 3);
  EXPECT_EQ((*t)["ac"]["f"], 2.5);
  EXPECT_EQ((*t)["ac"]["s"], "x");
}

// Where the objective is unknown at submission (a trainer type from a variable), it may be an
// online one: the memory reads it favourably as supervised, the time as no limit at all, and no
// time advice. LLaMA-Factory's stage alike.
TEST_F(ScriptFilesTest, AnUnknownObjectiveGetsNoTimeLimit) {
  const auto conf = ParseConfig("PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB\n");
  ASSERT_TRUE(conf.ok());
  auto est = Estimator::Load();
  ASSERT_TRUE(est.ok());
  const std::string tail =
      " --model Qwen/Qwen2.5-7B-Instruct --train_type lora --max_length 2048 --max_steps 300\n";
  const auto decide = [&](const std::string& type) {
    JobRequest r = Read("#!/bin/bash\nswift rlhf --rlhf_type " + type + tail);
    r.job.gpu = "A100-SXM4-80GB";
    return Decide(r, *conf, *est);
  };
  const Decision unknown = decide("$RLHF_TYPE");
  ASSERT_TRUE(unknown.estimated) << unknown.user_message;
  EXPECT_EQ(unknown.new_time_limit_min, 0) << unknown.user_message;
  EXPECT_NE(unknown.user_message.find("the objective is unknown"), std::string::npos)
      << unknown.user_message;
  const Decision dpo = decide("dpo");
  EXPECT_GT(dpo.new_time_limit_min, 0) << dpo.user_message;  // known and offline: a limit
  const Decision grpo = decide("grpo");
  ASSERT_TRUE(grpo.estimated) << grpo.user_message;
  EXPECT_EQ(grpo.new_time_limit_min, 0) << grpo.user_message;
  EXPECT_EQ(grpo.user_message.find("right-size"), std::string::npos) << grpo.user_message;

  bool unread = false;
  for (const UnreadSetting& u :
       Read("#!/bin/bash\npython src/train.py --stage $STAGE --model_name_or_path "
            "meta-llama/Llama-3.1-8B-Instruct --finetuning_type lora\n")
           .unread)
    unread = unread || u.key == "objective";
  EXPECT_TRUE(unread);
}

}  // namespace
}  // namespace fmte
