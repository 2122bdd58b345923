// A submission read on the client as sbatch sees it (fmte/submission.h): sbatch's command line
// split into options, SCRIPT and its arguments; #SBATCH lines under the command line; --export;
// and the client's reading forwarded to the controller (FMTE_READ), which must give the controller
// the same request the client read, or nothing when it is malformed. Expected values follow from
// sbatch 22.05's documented option syntax (`sbatch --help`, man sbatch) and the scripts written
// here.
#include "fmte/submission.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fmte/model.h"
#include "fmte/request.h"
#include "fmte/script_files.h"

namespace fmte {
namespace {

TEST(SplitSbatchCommandLine, OptionsValuesScriptAndArguments) {
  const std::vector<std::string> args = {"--nodes", "4",       "-p",        "gpu",  "--exclusive",
                                         "-A",      "proj",    "--mem=80G", "-t10", "run.slurm",
                                         "zephyr",  "--nodes", "2"};
  const SbatchCommandLine cl = SplitSbatchCommandLine(args);
  ASSERT_EQ(cl.options.size(), 6u);
  EXPECT_EQ(cl.options[0], (std::vector<std::string>{"--nodes", "4"}));
  EXPECT_EQ(cl.options[2], (std::vector<std::string>{"--exclusive"}));  // a flag: no value
  EXPECT_EQ(cl.options[5], (std::vector<std::string>{"-t10"}));
  EXPECT_EQ(cl.script, "run.slurm");
  // After SCRIPT every word is the script's, even one that looks like an sbatch option.
  EXPECT_EQ(cl.script_args, (std::vector<std::string>{"zephyr", "--nodes", "2"}));
}

// An interactive `srun` that asks for a new job is the same submission as sbatch --wrap: its
// options, then its command line, every word kept as one (quotes included), read like a script.
TEST(SrunAsSbatch, TheCommandBecomesTheLaunchLine) {
  const std::vector<std::string> srun = {"-N",
                                         "1",
                                         "--gres=gpu:a100:8",
                                         "-t",
                                         "60",
                                         "torchrun",
                                         "--nproc_per_node",
                                         "8",
                                         "train.py",
                                         "--model_name_or_path",
                                         "meta-llama/Llama-3.1-8B",
                                         "--run_name",
                                         "it's mine"};
  const std::vector<std::string> words = SrunAsSbatch(srun);
  ASSERT_EQ(words.size(), 6u);
  EXPECT_EQ(words[0], "-N");
  EXPECT_EQ(words[2], "--gres=gpu:a100:8");
  EXPECT_EQ(words[5],
            "--wrap='torchrun' '--nproc_per_node' '8' 'train.py' '--model_name_or_path' "
            "'meta-llama/Llama-3.1-8B' '--run_name' 'it'\\''s mine'");
  auto s = ReadSubmission(words, "/nonexistent", nullptr);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->request.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(s->request.job.gpus, 8);
  EXPECT_TRUE(SrunAsSbatch(std::vector<std::string>{"-N", "2"}).empty());  // no command
  // srun's own options with a separate value (srun(1), pyxis) are neither the command nor sbatch's.
  const std::vector<std::string> pyxis = {
      "--mpi",    "pmix",    "--container-image", "nvcr.io/x", "--gpus-per-node=4",
      "torchrun", "train.py"};
  EXPECT_EQ(SrunAsSbatch(pyxis),
            (std::vector<std::string>{"--gpus-per-node=4", "--wrap='torchrun' 'train.py'"}));
}

TEST(SplitSbatchCommandLine, CallersOwnOptionsAndHeterogeneousJobs) {
  const std::vector<std::string> args = {"--config", "fmte.conf", "-N", "1",
                                         ":",        "-N",        "2",  "train.sh"};
  const SbatchCommandLine plain = SplitSbatchCommandLine(args);
  EXPECT_EQ(plain.script, "fmte.conf");  // --config is not sbatch's: its value is SCRIPT
  const SbatchCommandLine own =
      SplitSbatchCommandLine(args, [](std::string_view name) { return name == "config"; });
  EXPECT_EQ(own.script, "train.sh");
  EXPECT_EQ(own.options.size(), 3u);
}

TEST(SbatchOptions, CommandLineWinsOverSbatchLines) {
  const std::string script =
      "#!/bin/bash\n#SBATCH --nodes=2 --gres=gpu:a100:4  # two nodes\n#SBATCH -J 'my job'\n"
      "#SBATCH --fmte-model=meta-llama/Llama-3.1-8B\necho hi\n#SBATCH --time=5\n";
  SbatchOptions o;
  ReadSbatchLines(script, &o);
  EXPECT_EQ(o.nodes, "2");
  EXPECT_EQ(o.gres, "gpu:a100:4");
  EXPECT_EQ(o.job_name, "my job");
  EXPECT_EQ(o.time, "");  // after the first command: not an sbatch line
  ASSERT_EQ(o.spank.size(), 1u);
  EXPECT_EQ(o.spank[0].first, "model");
  const std::vector<std::string> words = {"-N4", "--time", "1:00:00"};
  ApplySbatchWords(words, &o);
  auto f = FactsFrom(o);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->min_nodes, 4);
  EXPECT_EQ(f->time_limit_min, 60);
  EXPECT_EQ(f->tres_per_node, "gres:gpu:a100:4");
}

TEST(SbatchOptions, ExclusiveIsWholeNodesOnlyWithoutAValue) {
  // man sbatch: --exclusive[={user|mcs|topo}]; only the bare flag keeps the nodes to the job.
  for (const auto& [words, whole] :
       {std::pair{std::vector<std::string>{"--exclusive", "-N", "2"}, true},
        std::pair{std::vector<std::string>{"--exclusive=user"}, false},
        std::pair{std::vector<std::string>{"-N", "2"}, false}}) {
    SbatchOptions o;
    ApplySbatchWords(words, &o);
    auto f = FactsFrom(o);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->exclusive, whole) << words[0];
  }
  SbatchOptions o;
  ReadSbatchLines("#!/bin/bash\n#SBATCH --nodes=128 --exclusive --ntasks-per-node=8\nsrun x\n", &o);
  EXPECT_TRUE(o.exclusive);
}

