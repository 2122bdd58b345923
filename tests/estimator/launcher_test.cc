// The script scanner and launch-line readers: shell constructs (continuations, quotes, variables,
// bash arrays, heredocs, comments, prefixes), each launcher's flags, and hostile input (huge
// scripts, NUL bytes, 2^70 numbers, conflicting flags, unterminated quotes), which must give
// warnings, never crashes or hangs.
#include "../../estimator/request/src/launcher.h"  // white-box: the scanner and launch readers

#include <gtest/gtest.h>

#include <string>

#include "fmte/request.h"

namespace fmte {
namespace {

JobRequest Parse(std::string_view script) {
  SlurmFacts f;
  f.tres_per_node = "gres:gpu:a100:8";
  return ParseJobRequest(script, {}, f);
}

std::string Warnings(const JobRequest& r) {
  std::string all;
  for (const std::string& w : r.warnings) all += w + "\n";
  return all;
}

// The scanned commands of a script: words joined by '|', commands by ';'.
std::string ScannedWords(std::string_view script) {
  const internal::ScanOutput out = internal::ScanScript(script);
  std::string got;
  for (size_t i = 0; i < out.commands.size(); ++i) {
    if (i > 0) got += ";";
    for (size_t k = 0; k < out.commands[i].words.size(); ++k)
      got.append(k ? "|" : "").append(out.commands[i].words[k].text);
  }
  return got;
}

TEST(ScanTest, ShellConstructs) {
  struct Case {
    const char* script;
    const char* want_words;
  };
  const Case kCases[] = {
      {"a b \\\n  c", "a|b|c"},
      {"X=1\ncmd $X ${X} \"$X y\" '$X'", "cmd|1|1|1 y|$X"},
      {"A=\"p q\"\ncmd $A \"$A\"", "cmd|p|q|p q"},
      {"cmd ${UNSET:-dflt} ${UNSET-d2}", "cmd|dflt|d2"},
      // `: ${VAR:=default}` assigns, with the default quoted or built from a variable too (the
      // nanotron examples' idiom); unquoted, the result is split as bash splits it.
      {": ${C:=\"cfg/a b.yaml\"}\n: ${D:=x}\nP=/p\n: ${E:=$P/run.py}\ncmd \"$C\" $D $E",
       ":|cfg/a|b.yaml;:|x;:|/p/run.py;cmd|cfg/a b.yaml|x|/p/run.py"},
      {"ARR=(--a 1\n  # comment inside\n  --b \"x y\"\n)\ncmd ${ARR[@]}", "cmd|--a|1|--b|x y"},
      {"cmd a; other b", "cmd|a;other|b"},
      {"cmd a > log.txt 2>&1", "cmd|a"},
      {"cat <<EOF\ntorchrun --x\nEOF\ncmd", "cat;cmd"},
      {"cmd a # trailing comment", "cmd|a"},
      {"export Y=7 && cmd $Y", "cmd|7"},
      // Arrays next to text: the first item joins what precedes, the last what follows (as bash
      // prints them: printf '%s|' cmd pre${A[@]}post).
      {"A=(x y z)\ncmd pre${A[@]}post", "cmd|prex|y|zpost"},
      {"B=(one)\ncmd a${B[@]}b", "cmd|aoneb"},
      {"C=(p \"q r\" s t)\ncmd \"<${C[@]}>\"", "cmd|<p|q r|s|t>"},
      // Subscripts are arithmetic over known variables (a job array's sweep); out of range or
      // unknown: not guessed.
      {"B=(0.3 0.5 0.7)\nI=2\ncmd ${B[1]} ${B[$I]} ${B[I-1]} ${B[-1]}", "cmd|0.5|0.7|0.5|0.7"},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(ScannedWords(c.script), c.want_words) << c.script;
  }
}

// The tokenizer copies runs of ordinary bytes at once: '#' inside a word, UTF-8 and other high
// bytes, escapes and quotes around them must come out exactly as bash would split them.
TEST(ScanTest, OrdinaryRunsKeepEveryByte) {
  struct Case {
    std::string script;
    std::string want_words;
  };
  const Case kCases[] = {
      {"cmd a#b 'c'#d \"e#f\" #gone", "cmd|a#b|c#d|e#f"},
      {"cmd \xc3\xa9t\xc3\xa9 x\\ y \x7f", "cmd|\xc3\xa9t\xc3\xa9|x y|\x7f"},
      {"cmd \"a\\b\\\"c$\" ab\x01"
       "cd",
       "cmd|a\\b\"c$|ab|cd"},
      {"cmd pre\"mid\"post'q'end;next", "cmd|premidpostqend;next"},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(ScannedWords(c.script), c.want_words) << c.script;
  }
}

TEST(ScanTest, UnresolvedWordsAreMarked) {
  internal::ScanOutput out = internal::ScanScript("cmd $(hostname) `date` $1 $NOPE ok");
  ASSERT_EQ(out.commands.size(), 1u);
  const auto& w = out.commands[0].words;
  ASSERT_EQ(w.size(), 6u);
  EXPECT_FALSE(w[0].unresolved);
  EXPECT_TRUE(w[1].unresolved && w[2].unresolved && w[3].unresolved && w[4].unresolved);
  EXPECT_FALSE(w[5].unresolved);
  // An array subscript out of range or over an unknown variable is unknown, never item 0.
  internal::ScanOutput sub = internal::ScanScript("B=(x y)\ncmd ${B[2]} ${B[$NOPE]} ${B[-3]}");
  ASSERT_EQ(sub.commands.size(), 1u);
  for (size_t k = 1; k < sub.commands[0].words.size(); ++k)
    EXPECT_TRUE(sub.commands[0].words[k].unresolved) << k;
  EXPECT_EQ(sub.commands[0].words.size(), 4u);
}

TEST(LauncherTest, PrefixesAndEnvironment) {
  const JobRequest r = Parse(
      "export NCCL_DEBUG=WARN\n"
      "CUDA_VISIBLE_DEVICES=0,1 srun -n 1 --cpu-bind=none env OMP_NUM_THREADS=4 \\\n"
      "  python3 -m torch.distributed.run --nproc-per-node=2 train.py \\\n"
      "  --model_name_or_path=Qwen/Qwen3-8B --fp16 --per_device_train_batch_size=3\n");
  EXPECT_EQ(r.launcher, "torchrun");
  EXPECT_EQ(r.launcher_procs_per_node, 2);
  EXPECT_EQ(r.job.model, "Qwen/Qwen3-8B");
  EXPECT_EQ(r.job.precision, Precision::kAmpFp16);
  EXPECT_EQ(r.job.micro_batch, 3);
}

TEST(LauncherTest, DeepspeedStageFromConfigName) {
  struct Case {
    const char* config;
    Sharding sharding;
    bool offload_opt;
  };
  const Case kCases[] = {
      {"ds_config_zero2.json", Sharding::kZero2, false},
      {"configs/zero3.json", Sharding::kZero3, false},
      {"ds_z3_offload_config.json", Sharding::kZero3, true},
      {"zero_stage1.json", Sharding::kZero1, false},
      {"stage2_offload.json", Sharding::kZero2, true},
  };
  for (const Case& c : kCases) {
    const JobRequest r =
        Parse(std::string("deepspeed train.py --model_name_or_path a/b --deepspeed ") + c.config);
    EXPECT_EQ(r.job.sharding, c.sharding) << c.config;
    EXPECT_EQ(r.job.offload_optimizer, c.offload_opt) << c.config;
    EXPECT_EQ(r.job.framework, Framework::kDeepspeed) << c.config;
  }
  const JobRequest unknown =
      Parse("torchrun train.py --model_name_or_path a/b --deepspeed ds.json");
  EXPECT_NE(Warnings(unknown).find("ZeRO stage not in the file name"), std::string::npos)
      << Warnings(unknown);
}

TEST(LauncherTest, FsdpOptionsAndOptimizers) {
  struct Case {
    const char* flags;
    Sharding sharding;
    Optimizer optimizer;
    bool offload;
    // transformers trainer_optimizer.py: adamw_torch is torch.optim.AdamW's foreach step,
    // adamw_torch_fused the fused one; without --optim the framework's default stays (auto).
    OptimizerImpl impl = OptimizerImpl::kAuto;
  };
  const Case kCases[] = {
      {"--fsdp 'shard_grad_op auto_wrap' --optim adafactor", Sharding::kFsdpGradOp,
       Optimizer::kAdafactor, false},
      {"--fsdp \"hybrid_shard auto_wrap\" --optim adamw_bnb_8bit", Sharding::kFsdpHybrid,
       Optimizer::kAdamW8bit, false},
      {"--fsdp \"full_shard offload auto_wrap\" --optim sgd", Sharding::kFsdpFull, Optimizer::kSgd,
       true, OptimizerImpl::kForeach},
      {"--optim adamw_torch", Sharding::kNone, Optimizer::kAdamW, false, OptimizerImpl::kForeach},
      {"--optim adamw_torch_fused", Sharding::kNone, Optimizer::kAdamW, false,
       OptimizerImpl::kFused},
      {"--learning_rate 1e-5", Sharding::kNone, Optimizer::kAdamW, false},
  };
  for (const Case& c : kCases) {
    const JobRequest r =
        Parse(std::string("torchrun run_clm.py --model_name_or_path a/b ") + c.flags);
    EXPECT_EQ(r.job.sharding, c.sharding) << c.flags;
    EXPECT_EQ(r.job.optimizer, c.optimizer) << c.flags;
    EXPECT_EQ(r.job.offload_params, c.offload) << c.flags;
    EXPECT_EQ(r.job.optimizer_impl, c.impl) << c.flags;
  }
  // TRL / run_clm style LoRA dropout.
  const JobRequest lora =
      Parse("torchrun train.py --model_name_or_path a/b --use_peft --lora_r 8 --lora_dropout 0.05");
  EXPECT_DOUBLE_EQ(lora.job.lora_dropout, 0.05);
}

TEST(LauncherTest, TorchtuneConfigNames) {
  EXPECT_EQ(internal::TorchtuneModelId("llama3_1/8B_lora_single_device"),
            "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(internal::TorchtuneModelId("llama3_1/70B_lora"), "meta-llama/Llama-3.1-70B");
  EXPECT_EQ(internal::TorchtuneModelId("llama2/7B_qlora_single_device"),
            "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(internal::TorchtuneModelId("qwen2_5/7B_lora"), "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(internal::TorchtuneModelId("my_custom.yaml"), "");
  const JobRequest q =
      Parse("tune run lora_finetune_single_device --config llama2/7B_qlora_single_device");
  EXPECT_EQ(q.job.method, Method::kQlora);
  EXPECT_EQ(q.job.quant, Quant::kNf4);
}

// torchtune's LoRA overrides (torchtune/models/llama3_1/_component_builders.py lora_llama3_1:
// lora_attn_modules, apply_lora_to_mlp, apply_lora_to_output), composed with the shipped configs'
// values for the ones not overridden ([q_proj, v_proj, output_proj], mlp True, output False).
TEST(LauncherTest, TorchtuneLoraOverridesComposeTheTargets) {
  const std::string run = "tune run lora_finetune_single_device --config llama3_1/8B_lora ";
  using V = std::vector<std::string>;
  EXPECT_EQ(Parse(run + "model.apply_lora_to_output=True").job.lora_targets,
            (V{"q_proj", "v_proj", "output_proj", "gate", "up", "down", "output"}));
  EXPECT_EQ(Parse(run + "model.lora_attn_modules=[q_proj,k_proj] model.apply_lora_to_mlp=False")
                .job.lora_targets,
            (V{"q_proj", "k_proj"}));
  EXPECT_TRUE(Parse(run).job.lora_targets.empty());  // the framework's default (fmte/lora.h)
  EXPECT_TRUE(Parse(run + "model.use_dora=True").job.dora);  // torchtune's DoRA: not estimated
  EXPECT_FALSE(Parse(run).job.dora);
  // The configs' own values (torchtune bd2a0fc): mistral/7B_lora adapts the output layer too,
  // llama3/8B_dora is DoRA.
  EXPECT_EQ(Parse("tune run lora_finetune_distributed --config mistral/7B_lora").job.lora_targets,
            (V{"q_proj", "v_proj", "output_proj", "gate", "up", "down", "output"}));
  EXPECT_TRUE(Parse("tune run lora_finetune_distributed --config mistral/7B_qlora_single_device")
                  .job.lora_targets.empty());
  EXPECT_TRUE(Parse("tune run lora_finetune_single_device --config llama3/8B_dora").job.dora);
  // A config of the user's own is read by nothing but its overrides, whatever its folder says.
  EXPECT_FALSE(
      Parse("tune run lora_finetune_single_device --config /home/pandora/8B_lora.yaml").job.dora);
}

// A model flag whose variable is empty (MODEL=$1 with no argument) is left bare: no model named,
// never a model called "true" (a bare flag's value).
TEST(LauncherTest, AnEmptyModelVariableNamesNoModel) {
  // $1 is not known here: the model flag's value is left to the environment. No model is taken
  // from it (not "true", not "$MODEL"), but the launch trains a model: an LLM job, model unread.
  const JobRequest r = Parse(
      "MODEL=$1\ntorchrun --nproc_per_node 8 train.py --model_name_or_path $MODEL "
      "--per_device_train_batch_size 1\n");
  EXPECT_TRUE(r.job.model.empty());
  EXPECT_TRUE(r.is_llm_job);
  ASSERT_FALSE(r.unread.empty());
  EXPECT_EQ(r.unread[0].key, "model");
  EXPECT_EQ(r.job.micro_batch, 1);  // the rest of the line is read
}

TEST(LauncherTest, TheTrainingLaunchWinsOverSetupCommands) {
  const JobRequest r = Parse(
      "python download.py --model_name_or_path meta-llama/Llama-3.1-70B\n"
      "torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B "
      "--per_device_train_batch_size 2 --max_seq_length 4096 --bf16 --gradient_checkpointing\n");
  EXPECT_EQ(r.job.model, "meta-llama/Llama-3.1-8B");
}

TEST(HostileInputTest, HugeScriptIsBounded) {
  std::string script = "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B\n";
  while (script.size() < 10u * 1024 * 1024)
    script += "echo some filler text to make the script huge $X \\\n";
  script += "torchrun train.py --model_name_or_path a/b\n";  // beyond the 1 MiB parsed
  const JobRequest r = Parse(script);
  EXPECT_EQ(r.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_NE(Warnings(r).find("only the first"), std::string::npos) << Warnings(r);
}

TEST(HostileInputTest, LongLinesAndManyWords) {
  std::string line = "torchrun train.py --model_name_or_path a/b";
  for (int i = 0; i < 20000; ++i) line += " --x" + std::to_string(i) + " 1";
  const JobRequest r = Parse(line + "\n");
  EXPECT_NE(Warnings(r).find("ignored"), std::string::npos) << Warnings(r);
  std::string many = "torchrun train.py --model_name_or_path a/b";
  for (int i = 0; i < 5000; ++i) many += " w";
  EXPECT_NE(Warnings(Parse(many)).find("words in one command"), std::string::npos);
}

TEST(HostileInputTest, BinaryAndNulBytes) {
  std::string script("#FMTE model=a/b seq-len=1024\n\x01\x02\xff\xfe", 34);
  script += std::string("\0\0\0torchrun\0train.py --bf16\n", 28);
  std::string all_bytes;
  for (int i = 0; i < 4096; ++i) all_bytes += static_cast<char>(i * 7919 % 256);
  const JobRequest r = Parse(script + all_bytes);
  EXPECT_EQ(r.job.model, "a/b");
  EXPECT_EQ(r.job.seq_len, 1024);
  EXPECT_NE(Warnings(r).find("binary/control bytes"), std::string::npos) << Warnings(r);
}

TEST(HostileInputTest, AbsurdNumbers) {
  const JobRequest r = Parse(
      "torchrun train.py --model_name_or_path a/b --per_device_train_batch_size "
      "1180591620717411303424 "
      "--max_seq_length 99999999999999999999999999 --gradient_accumulation_steps -5 "
      "--num_train_epochs 1e400\n"
      "#FMTE tp=18446744073709551617 tokens=9999999T\n");
  EXPECT_EQ(r.job.micro_batch, 1);
  EXPECT_EQ(r.job.seq_len, 2048);
  EXPECT_EQ(r.job.grad_accum, 1);
  EXPECT_EQ(r.job.tp, 1);
  EXPECT_EQ(r.job.epochs, 0);
  EXPECT_EQ(r.job.tokens, 0);
  EXPECT_GE(r.warnings.size(), 6u) << Warnings(r);
  EXPECT_TRUE(ValidateJob(r.job).ok());
}

TEST(HostileInputTest, ConflictingFlags) {
  const JobRequest r = Parse("torchrun train.py --model_name_or_path a/b --bf16 --fp16\n");
  EXPECT_NE(Warnings(r).find("--bf16/--fp16"), std::string::npos);
  const JobRequest q =
      Parse("python t.py --model_name_or_path a/b --load_in_4bit --load_in_8bit\n");
  EXPECT_NE(Warnings(q).find("--load_in_4bit/--load_in_8bit"), std::string::npos);
  EXPECT_EQ(q.job.quant, Quant::kNf4);
  const JobRequest m = Parse(
      "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
      "--bf16 --fp16 --padded-vocab-size 1000\n");
  EXPECT_NE(Warnings(m).find("--bf16/--fp16"), std::string::npos);
}

TEST(HostileInputTest, UnterminatedQuotesAndExpansions) {
  const char* kScripts[] = {
      "torchrun train.py --model_name_or_path 'a/b\n--bf16\n",
      "torchrun train.py --model_name_or_path \"a/b\n",
      "X=${Y\ntorchrun train.py --model_name_or_path a/b\n",
      "A=(1 2\n",
      "cat <<EOF\nnever ends\n",
      "torchrun $(echo $(nested (deep\n",
      "\\",
      "'",
      "#FMTE model=\"unterminated\n",
  };
  for (const char* s : kScripts) {
    // Any text is a request (ParseJobRequest never fails); the sanitized run catches a crash or an
    // out-of-bounds read here.
    const JobRequest r = ParseJobRequest(s, {}, {});
    EXPECT_FALSE(r.is_llm_job && r.job.model.empty() && r.warnings.empty()) << s;
  }
  EXPECT_NE(Warnings(Parse("torchrun train.py --model_name_or_path \"a/b\n")).find("unterminated"),
            std::string::npos);
}

// Variables multiply input: a 60 kB value expanded thousands of times, an array of 30k words
// expanded thousands of times, X=$X$X doubling. All expansions of a script together stop at
// kMaxExpandedBytes (before the cap these took minutes and gigabytes); the launch line still reads.
TEST(HostileInputTest, VariableExpansionIsBounded) {
  std::string scalar = "X=\"" + std::string(60000, 'v') + "\"\n";
  for (int l = 0; l < 16; ++l) {
    std::string line = "echo";
    while (line.size() < 60000) line += " $X$X";
    scalar += line + "\n";
  }
  std::string array = "A=(";
  while (array.size() < 60000) array += "x ";
  array += ")\n";
  for (int l = 0; l < 16; ++l) {
    std::string line = "echo";
    while (line.size() < 60000) line += " ${A[@]}";
    array += line + "\n";
  }
  std::string doubling = "X=ab\n";
  for (int i = 0; i < 40; ++i) doubling += "X=$X$X\n";
  for (const std::string& hostile : {scalar, array, doubling}) {
    const JobRequest r = Parse(hostile + "torchrun train.py --model_name_or_path a/b --bf16\n");
    EXPECT_EQ(r.job.model, "a/b");
    EXPECT_NE(Warnings(r).find("expansions beyond"), std::string::npos)
        << Warnings(r).substr(0, 300);
  }
  internal::ScanOutput out = internal::ScanScript(doubling + "cmd $X\n");
  size_t bytes = 0;
  for (const internal::Command& c : out.commands)
    for (const internal::Word& w : c.words) bytes += w.text.size();
  EXPECT_LE(bytes, kMaxExpandedBytes + 1000);
}

TEST(HostileInputTest, ManyVariablesAreCapped) {
  std::string script;
  for (int i = 0; i < 1000; ++i) script += "V" + std::to_string(i) + "=x\n";
  EXPECT_NE(Warnings(Parse(script)).find("variables"), std::string::npos);
}

}  // namespace
}  // namespace fmte
