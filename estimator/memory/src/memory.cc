// EstimateMemory: composes model states, activations, logits and framework buffers per pipeline
// stage and takes the peak over the phases of a training step (docs/formulas.md §4b):
//   forward-backward turn: weights + optimizer + saved activations + logits/loss + the first
//     gradients (all gradients when earlier micro-batches already accumulated them) + gathered
//     weights / autocast casts;
//   end of backward: weights + optimizer + all gradients (+ DDP buckets);
//   optimizer step: weights + optimizer + gradients + the step's temporaries.
// Gradients are None during the first forward (zero_grad(set_to_none=True), the default of
// torch.optim and HF Trainer), so they do not coexist with all activations unless micro-batches
// accumulate or pipeline stages interleave forward and backward.
#include "fmte/memory.h"

#include <algorithm>
#include <optional>

#include "memory_internal.h"

namespace fmte {

using memory::Buffers;
using memory::Dtypes;
using memory::KindUses;
using memory::LayerCount;
using memory::Layout;
using memory::LoraTargets;
using memory::ModelStates;
using memory::Saturate;
using memory::StageActivations;
using memory::StageParams;

namespace {

struct StagePeak {
  double allocated = 0;
  double turn = 0, end_of_backward = 0, optimizer_step = 0;  // allocated bytes of each phase
  double turn_cached = 0;      // reserved beyond the turn's allocated bytes (the smaller transient)
  double first_turn = 0;       // the first step's forward-backward, before the optimizer's states
  double evaluation = 0;       // an evaluation forward's (0: the job does not evaluate)
  double checkpoint_save = 0;  // a full-state-dict checkpoint save's (0: none)
  double checkpoint_host = 0;  // its host memory on rank 0's node
  // The allocated peak with accumulated gradients kept sharded (FSDP's no_sync not used), the
  // reading the low end rests on: whether a trainer version accumulates unsharded is not
  // something the job says (docs/memory.md "Gradient accumulation under FSDP").
  double allocated_synced = 0;
  double weights = 0, grads = 0, optimizer = 0, activations = 0, logits = 0, other = 0;
  double reference = 0;
  double critic = 0;
  // A colocated inference engine's share held at this phase (in `allocated`, without the
  // allocator's fragmentation: vLLM allocates its cache whole).
  double generation = 0;
  double generation_phase = 0;  // the generation phase of a sleeping engine (0: none)
  double update_held = 0;  // with a sleeping engine: the update's peak, held with fragmentation
  double weight_sync = 0;  // a sync of gathered weights into the engine (0: none)
  double weight_sync_engine = 0;  // the engine's bytes awake during it
  // Bytes the caching allocator keeps reserved beyond `allocated` (in `other`); the phase with
  // the most held (allocated + cached) is the peak, and `max_allocated` the largest allocated.
  double cached = 0;
  double max_allocated = 0;
  double cpu = 0;
  const char* phase = "forward-backward";
};

// What the allocator holds at a stage's peak with its fragmentation (the engine's share, whole, has
// none): the device memory of the phase but for the CUDA context.
double HeldWithFragmentation(const StagePeak& p) {
  return p.allocated + p.cached + memory::FragmentationBytes(p.allocated - p.generation);
}

// `known_act`: the stage's activations when the caller has them (else computed here). `engine`:
// the bytes of a colocated inference engine's share of the GPU (0: none).
StagePeak EstimateStage(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                        const Dtypes& dt, const LoraTargets& targets, const KindUses& uses,
                        const StageParams& sp, int stage, const StageActivations* known_act,
                        double engine) {
  const ModelStates ms = memory::ComputeModelStates(m, j, lay, dt, sp);
  const StageActivations act =
      known_act != nullptr ? *known_act
                           : memory::ComputeStageActivations(m, j, lay, dt, targets, uses, stage);
  const Buffers buf = memory::ComputeBuffers(m, j, lay, dt, sp);
  const double logits = stage == lay.p - 1 ? memory::LogitsBytes(m, j, lay, dt, sp) : 0;

  // A frozen reference model (dpo and kto full fine-tuning, TrainingJob::KeepsReferenceModel):
  // loaded as the policy is, in the same dtype (TRL's DPOTrainer builds it from the policy's
  // model_init_kwargs; LLaMA-Factory's create_ref_model and ms-swift from the same model
  // arguments) and placed as its weights are: sharded under ZeRO-3 (TRL prepare_deepspeed gives it
  // the policy's stage 3 config, stage 0 otherwise) and FSDP (prepare_fsdp), split by Megatron's
  // tensor and pipeline parallelism as the policy (Megatron-SWIFT), whole on every GPU under
  // ZeRO-1/2 and DDP. So it holds what the policy's weights hold on this stage; with the
  // parameters offloaded (ZeRO-3 offload_param, which TRL's copy of the config keeps) it sits in
  // host memory beside them.
  const double reference = j.KeepsReferenceModel() ? ms.weights : 0;
  const double host_reference = j.KeepsReferenceModel() ? ms.host_weights : 0;
  // A colocated inference engine (TrainingJob::generation_memory) that never sleeps holds its
  // share through every phase, as the states do; one that sleeps only while it generates.
  const double engine_held = j.generation_sleeps ? 0 : engine;
  // An online job's value model (TrainingJob::critic: verl's critic for PPO with GAE) trained on
  // the same GPUs: a second copy of the policy's weights and optimizer states as this GPU holds
  // them, resident while the policy trains (verl's fsdp_workers keep both workers' states on the
  // GPU unless offloaded).
  const double critic = j.critic && GeneratesCompletions(j.objective)
                            ? ms.weights + ms.quant_consts + ms.optimizer
                            : 0;
  const double base = ms.weights + reference + critic + ms.quant_consts + ms.optimizer +
                      buf.persistent + engine_held;
  // Accumulated gradients exist during later forwards (gradient accumulation, pipelining).
  // Megatron's DDP keeps every gradient in one contiguous main_grad buffer allocated when the
  // model is wrapped and only zeroed between steps (megatron/core/distributed/
  // param_and_grad_buffer.py: grad_data = torch.zeros(numel, dtype=grad_dtype) in the buffer's
  // constructor; DistributedDataParallel.zero_grad_buffer), so its gradients are always there.
  const bool grads_live =
      (lay.micro_batches > 1 || lay.p > 1 || j.framework == Framework::kMegatron) &&
      !j.optimizer_in_backward && !j.offload_optimizer;
  const double turn_grads = grads_live ? ms.accum_grads : ms.first_grads;

  // The logits peak in the loss backward, before backward reaches the layers; a recomputed layer
  // is rebuilt only when its backward runs, once the logits and their gradients are freed (the
  // loss's autograd nodes release them: transformers ForCausalLMLoss, Megatron's in-place
  // vocab-parallel softmax, litgpt's chunked cross-entropy). So the two are never allocated
  // together: the turn allocates the larger beside the saved checkpoints (peak snapshots of HF
  // Trainer runs on an H100, tests/data/memory-measured/peak-snapshot-h100-hf.csv: Qwen3-1.7B,
  // 8192 tokens, full checkpointing, peaks with the three fp32 logits copies and the checkpoints
  // only). The caching allocator keeps the smaller one's blocks reserved: the segments cut for one
  // are split by the other's blocks of other sizes and by what lives on across the step, so the
  // next step cuts new ones. On this project's 55 checkpointed H100 runs measured both ways,
  // max_memory_reserved - max_memory_allocated is 0.4-13 GiB, 1-24% of the allocated peak, against
  // 0.4-10% without checkpointing (measured-h100-hf.csv).
  const bool logits_peak = logits >= act.rebuilt;
  double turn_act = act.gpu - (logits_peak ? act.rebuilt : 0);
  double turn_logits = logits_peak ? logits : 0;
  const double turn_cached = std::min(logits, act.rebuilt);

  double turn = base + turn_act + turn_logits + turn_grads + buf.forward + buf.backward;
  if (j.KeepsLastStepQuantInputs()) {
    // litgpt's loop keeps the last step's logits until the next forward returns (finetune/lora.py
    // fit(): `logits = model(input_ids, lm_head_chunk_size=128)`), and with them that step's graph,
    // whose 4-bit products hold their inputs under bitsandbytes before 0.43.2
    // (TrainingJob::bnb_ctx_inputs). So at the end of a forward the previous step's inputs of the
    // quantised linears (every linear of the blocks; LoRA's own saved tensors were freed) and its
    // 16-bit logits are allocated beside the new ones, before the loss saves anything.
    const double tokens = static_cast<double>(j.LocalSeqLen()) * static_cast<double>(j.micro_batch);
    double kept_inputs = 0;
    for (size_t kind = 0; kind < uses.size(); ++kind)
      if (uses[kind] > 0)
        kept_inputs += uses[kind] * memory::LinearInputBytesPerToken(m.block_kinds[kind], dt);
    kept_inputs *= tokens;
    const double both_logits =
        logits > 0 ? 2 * tokens * static_cast<double>(m.vocab_size) * dt.act : 0;
    const double forward_end =
        base + act.gpu + kept_inputs + both_logits + turn_grads + buf.forward + buf.backward;
    if (forward_end > turn) {
      turn = forward_end;
      turn_act = act.gpu + kept_inputs;
      turn_logits = both_logits;
    }
  }
  const double end_bwd = base + ms.grads + buf.backward;
  const double step = base + ms.grads + ms.step_temp;
  // Evaluation (j.eval_batch > 0): a forward under no_grad after an optimizer step, so no saved
  // activations and no gradients (zero_grad(set_to_none=True) in torch.optim and the HF Trainer,
  // before _maybe_log_save_evaluate) except Megatron's main_grad buffer, which stays allocated;
  // the weights and optimizer states stay on the GPU (HF Trainer evaluate(), Megatron
  // evaluate(), litgpt validate()). The peak: one layer's working set and, on the last stage, the
  // loss over the evaluation batch's logits.
  const bool evaluates = j.eval_batch > 0;
  const double between_steps_grads = j.framework == Framework::kMegatron ? ms.grads : 0;
  const double eval_act = evaluates ? memory::EvalLayerBytes(m, j, lay, dt, uses) : 0;
  const double eval_logits =
      evaluates && stage == lay.p - 1 ? memory::EvalLogitsBytes(m, j, lay, dt) : 0;
  const double eval =
      evaluates ? base + between_steps_grads + buf.eval + eval_act + eval_logits : 0;

  // The phase that holds the most (allocated + cached) is the stage's peak, with its breakdown; a
  // later phase takes it only by holding more.
  StagePeak best;
  double take_engine = engine_held;
  const auto take = [&](const char* phase, double allocated, double grads, double activations,
                        double logits_part, double buffers, double cached) {
    // Compared as the device holds them: a sleeping engine's phase has its share unfragmented.
    if (allocated + memory::FragmentationBytes(allocated - take_engine) <=
        HeldWithFragmentation(best))
      return;
    best = StagePeak{};
    best.allocated = allocated;
    best.weights = ms.weights;
    best.reference = reference;
    best.critic = critic;
    best.grads = grads;
    best.optimizer = ms.optimizer;
    best.activations = activations;
    best.logits = logits_part;
    best.cached = cached;
    best.other = ms.quant_consts + buf.persistent + buffers;
    best.generation = take_engine;
    best.phase = phase;
  };
  take("forward-backward", turn, turn_grads, turn_act, turn_logits, buf.forward + buf.backward,
       turn_cached);
  take("end-of-backward", end_bwd, ms.grads, 0, 0, buf.backward, 0);
  take("optimizer-step", step, ms.grads, 0, 0, ms.step_temp, 0);
  if (evaluates) take("evaluation", eval, between_steps_grads, eval_act, eval_logits, buf.eval, 0);
  // A checkpoint save after an optimizer step (gradients None again) that gathers the full state
  // on rank 0 (TrainingJob::SavesFullStateDict): one unit's gather beside the states.
  const memory::CheckpointSave save = memory::ComputeCheckpointSave(j, dt, sp);
  const double save_bytes = save.gpu > 0 ? base + save.gpu : 0;
  if (save.gpu > 0) take("checkpoint-save", save_bytes, 0, 0, 0, save.gpu, 0);
  // A sleeping engine generates between optimizer steps (TRL wakes it in _generate_and_score_
  // completions at the start of a step, after zero_grad; verl's rollout before the actor's
  // update): the resident states, Megatron's gradient buffer and the engine's whole share. The
  // weights' gather into the engine (ZeRO-3, FSDP) is one unit at a time, not counted.
  const double generation =
      engine > 0 && j.generation_sleeps ? base + between_steps_grads + engine : 0;
  const double update_held = HeldWithFragmentation(best);
  // Under ZeRO-3 with the whole model gathered at once to generate or to sync it into the engine
  // (TrainingJob::generation_gathers: TRL's unwrap_model_for_generation and its PEFT sync,
  // deepspeed.zero.GatheredParameters(model.parameters()); ms-swift's sync in one batch), each GPU
  // holds the 16-bit model beside its shards.
  const double model16 = memory::ZeroGatheredModelBytes(dt, sp);
  const double gathered =
      GeneratesCompletions(j.objective) && j.generation_gathers && j.sharding == Sharding::kZero3
          ? model16
          : 0;
  // model.generate's KV cache (TrainingJob::generation_batch).
  const double kv_cache = memory::GenerationKvCacheBytes(m, j, lay, dt, uses);
  // The generation between optimizer steps: a sleeping engine's whole share, or the trainer's own
  // model generating (gathered under ZeRO-3) with its KV cache; resident states beside either.
  const double own_generation = engine == 0 && (j.generation_batch > 0 || gathered > 0)
                                    ? base + between_steps_grads + gathered + kv_cache
                                    : 0;
  if (own_generation > 0)
    take("generation", own_generation, between_steps_grads, 0, 0, gathered + kv_cache, 0);
  // Syncing the weights into an engine with the model gathered: a sleeping engine has woken its
  // weights only (vLLM wake_up(tags=["weights"]) before the sync, its KV cache after; at most the
  // 16-bit model, one copy with vLLM's tensor parallel size 1), an awake one holds its share.
  const double sync_engine = j.generation_sleeps ? std::min(engine, model16) : engine_held;
  const double weight_sync =
      engine > 0 && gathered > 0
          ? base + between_steps_grads + gathered + (j.generation_sleeps ? sync_engine : 0)
          : 0;
  take_engine = sync_engine;
  if (weight_sync > 0) take("weight-sync", weight_sync, between_steps_grads, 0, 0, gathered, 0);
  take_engine = engine;
  if (generation > 0) take("generation", generation, between_steps_grads, 0, 0, 0, 0);
  const double generation_phase = std::max(generation, own_generation);
  best.max_allocated =
      std::max({turn, end_bwd, step, eval, save_bytes, generation_phase, weight_sync});
  best.generation_phase = generation_phase;
  best.weight_sync = weight_sync;
  best.weight_sync_engine = weight_sync > 0 ? sync_engine : 0;
  best.update_held = update_held;
  best.cpu = ms.cpu + act.cpu + host_reference + (critic > 0 ? ms.cpu : 0);
  best.allocated_synced = std::max({turn - turn_grads + (grads_live ? ms.grads : ms.first_grads),
                                    end_bwd, step, generation_phase, weight_sync});
  best.turn = turn;
  best.turn_cached = turn_cached;
  best.first_turn = turn - ms.lazy_states;
  best.end_of_backward = end_bwd;
  best.optimizer_step = step;
  best.evaluation = eval;
  best.checkpoint_save = save_bytes;
  best.checkpoint_host = save.host;
  return best;
}

// The breakdown of a stage's peak with allocator fragmentation in `other`; returns their sum (the
// allocator peak), each part saturated on its own.
int64_t Breakdown(const StagePeak& p, MemoryBreakdown* b) {
  b->weights = Saturate(p.weights);
  b->gradients = Saturate(p.grads);
  b->optimizer = Saturate(p.optimizer);
  b->activations = Saturate(p.activations);
  b->logits = Saturate(p.logits);
  b->other = Saturate(p.other + p.cached + memory::FragmentationBytes(p.allocated - p.generation));
  b->reference = Saturate(p.reference);
  b->critic = Saturate(p.critic);
  b->generation = Saturate(p.generation);
  int64_t sum = 0;
  for (int64_t part : {b->weights, b->gradients, b->optimizer, b->activations, b->logits, b->other,
                       b->reference, b->critic, b->generation})
    sum = part > INT64_MAX - sum ? INT64_MAX : sum + part;
  return sum;
}

int64_t PlusContext(int64_t allocator, int64_t context) {
  return allocator > INT64_MAX - context ? INT64_MAX : allocator + context;
}

// count(uses, stage, layers) of every pipeline stage of `lay`, in stage order.
template <typename Count>
auto PerStage(const memory::PreparedModel& prepared, const Layout& lay, Count count) {
  std::vector<decltype(count(prepared.all_layers, 0, 0))> out;
  out.reserve(static_cast<size_t>(lay.p));
  int first_layer = 0;
  std::vector<int> stages;
  memory::PipelineStageLayers(prepared.arch.num_layers, lay.p, &stages, lay.megatron, lay.v);
  for (const int n : stages) {
    const KindUses uses =
        lay.p == 1 ? prepared.all_layers : KindUses(prepared.arch, first_layer, n);
    out.push_back(count(uses, static_cast<int>(out.size()), n));
    first_layer += n;
  }
  return out;
}

// Trainable parameters of a PEFT method over the whole model on one GPU (no tensor or pipeline
// splitting); `all_layers` holds every layer of the model.
double PeftTrainable(const ModelArch& model, const TrainingJob& job, const LoraTargets& targets,
                     const KindUses& all_layers, int num_layers) {
  const StageParams sp = memory::CountStageParams(model, job, memory::MakeLayout(job, 1, 1, 1),
                                                  targets, all_layers, 0, num_layers);
  return sp.trainable + sp.saved_modules;
}

}  // namespace

namespace {

// The parameters full fine-tuning trains: the language model's unless frozen, the vision
// encoder's and projector's unless frozen.
int64_t FullTrainable(const ModelArch& model, const TrainingJob& job) {
  const int64_t vision = LoadsVisionTower(model, job) ? model.vision_params : 0;
  return (job.TrainsLanguageModel() ? model.Counts().total - vision : 0) +
         (job.TrainsVisionTower() ? vision : 0);
}

}  // namespace

int64_t TrainableParams(const ModelArch& model, const TrainingJob& job) {
  if (model.num_layers <= 0) return 0;
  if (job.method == Method::kFull) return FullTrainable(model, job);
  const int layers = LayerCount(model);
  return Saturate(PeftTrainable(model, job, memory::ResolveLoraTargets(model, job),
                                KindUses(model, 0, layers), layers));
}

namespace {

// LayerActivations of `layer` and, in `kept`, what it keeps without writing it.
double LayerSaved(const ModelArch& model, const TrainingJob& job, int64_t layer, double* kept,
                  PeftAdapterBytes* peft = nullptr) {
  *kept = 0;
  if (layer < 0 || layer >= static_cast<int64_t>(model.block_kind_of_layer.size())) return 0;
  const int kind = model.block_kind_of_layer[static_cast<size_t>(layer)];
  if (kind < 0 || static_cast<size_t>(kind) >= model.block_kinds.size()) return 0;
  const Layout lay = memory::MakeLayout(job);
  const Dtypes dt = memory::ChooseDtypes(job);
  const LoraTargets targets = memory::ResolveLoraTargets(model, job);
  return memory::LayerActivations(model, job, lay, dt, targets,
                                  model.block_kinds[static_cast<size_t>(kind)],
                                  job.activation_checkpointing == Checkpointing::kFull, kept, peft);
}

}  // namespace

int64_t LayerActivationBytes(const ModelArch& model, const TrainingJob& job, int64_t layer) {
  double kept = 0;
  return Saturate(LayerSaved(model, job, layer, &kept));
}

int64_t LayerWrittenActivationBytes(const ModelArch& model, const TrainingJob& job, int64_t layer,
                                    PeftAdapterBytes* peft) {
  double kept = 0;
  const double saved = LayerSaved(model, job, layer, &kept, peft);
  return Saturate(saved - kept);
}

ElementBytes ElementBytesUsed(const TrainingJob& job) {
  const Dtypes d = memory::ChooseDtypes(job);
  return {d.param, d.grad, d.master, d.state, d.act, d.base_weight};
}

Result<MemoryEstimate> EstimateMemory(const ModelArch& model, const TrainingJob& job,
                                      const GpuSpec& gpu) {
  MemoryEstimate est;
  FMTE_RETURN_IF_ERROR(memory::EstimateMemory(memory::PreparedModel(model), job, gpu, &est));
  return est;
}

memory::PreparedModel::PreparedModel(const ModelArch& m)
    : arch(m), all_layers(m, 0, LayerCount(m)), counts(m.CountsWithLayers(all_layers.counts())) {}

std::vector<StageParams> memory::CountPipelineParams(const PreparedModel& prepared,
                                                     const TrainingJob& job) {
  const Layout lay = MakeLayout(job);
  const LoraTargets targets = ResolveLoraTargets(prepared.arch, job);
  return PerStage(prepared, lay, [&](const KindUses& uses, int stage, int layers) {
    return CountStageParams(prepared.arch, job, lay, targets, uses, stage, layers);
  });
}

std::vector<StageActivations> memory::CountPipelineActivations(const PreparedModel& prepared,
                                                               const TrainingJob& job_in) {
  std::optional<TrainingJob> pass;
  const TrainingJob& job = job_in.ModelPass(&pass);  // a pair's two sequences
  const Layout lay = MakeLayout(job);
  const Dtypes dt = ChooseDtypes(job);
  const LoraTargets targets = ResolveLoraTargets(prepared.arch, job);
  return PerStage(prepared, lay, [&](const KindUses& uses, int stage, int) {
    return ComputeStageActivations(prepared.arch, job, lay, dt, targets, uses, stage);
  });
}

bool memory::SameParamCounts(const TrainingJob& a, const TrainingJob& b) {
  return a.method == b.method && a.lora_r == b.lora_r && a.virtual_tokens == b.virtual_tokens &&
         a.framework == b.framework && a.tp == b.tp && a.pp == b.pp && a.ep == b.ep &&
         a.etp == b.etp && a.lora_targets == b.lora_targets &&
         a.save_embedding == b.save_embedding && a.save_head == b.save_head &&
         a.freeze_vision == b.freeze_vision && a.freeze_language == b.freeze_language;
}

Status memory::EstimateMemory(const PreparedModel& prepared, const TrainingJob& job_in,
                              const GpuSpec& gpu, MemoryEstimate* out,
                              const std::vector<StageParams>* stage_params,
                              const std::vector<StageActivations>* stage_activations) {
  std::optional<TrainingJob> pass;
  const TrainingJob& job = job_in.ModelPass(&pass);  // a pair's two sequences
  // The block kind of every layer, counted once: the validation, the parameter counts, the
  // trainable parameters and (one pipeline stage) the stage's counts all read it.
  const ModelArch& model = prepared.arch;
  const KindUses& all_layers = prepared.all_layers;
  const int layers = LayerCount(model);
  const LoraTargets targets = ResolveLoraTargets(model, job);
  FMTE_RETURN_IF_ERROR(ValidateLayout(model, job, all_layers, targets));
  const Layout lay = MakeLayout(job);
  const Dtypes dt = ChooseDtypes(job);

  // Every field of *out is written below; its vector and string keep their buffers.
  MemoryEstimate& est = *out;
  est.params = prepared.counts;
  est.trainable_params = 0;
  memory::PipelineStageLayers(model.num_layers, lay.p, &est.layers_per_stage, lay.megatron, lay.v);
  // Counted for another pipeline split: count afresh.
  if (stage_params != nullptr && stage_params->size() != est.layers_per_stage.size())
    stage_params = nullptr;
  if (stage_activations != nullptr && stage_activations->size() != est.layers_per_stage.size())
    stage_activations = nullptr;

  StagePeak heaviest;
  // Where gradients on frozen weights are a reading the job may or does take
  // (TrainingJob::MayCoverFrozenWeights, GradientsCoverFrozenWeights), the other reading too: the
  // bound covers the heavier of the two, the low end rests on the lighter.
  std::optional<TrainingJob> other_reading;
  if (job.MayCoverFrozenWeights() || job.GradientsCoverFrozenWeights()) {
    other_reading = job;
    other_reading->fsdp_frozen_grads = !job.GradientsCoverFrozenWeights();
  }
  // The same for the last step's 4-bit inputs (TrainingJob::MayKeepLastStepQuantInputs): which
  // bitsandbytes a litgpt QLoRA job runs is not something the job says.
  if (job.MayKeepLastStepQuantInputs()) {
    if (!other_reading) other_reading = job;
    other_reading->bnb_ctx_inputs = !job.bnb_ctx_inputs;
  }
  // And for a QLoRA job's routed experts on transformers (MayKeepExpertsUnquantized): whether
  // its stack quantises them (transformers 4.x, axolotl's quantize_moe_experts, unsloth) is not
  // something the job says.
  if (MayKeepExpertsUnquantized(model, job)) {
    if (!other_reading) other_reading = job;
    other_reading->quantize_experts = !job.quantize_experts;
  }
  StagePeak other_heaviest;
  int first_layer = 0;
  est.ranks.resize(est.layers_per_stage.size());
  const int64_t context = Saturate(memory::CudaContextBytes(job, lay));
  // A colocated inference engine's share: vLLM V1 takes gpu_memory_utilization of the GPU's
  // total memory (its weights, activations, graphs and KV cache; it refuses to start with less
  // free, vllm/v1/worker/gpu_worker.py).
  const double engine = job.generation_memory * static_cast<double>(gpu.memory_bytes);
  for (size_t st = 0; st < est.layers_per_stage.size(); ++st) {
    const int n = est.layers_per_stage[st];
    const KindUses uses = lay.p == 1 ? all_layers : KindUses(model, first_layer, n);
    const StageParams sp =
        stage_params != nullptr
            ? (*stage_params)[st]
            : memory::CountStageParams(model, job, lay, targets, uses, static_cast<int>(st), n);
    // Without tensor and pipeline splitting the one stage's count is TrainableParams' own.
    if (lay.t == 1 && lay.p == 1) est.trainable_params = Saturate(sp.trainable + sp.saved_modules);
    StagePeak peak =
        EstimateStage(model, job, lay, dt, targets, uses, sp, static_cast<int>(st),
                      stage_activations != nullptr ? &(*stage_activations)[st] : nullptr, engine);
    if (other_reading) {
      // Quantised experts are other parameters (memory_params.cc Quantizable).
      const StageParams other_sp =
          other_reading->quantize_experts != job.quantize_experts
              ? memory::CountStageParams(model, *other_reading, lay, targets, uses,
                                         static_cast<int>(st), n)
              : sp;
      const StagePeak other = EstimateStage(
          model, *other_reading, lay, dt, targets, uses, other_sp, static_cast<int>(st),
          stage_activations != nullptr ? &(*stage_activations)[st] : nullptr, engine);
      if (st == 0 || HeldWithFragmentation(other) > HeldWithFragmentation(other_heaviest))
        other_heaviest = other;
    }
    first_layer += n;
    MemoryRank& rank = est.ranks[st];
    rank.stage = static_cast<int>(st);
    rank.layers = n;
    rank.embedding = st == 0;
    rank.head = st + 1 == est.layers_per_stage.size();
    rank.per_gpu_bytes = PlusContext(Breakdown(peak, &rank.breakdown), context);
    rank.peak_phase = peak.phase;
    if (st == 0 || HeldWithFragmentation(peak) > HeldWithFragmentation(heaviest)) {
      heaviest = peak;
      est.heaviest_stage = static_cast<int>(st);
    }
  }
  // TrainableParams(model, job), from what is already at hand.
  if (job.method == Method::kFull) {
    est.trainable_params = FullTrainable(model, job);
  } else if (lay.t != 1 || lay.p != 1) {
    est.trainable_params = Saturate(PeftTrainable(model, job, targets, all_layers, layers));
  }

  est.cuda_context_bytes = context;
  est.allocator_peak_bytes = Breakdown(heaviest, &est.breakdown);
  est.allocated_peak_bytes = std::min(est.allocator_peak_bytes, Saturate(heaviest.max_allocated));
  est.per_gpu_bytes = PlusContext(est.allocator_peak_bytes, est.cuda_context_bytes);
  est.gpu_capacity_bytes = gpu.memory_bytes;
  est.fits = est.per_gpu_bytes <= gpu.memory_bytes;
  const memory::BoundFactors bf = memory::MeasuredBoundFactors();
  // A colocated engine's share is what its setting says, not an estimate: the factors widen the
  // trainer's part only; with a sleeping engine the update's phases, which do not hold it, are
  // bounded too.
  const auto bound_of = [&](double per_gpu, const StagePeak& p) {
    double b = (per_gpu - p.generation) * bf.high + p.generation;
    if (p.generation_phase > 0)
      b = std::max(b, (p.update_held + static_cast<double>(context)) * bf.high);
    return b;
  };
  double bound = bound_of(static_cast<double>(est.per_gpu_bytes), heaviest);
  double low_base =
      std::min(static_cast<double>(est.allocated_peak_bytes), heaviest.allocated_synced);
  if (other_reading) {
    bound = std::max(bound, bound_of(HeldWithFragmentation(other_heaviest) +
                                         static_cast<double>(est.cuda_context_bytes),
                                     other_heaviest));
    low_base = std::min(low_base, other_heaviest.allocated_synced);
  }
  est.bound_bytes = Saturate(bound);
  est.low_bytes = Saturate((low_base - heaviest.generation) * bf.low + heaviest.generation);
  est.cpu_bytes_per_node =
      Saturate(heaviest.cpu * static_cast<double>(std::min(job.gpus, lay.gpus_per_node)));
  est.peak_phase = heaviest.phase;
  // The phases of the heaviest stage, each with fragmentation and the context as per_gpu_bytes.
  // The first step's forward-backward comes before its optimizer step allocates the states, so it
  // never sets the peak; sources that report memory after the first iteration (Megatron's
  // report_memory) measured max(it, optimizer-step).
  // A job that evaluates has its evaluation forward, one that saves a full state dict its
  // checkpoint save (with the host memory of rank 0's node), after the step's phases.
  // An online job's weight sync and generation last.
  constexpr size_t kPhases = 8;
  const double phase_bytes[kPhases] = {heaviest.turn,           heaviest.end_of_backward,
                                       heaviest.optimizer_step, heaviest.first_turn,
                                       heaviest.evaluation,     heaviest.checkpoint_save,
                                       heaviest.weight_sync,    heaviest.generation_phase};
  const char* const phase_names[kPhases] = {
      "forward-backward", "end-of-backward", "optimizer-step", "first-forward-backward",
      "evaluation",       "checkpoint-save", "weight-sync",    "generation"};
  const bool present[kPhases] = {true,
                                 true,
                                 true,
                                 true,
                                 job.eval_batch > 0,
                                 job.SavesFullStateDict(),
                                 heaviest.weight_sync > 0,
                                 heaviest.generation_phase > 0};
  // The blocks the allocator keeps beyond what a phase allocates (the forward-backward turns').
  const double phase_cached[kPhases] = {
      heaviest.turn_cached, 0, 0, heaviest.turn_cached, 0, 0, 0, 0};
  // Host memory of rank 0's node (the checkpoint save's gathered state).
  const double phase_host[kPhases] = {0, 0, 0, 0, 0, heaviest.checkpoint_host, 0, 0};
  // The engine's share in each phase, which the allocator does not fragment.
  const double held = job.generation_sleeps ? 0 : engine;
  const double phase_engine[kPhases] = {
      held, held, held, held, held, held, heaviest.weight_sync_engine, engine};
  est.phases.clear();
  for (size_t i = 0; i < kPhases; ++i) {
    if (!present[i]) continue;
    MemoryPhase& phase = est.phases.emplace_back();
    phase.name = phase_names[i];
    phase.allocated_bytes = Saturate(phase_bytes[i]);
    phase.per_gpu_bytes =
        PlusContext(Saturate(phase_bytes[i] + phase_cached[i] +
                             memory::FragmentationBytes(phase_bytes[i] - phase_engine[i])),
                    est.cuda_context_bytes);
    phase.host_bytes = Saturate(phase_host[i]);
  }
  return Status::Ok();
}

}  // namespace fmte