// Host memory as sbatch takes it (man sbatch --mem: megabytes unless suffixed K, M, G or T;
// --mem=0 is all of a node's memory), and what it comes to per node once the job's GPUs and tasks
// are known (--mem-per-gpu x GPUs per node, --mem-per-cpu x CPUs per task x tasks per node).
TEST(SbatchOptions, HostMemoryPerNode) {
  for (const auto& [text, mb] :
       {std::pair{"64000", int64_t{64000}}, std::pair{"250G", int64_t{256000}},
        std::pair{"2T", int64_t{2097152}}, std::pair{"512k", int64_t{1}},
        std::pair{"0", int64_t{0}}}) {
    auto v = ParseSlurmMemoryMb(text, "--mem");
    ASSERT_TRUE(v.ok()) << text;
    EXPECT_EQ(*v, mb) << text;
  }
  for (const char* bad : {"", "lots", "10X", "-5G", "1.5G"}) {
    auto v = ParseSlurmMemoryMb(bad, "--mem");
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.status().message().find("--mem"), std::string::npos) << bad;
  }
  constexpr int64_t kMb = int64_t{1} << 20;
  const auto per_node = [](const std::string& lines) {
    SbatchOptions o;
    ReadSbatchLines("#!/bin/bash\n" + lines + "python -m axolotl.cli.train x.yaml\n", &o);
    auto f = FactsFrom(o);
    EXPECT_TRUE(f.ok()) << lines;
    const JobRequest r = ParseJobRequest("#FMTE model=meta-llama/Llama-3.1-8B\n", {}, *f);
    return std::pair{r.host_memory_per_node_bytes, r.host_memory_origin};
  };
  EXPECT_EQ(per_node("#SBATCH --gres=gpu:8 --mem=250G\n"),
            (std::pair{int64_t{256000} * kMb, std::string("--mem")}));
  EXPECT_EQ(per_node("#SBATCH --gres=gpu:4 --mem-per-gpu=64G\n"),
            (std::pair{int64_t{4 * 65536} * kMb, std::string("--mem-per-gpu x 4 GPUs per node")}));
  EXPECT_EQ(
      per_node("#SBATCH --gres=gpu:8 --ntasks-per-node=8 -c 16 --mem-per-cpu=4G\n"),
      (std::pair{int64_t{128 * 4096} * kMb, std::string("--mem-per-cpu x 128 CPUs per node")}));
  EXPECT_EQ(per_node("#SBATCH --gres=gpu:8 --mem=0\n").first, 0);  // all of it: unknown
  EXPECT_EQ(per_node("#SBATCH --gres=gpu:8\n").first, 0);
  SbatchOptions o;
  o.mem = "lots";
  const std::vector<std::string> w = DropInvalidSbatchValues(&o);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("#SBATCH --mem"), std::string::npos) << w[0];
}

TEST(SbatchOptions, InvalidValuesNameTheOption) {
  SbatchOptions o;
  o.nodes = "{{ nodes }}";
  auto f = FactsFrom(o);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("--nodes"), std::string::npos) << f.status().message();
  const std::vector<std::string> w = DropInvalidSbatchValues(&o);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("#SBATCH --nodes"), std::string::npos) << w[0];
  EXPECT_TRUE(o.nodes.empty());
}

TEST(SubmissionEnv, ExportDecidesWhichVariablesTheScriptSees) {
  const std::string script = "MODEL=${BASE_MODEL:-x}\necho $HOME $UNUSED_NOT\n";
  const char* environ_entries[] = {"BASE_MODEL=org/m", "HOME=/home/u", "OTHER=1", "SLURM_NNODES=9"};
  const auto names = [](const std::vector<std::pair<std::string, std::string>>& env) {
    std::string out;
    for (const auto& [k, v] : env) out += k + "=" + v + " ";
    return out;
  };
  SbatchOptions all;
  SlurmFacts f;
  f.min_nodes = 2;
  const std::string a = names(SubmissionEnv(all, f, "/d", script, environ_entries));
  EXPECT_NE(a.find("BASE_MODEL=org/m"), std::string::npos) << a;
  EXPECT_NE(a.find("HOME=/home/u"), std::string::npos) << a;
  EXPECT_EQ(a.find("OTHER="), std::string::npos) << a;          // the script does not name it
  EXPECT_NE(a.find("SLURM_NNODES=2"), std::string::npos) << a;  // the allocation's, not the shell's
  EXPECT_EQ(a.find("SLURM_NNODES=9"), std::string::npos) << a;
  SbatchOptions none;
  none.exports = "NONE";
  const std::string n = names(SubmissionEnv(none, f, "/d", script, environ_entries));
  EXPECT_EQ(n.find("BASE_MODEL"), std::string::npos) << n;
  SbatchOptions listed;
  listed.exports = "HOME,EXTRA=5";
  const std::string l = names(SubmissionEnv(listed, f, "/d", script, environ_entries));
  EXPECT_EQ(l.find("BASE_MODEL"), std::string::npos) << l;
  EXPECT_NE(l.find("HOME=/home/u"), std::string::npos) << l;
  EXPECT_NE(l.find("EXTRA=5"), std::string::npos) << l;
}

class ReadSubmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fmte_submission_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "job" / "configs");
    auto table = LoadLauncherTable(FMTE_SOURCE_DIR "/etc");
    ASSERT_TRUE(table.ok()) << table.status().message();
    table_ = std::move(table).value();
    std::ofstream(dir_ / "job" / "train.sh")
        << "#!/bin/bash\n#SBATCH --gres=gpu:a100:8\nDS=configs/${1:-ds.json}\n"
           "deepspeed --num_gpus 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B \\\n"
           "  --deepspeed \"$DS\" --max_seq_length 2048\n";
    std::ofstream(dir_ / "job" / "configs" / "ds.json")
        << R"({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3}})";
    std::ofstream(dir_ / "job" / "configs" / "ds_z1.json")
        << R"({"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 1}})";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string ValueOf(const JobRequest& r, std::string_view key) {
    const FieldSource* s = r.SourceOf(key);
    return s == nullptr ? "" : s->value;
  }

  std::filesystem::path dir_;
  LauncherTable table_;
};

TEST_F(ReadSubmissionTest, ScriptArgumentsAndChdirChooseTheConfig) {
  // sbatch -D job job/train.sh ds_z1.json, run from dir_: the script relative to where sbatch
  // runs, the config relative to -D.
  const std::vector<std::string> cl = {"-D", "job", "--nodes=1", "job/train.sh", "ds_z1.json"};
  auto s = ReadSubmission(cl, dir_.string(), &table_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(ValueOf(s->request, "sharding"), "zero1");
  EXPECT_EQ(ValueOf(s->request, "micro-batch"), "4");
  EXPECT_EQ(s->request.job.gpus, 8);
  const std::vector<std::string> cl2 = {"-D", "job", "job/train.sh"};
  auto d = ReadSubmission(cl2, dir_.string(), &table_);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(ValueOf(d->request, "sharding"), "zero3");
}

// What the trainers do by themselves, from their code: a sequence length that only truncates
// (LLaMA-Factory cutoff_len, TRL max_seq_length, torchtune tokenizer.max_seq_len without packing)
// is a limit, not every batch's length; LLaMA-Factory checkpoints activations unless
// disable_gradient_checkpointing (model_utils/checkpointing.py); litgpt's finetune scripts
// checkpoint every Block under FSDP on several devices, its pretrain does not.
TEST_F(ReadSubmissionTest, TruncationLimitsAndTheTrainersOwnCheckpointing) {
  const auto read = [&](const std::string& name, const std::string& script) {
    std::ofstream(dir_ / "job" / name) << "#!/bin/bash\n#SBATCH --gres=gpu:a100:2\n" << script;
    auto s = ReadSubmission(std::vector<std::string>{"-D", "job", "job/" + name}, dir_.string(),
                            &table_);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? s->request : JobRequest{};
  };
  const auto yaml = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "job" / "configs" / name) << text;
  };
  const std::string lf =
      "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: sft\n"
      "finetuning_type: lora\ncutoff_len: 4096\n";
  yaml("lf.yaml", lf);
  yaml("lf_packed.yaml", lf + "packing: true\n");
  yaml("lf_pt.yaml", "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: pt\ncutoff_len: 4096\n");
  yaml("lf_no_gc.yaml", lf + "disable_gradient_checkpointing: true\n");
  const JobRequest plain = read("lf.sh", "llamafactory-cli train configs/lf.yaml\n");
  EXPECT_EQ(plain.job.seq_len, 4096);
  EXPECT_TRUE(plain.job.seq_len_is_cap);
  EXPECT_EQ(plain.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_FALSE(
      read("lfp.sh", "llamafactory-cli train configs/lf_packed.yaml\n").job.seq_len_is_cap);
  EXPECT_FALSE(read("lfpt.sh", "llamafactory-cli train configs/lf_pt.yaml\n").job.seq_len_is_cap);
  EXPECT_EQ(read("lfng.sh", "llamafactory-cli train configs/lf_no_gc.yaml\n")
                .job.activation_checkpointing,
            Checkpointing::kNone);
  // LLaMA-Factory takes OmegaConf dotlist overrides after its YAML (llamafactory/hparams/parser.py
  // read_args: OmegaConf.from_cli), undotted keys included: they win over the file.
  const JobRequest overridden = read("lfo.sh",
                                     "llamafactory-cli train configs/lf.yaml cutoff_len=2048 "
                                     "disable_gradient_checkpointing=true\n");
  EXPECT_EQ(overridden.job.seq_len, 2048);
  EXPECT_EQ(overridden.job.activation_checkpointing, Checkpointing::kNone);

  const std::string trl =
      "torchrun --nproc_per_node 2 trl/scripts/sft.py --model_name_or_path "
      "meta-llama/Llama-3.1-8B --max_seq_length 2048";
  EXPECT_TRUE(read("trl.sh", trl + "\n").job.seq_len_is_cap);
  EXPECT_FALSE(read("trlp.sh", trl + " --packing\n").job.seq_len_is_cap);
  EXPECT_FALSE(read("clm.sh",
                    "torchrun --nproc_per_node 2 run_clm.py --model_name_or_path "
                    "meta-llama/Llama-3.1-8B --block_size 2048\n")
                   .job.seq_len_is_cap);

  const std::string tune =
      "tune run --nproc_per_node 2 lora_finetune_distributed --config "
      "llama3_1/8B_lora tokenizer.max_seq_len=4096";
  EXPECT_TRUE(read("tune.sh", tune + "\n").job.seq_len_is_cap);
  EXPECT_FALSE(read("tunep.sh", tune + " dataset.packed=True\n").job.seq_len_is_cap);

  yaml("lit.yaml",
       "checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf\ndevices: 2\n"
       "train:\n  micro_batch_size: 1\n  max_seq_length: 2048\n");
  const JobRequest lit = read("lit.sh", "litgpt finetune_lora --config configs/lit.yaml\n");
  EXPECT_EQ(lit.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_TRUE(lit.job.seq_len_is_cap);
  const JobRequest pre = read("pre.sh", "litgpt pretrain --config configs/lit.yaml\n");
  EXPECT_EQ(pre.job.activation_checkpointing, Checkpointing::kNone);
  EXPECT_FALSE(pre.job.seq_len_is_cap);
}

TEST_F(ReadSubmissionTest, MissingScriptAndStdinAreErrors) {
  const std::vector<std::string> missing = {"nope.sh"};
  auto m = ReadSubmission(missing, dir_.string(), &table_);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("SCRIPT: cannot open"), std::string::npos);
  const std::vector<std::string> stdin_script = {"-N", "2"};
  EXPECT_FALSE(ReadSubmission(stdin_script, dir_.string(), &table_).ok());
  const std::vector<std::string> bad = {"--time=soon", "job/train.sh"};
  auto b = ReadSubmission(bad, dir_.string(), &table_);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("--time"), std::string::npos) << b.status().message();
}

TEST_F(ReadSubmissionTest, PastJobReadWithItsAllocationAndWorkDir) {
  // A stored script (sacct --batch-script) with the submit line's arguments (SubmitLine), read in
  // its WorkDir; the allocation (2 nodes x 4 untyped GPUs, 30 minutes) wins over #SBATCH and keeps
  // the script's GPU type.
  std::ifstream in(dir_ / "job" / "train.sh");
  const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SbatchOptions got;
  got.nodes = "2";
  got.gpus_per_node = "4";
  got.time = "30";
  got.partition = "big";
  const std::vector<std::string> cl = {"--nodes=1", "train.sh", "ds_z1.json"};
  auto s = ReadPastSubmission(script, cl, (dir_ / "job").string(), got, &table_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(ValueOf(s->request, "sharding"), "zero1");  // the argument picked ds_z1.json
  EXPECT_EQ(s->facts.min_nodes, 2);
  EXPECT_EQ(s->facts.time_limit_min, 30);
  EXPECT_EQ(s->facts.partition, "big");
  EXPECT_EQ(s->facts.tres_per_node, "gres:gpu:a100:4");
  EXPECT_EQ(s->request.job.gpus, 8);
  // Nothing known but the script: its own #SBATCH lines and the default config.
  auto bare = ReadPastSubmission(script, {}, (dir_ / "job").string(), SbatchOptions{}, &table_);
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  EXPECT_EQ(ValueOf(bare->request, "sharding"), "zero3");
  EXPECT_EQ(bare->facts.tres_per_node, "gres:gpu:a100:8");
}

// A model the catalog does not know, read where the job will load it: a model directory the
// launch line names (relative to the submission directory) or the submitter's Hugging Face cache
// (models--org--name/snapshots/<rev>/config.json, refs/main's revision). Its config.json (here a
// published one from the catalog, under another name) becomes the arch the client forwards.
TEST_F(ReadSubmissionTest, ModelFromALocalDirectoryOrTheHuggingFaceCache) {
  namespace fs = std::filesystem;
  const fs::path published = FMTE_SOURCE_DIR "/etc/models/Qwen/Qwen3-8B/config.json";
  fs::create_directories(dir_ / "job" / "ckpt" / "my-qwen");
  fs::copy_file(published, dir_ / "job" / "ckpt" / "my-qwen" / "config.json");
  const fs::path snap = dir_ / "hf" / "hub" / "models--acme--qwen-ft" / "snapshots" / "abc123";
  fs::create_directories(snap);
  fs::copy_file(published, snap / "config.json");
  fs::create_directories(dir_ / "hf" / "hub" / "models--acme--qwen-ft" / "refs");
  std::ofstream(dir_ / "hf" / "hub" / "models--acme--qwen-ft" / "refs" / "main") << "abc123\n";
  auto catalog = ModelCatalog::LoadDir(FMTE_SOURCE_DIR "/etc/models");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  const std::string hf_home = "HF_HOME=" + (dir_ / "hf").string();
  const char* env[] = {hf_home.c_str(), "PATH=/usr/bin"};
  auto job = [&](const std::string& model) {
    std::ofstream(dir_ / "job" / "m.sh")
        << "#!/bin/bash\n#SBATCH --gres=gpu:8\ntorchrun --nproc_per_node 8 sft.py "
           "--model_name_or_path "
        << model << " --bf16\n";
    const std::vector<std::string> cl = {"-D", "job", "job/m.sh"};
    auto s = ReadSubmission(cl, dir_.string(), &table_, env, &catalog.value());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? s->request : JobRequest();
  };
  for (const std::string model : {"./ckpt/my-qwen", "ckpt/my-qwen", "acme/qwen-ft"}) {
    SCOPED_TRACE(model);
    const JobRequest r = job(model);
    EXPECT_EQ(r.job.model, model);
    auto arch = ParseModelConfig(r.arch_json, model);
    ASSERT_TRUE(arch.ok()) << arch.status().message();
    EXPECT_EQ(arch->Counts().total, (*catalog->Find("Qwen/Qwen3-8B"))->Counts().total);
  }
  // A catalog id needs nothing forwarded; a path that names nothing is a note, not a failure.
  EXPECT_TRUE(job("Qwen/Qwen3-8B").arch_json.empty());
  const JobRequest missing = job("./ckpt/nothing");
  EXPECT_TRUE(missing.arch_json.empty());
  bool noted = false;
  for (const std::string& w : missing.warnings)
    noted = noted || w.find("ckpt/nothing': no such file") != std::string::npos;
  EXPECT_TRUE(noted);
  // Not in the cache that the environment names: unknown, nothing guessed.
  EXPECT_TRUE(job("acme/other").arch_json.empty());

  // The same models named by an #FMTE line (it wins over the launch line's) are read the same way.
  auto fmte_line_job = [&](const std::string& model) {
    std::ofstream(dir_ / "job" / "f.sh")
        << "#!/bin/bash\n#SBATCH --gres=gpu:8\n#FMTE model=" << model
        << " method=full\ntorchrun --nproc_per_node 8 sft.py --model_name_or_path "
           "meta-llama/Llama-3.1-8B --bf16\n";
    const std::vector<std::string> cl = {"-D", "job", "job/f.sh"};
    auto s = ReadSubmission(cl, dir_.string(), &table_, env, &catalog.value());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? s->request : JobRequest();
  };
  for (const std::string model : {"./ckpt/my-qwen", "acme/qwen-ft"}) {
    SCOPED_TRACE("#FMTE model=" + model);
    const JobRequest r = fmte_line_job(model);
    EXPECT_EQ(r.job.model, model);
    ASSERT_NE(r.SourceOf("model"), nullptr);
    EXPECT_EQ(r.SourceOf("model")->source, Source::kFmteLine);
    auto arch = ParseModelConfig(r.arch_json, model);
    ASSERT_TRUE(arch.ok()) << arch.status().message();
    EXPECT_EQ(arch->Counts().total, (*catalog->Find("Qwen/Qwen3-8B"))->Counts().total);
  }
  EXPECT_TRUE(fmte_line_job("Qwen/Qwen3-8B").arch_json.empty());
}

TEST_F(ReadSubmissionTest, ForwardedReadingGivesTheControllerTheClientsRequest) {
  const std::vector<std::string> cl = {"-D", "job", "job/train.sh", "ds_z1.json"};
  auto s = ReadSubmission(cl, dir_.string(), &table_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::string read = EncodeClientReading(s->request);
  ASSERT_FALSE(read.empty());
  EXPECT_LE(read.size(), kMaxReadJsonBytes);
  // The controller has the same script and Slurm facts, but no files: alone it cannot know the
  // stage; with FMTE_READ it reads what the client read.
  const JobRequest alone = ParseJobRequest(s->script, {}, s->facts);
  EXPECT_EQ(ValueOf(alone, "sharding"), "");
  const JobRequest ctld = ParseJobRequest(s->script, {{std::string(kReadKey), read}}, s->facts);
  for (const FieldSource& f : s->request.sources) EXPECT_EQ(ValueOf(ctld, f.key), f.value) << f.key;
  EXPECT_EQ(ctld.job.micro_batch, 4);
  EXPECT_EQ(ctld.job.gpus, s->request.job.gpus);
  EXPECT_EQ(ctld.launcher, s->request.launcher);
  EXPECT_EQ(ctld.files_read, s->request.files_read);
  EXPECT_TRUE(ctld.unread.empty());
  // A SPANK option still wins over what the files say.
  const JobRequest spank =
      ParseJobRequest(s->script, {{std::string(kReadKey), read}, {"micro-batch", "1"}}, s->facts);
  EXPECT_EQ(spank.job.micro_batch, 1);
}

// The client scanned the whole script: FMTE_READ carries its #FMTE lines and the scan's warnings,
// and the controller, which then does not scan the script, reaches the same request from the
// reading alone (here: with an empty script in place of the real one).
TEST_F(ReadSubmissionTest, ForwardedScanSparesTheControllerItsOwnScan) {
  std::ofstream(dir_ / "job" / "fmte.sh")
      << "#!/bin/bash\n#SBATCH --gres=gpu:8\n#FMTE seq-len=4096\n#FMTE epochs=2\n"
         "echo 'unterminated\n"
         "deepspeed --num_gpus 8 train.py --model_name_or_path meta-llama/Llama-3.1-8B \\\n"
         "  --deepspeed configs/ds.json\n";
  auto s =
      ReadSubmission(std::vector<std::string>{"-D", "job", "job/fmte.sh"}, dir_.string(), &table_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const JobRequest& client = s->request;
  ASSERT_EQ(client.script_fmte_lines.size(), 2u);
  EXPECT_EQ(client.script_fmte_lines[0].first, 3);  // the script's line 3
  const std::string read = EncodeClientReading(client);
  ASSERT_NE(read.find("\"fmte\""), std::string::npos) << read;
  const JobRequest own = ParseJobRequest(s->script, {}, s->facts);
  const JobRequest ctld = ParseJobRequest("", {{std::string(kReadKey), read}}, s->facts);
  EXPECT_EQ(ValueOf(ctld, "seq-len"), "4096");
  EXPECT_EQ(ValueOf(ctld, "epochs"), "2");
  ASSERT_NE(ctld.SourceOf("seq-len"), nullptr);
  EXPECT_EQ(ctld.SourceOf("seq-len")->origin, own.SourceOf("seq-len")->origin);
  for (const FieldSource& f : client.sources) EXPECT_EQ(ValueOf(ctld, f.key), f.value) << f.key;
  // The scan's warning (the unterminated quote) reaches the user as before.
  EXPECT_EQ(ctld.warnings, client.warnings);
  bool quote = false;
  for (const std::string& w : ctld.warnings) quote = quote || w.find("quote") != std::string::npos;
  EXPECT_TRUE(quote);
  // A script no launcher or #FMTE line marks is forwarded too (an empty scan), so the controller
  // never scans a script the client read; one the client did not read is scanned as before.
  std::ofstream(dir_ / "job" / "plain.sh") << "#!/bin/bash\n#SBATCH --gres=gpu:1\npython eval.py\n";
  auto plain =
      ReadSubmission(std::vector<std::string>{"-D", "job", "job/plain.sh"}, dir_.string(), &table_);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_NE(EncodeClientReading(plain->request).find("\"fmte\":[]"), std::string::npos);
  EXPECT_EQ(EncodeClientReading(ParseJobRequest(s->script, {}, s->facts)), "");
  // An #FMTE line that is not UTF-8 cannot travel unchanged: the controller scans the script.
  std::ofstream(dir_ / "job" / "latin1.sh")
      << "#!/bin/bash\n#SBATCH --gres=gpu:1\n#FMTE model=caf\xe9\n"
         "torchrun --nproc_per_node 1 train.py --model_name_or_path meta-llama/Llama-3.1-8B\n";
  auto latin1 = ReadSubmission(std::vector<std::string>{"-D", "job", "job/latin1.sh"},
                               dir_.string(), &table_);
  ASSERT_TRUE(latin1.ok()) << latin1.status().message();
  const std::string latin1_read = EncodeClientReading(latin1->request);
  EXPECT_EQ(latin1_read.find("\"fmte\""), std::string::npos) << latin1_read;
  const JobRequest scanned =
      ParseJobRequest(latin1->script, {{std::string(kReadKey), latin1_read}}, latin1->facts);
  EXPECT_EQ(scanned.job.model, latin1->request.job.model);
}

// Found by fuzz_submission (UBSan): a number beyond int64 in a config file (8.55556e+46) was
// converted to an integer before its range was checked. It is now a value that does not parse, a
// warning naming the file's key; the rest of the file still applies. (Fails under UBSan.)
TEST_F(ReadSubmissionTest, HugeNumbersInConfigFilesAreBadValuesNotUndefined) {
  std::ofstream(dir_ / "job" / "configs" / "huge.json")
      << R"({"train_micro_batch_size_per_gpu": 8.55556e+46, "zero_optimization": {"stage": 3}})";
  auto s = ReadSubmission(std::vector<std::string>{"-D", "job", "job/train.sh", "huge.json"},
                          dir_.string(), &table_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(ValueOf(s->request, "sharding"), "zero3");
  EXPECT_EQ(s->request.job.micro_batch, 1);
  bool named = false;
  for (const std::string& w : s->request.warnings)
    named = named || w.find("train_micro_batch_size_per_gpu") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(ClientReading, MalformedForwardIsNotTrusted) {
  const std::string script =
      "#!/bin/bash\ntorchrun --nproc_per_node 4 train.py --model_name_or_path "
      "meta-llama/Llama-3.1-8B --per_device_train_batch_size 2\n";
  SlurmFacts facts;
  facts.tres_per_node = "gres:gpu:4";
  for (const std::string& bad :
       std::vector<std::string>{"not json",
                                R"({"v":2,"values":[]})",
                                R"({"v":1,"values":[["model"]]})",
                                R"({"v":1,"procs":-3})",
                                R"({"v":1,"values":"x"})",
                                std::string(kMaxReadJsonBytes + 1, ' '),
                                R"([{"v":1}])",
                                R"({"v":1} trailing)",
                                R"({"v":1,"launcher":["torchrun"]})",
                                R"({"v":1,"files":[1]})",
                                R"({"v":1,"unread":[["a"]]})",
                                R"({"v":1,"values":[["model","org/m","o",4]]})",
                                R"({"v":1,"procs":1.5})",
                                R"({"v":"1"})",
                                R"({"values":[["model","org/m","o"]]})",
                                R"({"v":1,"arch":{}})",
                                R"({"v":1,"values":[["model","org/m","o"]])",
                                R"({"v":1,"fmte":[["x","model=org/m"]]})",
                                R"({"v":1,"fmte":[["12"]]})",
                                R"({"v":1,"fmte":"model=org/m"})",
                                R"({"v":1,"notes":[1]})",
                                R"({"v":1,"fmte":[["99999999","model=org/m"]]})"}) {
    const JobRequest r = ParseJobRequest(script, {{std::string(kReadKey), bad}}, facts);
    // The controller's own reading stands, with a warning naming FMTE_READ.
    EXPECT_EQ(r.job.model, "meta-llama/Llama-3.1-8B") << bad.substr(0, 40);
    EXPECT_EQ(r.job.micro_batch, 2) << bad.substr(0, 40);
    bool warned = false;
    for (const std::string& w : r.warnings) warned = warned || w.starts_with("FMTE_READ");
    EXPECT_TRUE(warned) << bad.substr(0, 40);
  }
  // A forwarded value that does not parse is a warning naming its key; the rest applies.
  const JobRequest r = ParseJobRequest(
      script,
      {{std::string(kReadKey),
        R"({"v":1,"launcher":"torchrun","procs":4,"values":[["model","org/m","file: a.yaml: model"],["seq-len","abc","file: a.yaml: cutoff_len"]]})"}},
      facts);
  EXPECT_EQ(r.job.model, "org/m");
  // Keys of a later release are skipped, whatever they hold.
  const JobRequest later = ParseJobRequest(
      script,
      {{std::string(kReadKey),
        R"({"new":{"a":[1,{"b":[2,"x"]}],"c":null},"v":1,"launcher":"torchrun","procs":4,"values":[["model","org/m","file: a.yaml: model"]],"z":[[]]})"}},
      facts);
  EXPECT_EQ(later.job.model, "org/m");
  EXPECT_EQ(later.launcher, "torchrun");
  for (const std::string& w : later.warnings) EXPECT_FALSE(w.starts_with("FMTE_READ")) << w;
  bool named = false;
  for (const std::string& w : r.warnings)
    named = named || w.find("cutoff_len") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(ClientReading, SpankEnvironmentCarriesIt) {
  const std::string entry = std::string(kReadEnvName) + "={\"v\":1}";
  const char* env[] = {"FOO=1", entry.c_str(), nullptr};
  const auto values = SpankValuesFromEnv(env);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].first, kReadKey);
  EXPECT_EQ(values[0].second, "{\"v\":1}");
}

}  // namespace
}  // namespace fmte
