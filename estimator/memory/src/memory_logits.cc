// The logits and the loss on the last pipeline stage, at their peak (the loss backward).
// With 128k-entry vocabularies this is often the largest single activation
// (docs/formulas.md §4, §4b).
#include <algorithm>
#include <cmath>

#include "memory_internal.h"

namespace fmte::memory {
namespace {

// Megatron pads the vocabulary to a multiple of 128 * t (make-vocab-size-divisible-by) and splits
// the logits over t: the entries one rank holds.
double MegatronLocalVocab(const ModelArch& m, const Layout& lay) {
  const double mult = 128.0 * static_cast<double>(lay.t);
  return std::ceil(static_cast<double>(m.vocab_size) / mult) * mult / static_cast<double>(lay.t);
}

// A final logit softcapping in a transformers model's forward (Gemma-2: tanh(logits / cap) * cap,
// modeling_gemma2.py) writes one more 16-bit copy of the logits per token per entry.
double SoftcapBytes(const ModelArch& m, const TrainingJob& j, double ab) {
  const Framework fw = j.framework;
  const bool hf_model =
      fw == Framework::kHf || fw == Framework::kDeepspeed || fw == Framework::kFsdp;
  return hf_model && m.final_logit_softcapping > 0 ? ab : 0;
}

// The logits and the loss alone (LogitsBytes).
double LossBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay, const Dtypes& dt,
                 const StageParams& last_stage) {
  const double s = static_cast<double>(j.LocalSeqLen()) +
                   (j.method == Method::kPromptTuning ? static_cast<double>(j.virtual_tokens) : 0);
  const double tokens = s * static_cast<double>(j.micro_batch);
  const double h = static_cast<double>(m.hidden_size);
  const double ab = dt.act;
  const double vocab = static_cast<double>(m.vocab_size);
  const Framework fw = j.framework;

  if (fw == Framework::kMegatron) {
    // vocab_parallel_cross_entropy works on an fp32 copy of the logits in place and saves it as
    // the softmax, which backward turns into the gradient in place; the 16-bit gradient for the
    // output layer follows (core/tensor_parallel/cross_entropy.py).
    return tokens * MegatronLocalVocab(m, lay) * (4 + ab);
  }
  // Tensor parallel outside Megatron (DTensor plans) gathers the logits: the full vocabulary.
  if (fw == Framework::kTorchtune) {
    // torchtune recipes use CEWithChunkedOutputLoss (8 chunks): the model returns 16-bit logits in
    // chunks, each chunk is upcast and its log-softmax output (fp32) is saved; backward holds one
    // chunk's fp32 gradients at a time (torchtune/modules/loss/ce_chunked_output_loss.py).
    constexpr double kChunks = 8;
    return tokens * vocab * (ab + 4 + 8 / kChunks);
  }
  if (fw == Framework::kLitgpt) {
    // Every litgpt training loop computes its loss with chunked_cross_entropy (litgpt/utils.py;
    // finetune/lora.py, adapter.py, adapter_v2.py after model(input_ids, lm_head_chunk_size=128),
    // full.py and pretrain.py on the whole logits, from 2023 to today): the 16-bit logits stay
    // alive until backward and each 128-token chunk's cross_entropy saves its log_softmax output
    // (16-bit; fp32 under autocast, where log_softmax autocasts to fp32). Backward turns one chunk
    // at a time into its gradients. So litgpt needs no --chunked-loss to be read this way.
    const double saved = dt.autocast ? 4 : ab;
    const double chunk = std::min(tokens, kLitgptHeadChunk * static_cast<double>(j.micro_batch));
    return tokens * vocab * (ab + saved) + chunk * vocab * (ab + saved);
  }
  if ((j.objective == Objective::kGrpo || j.objective == Objective::kRloo) &&
      j.completion_len > 0 &&
      (fw == Framework::kHf || fw == Framework::kDeepspeed || fw == Framework::kFsdp)) {
    // TRL's and ms-swift's GRPO/RLOO (_get_per_token_logps_and_entropies): the model returns the
    // logits of the completion only (logits_to_keep + 1), divided by the temperature in place, and
    // selective_log_softmax takes log_softmax row by row (one sequence at a time) and gathers the
    // completion's tokens: each row's log_softmax output is saved (fp32 under autocast, which
    // log_softmax runs in; else the model's dtype). Backward turns one row at a time into fp32
    // gradients (the gather's scatter and log_softmax's) and accumulates the logits' 16-bit
    // gradient. No full-sequence fp32 loss as in supervised training.
    const double rows = std::min(static_cast<double>(j.completion_len), s);
    const double saved = dt.autocast ? 4 : ab;
    return rows * static_cast<double>(j.micro_batch) * vocab * (ab + saved) + rows * vocab * 8 +
           SoftcapBytes(m, j, ab) * rows * static_cast<double>(j.micro_batch) * vocab;
  }
  if (j.chunked_loss) {
    // Liger's fused linear cross-entropy (transformers use_liger_kernel): logits exist one chunk of
    // about BT*h/V tokens at a time; it keeps the input gradient and an fp32 head-weight gradient
    // (liger_kernel/ops/fused_linear_cross_entropy.py).
    const double head_grad = last_stage.trainable_linear > 0 && j.TrainsLanguageModel()
                                 ? vocab * h * 4 / static_cast<double>(lay.t)
                                 : 0;
    return tokens * h * (2 * ab + 8) + head_grad;
  }
  // transformers ForCausalLMLoss (loss/loss_utils.py; docs/formulas.md §4b): the loss upcasts the
  // 16-bit logits (.float()) and cross_entropy's log_softmax saves only its fp32 output; the
  // Trainer drops the model outputs before backward (training_step: compute_loss, then
  // backward), where nll_loss_backward and _log_softmax_backward_data each allocate an fp32
  // gradient beside the saved output: 12 bytes per token per vocabulary entry at the peak. The
  // loss forward holds 16-bit logits + fp32 upcast + log_softmax output, 10 (4.46-4.48 with a
  // batch above one: a shifted fp32 copy more, 14). A final logit softcapping in the model's
  // forward (Gemma-2: tanh(logits / cap) * cap, modeling_gemma2.py) keeps tanh's 16-bit output
  // for backward: measured on an H100, Gemma-2-9B's peak holds it beside the three fp32 copies
  // (scripts/device/peak_snapshot.py).
  return tokens * vocab * (std::max(12.0, ab + 8) + SoftcapBytes(m, j, ab));
}

}  // namespace

double LogitsBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay, const Dtypes& dt,
                   const StageParams& last_stage) {
  // A LoRA adapter on the head (PEFT's Linear, litgpt's LoRALinear per 128-position chunk) keeps
  // its input and lora_A's output until the head's backward, which comes after the loss's. Its
  // products are transient: the forward's base output, lora_B's output, its scaled copy and their
  // sum (3 logit-sized tensors at once, 6 bytes per entry in 16 bits) and the backward's scaled
  // gradient stay below the loss peak of the frameworks whose heads take adapters (transformers'
  // 12 bytes per entry; litgpt's and torchtune's per chunk, beside logits kept whole; not
  // always TRL's GRPO/RLOO completion logits, 4-6 bytes per entry: an adapted head there is rare).
  const double tokens = static_cast<double>(j.LocalSeqLen()) * static_cast<double>(j.micro_batch);
  const double h = static_cast<double>(m.hidden_size);
  const double adapter = last_stage.head_adapter > 0 ? tokens * AdapterSavedBytes(j, dt, h) : 0;
  // A trained copy of the head (PEFT modules_to_save): its input, and its weight's autocast copy.
  const double copy =
      last_stage.saved_head > 0 ? HeadCopySavedBytes(j, dt, tokens, h, last_stage.saved_head) : 0;
  return LossBytes(m, j, lay, dt, last_stage) + adapter + copy;
}

double EvalLogitsBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                       const Dtypes& dt) {
  // The evaluation loss of j.eval_batch sequences under no_grad: nothing is kept for a backward,
  // so each framework's loss forward alone.
  const double tokens = static_cast<double>(j.LocalSeqLen()) * static_cast<double>(j.eval_batch);
  const double ab = dt.act;
  const double vocab = static_cast<double>(m.vocab_size);
  const Framework fw = j.framework;
  if (fw == Framework::kMegatron) {
    // evaluate() runs the same vocab_parallel_cross_entropy, forward only: the split 16-bit
    // logits and their fp32 copy (core/tensor_parallel/cross_entropy.py).
    return tokens * MegatronLocalVocab(m, lay) * (4 + ab);
  }
  if (fw == Framework::kTorchtune) {
    // CEWithChunkedOutputLoss: the 16-bit logits in 8 chunks, one chunk upcast and its
    // log-softmax at a time.
    return tokens * vocab * (ab + 8.0 / 8);
  }
  if (fw == Framework::kLitgpt) {
    // litgpt's validate(): model(input_ids) returns the whole logits, chunked_cross_entropy(
    // logits[..., :-1, :], ..., chunk_size=0) reshapes the shifted view (a copy) and
    // cross_entropy's log_softmax writes its output (fp32 under autocast).
    return tokens * vocab * (2 * ab + (dt.autocast ? 4 : ab));
  }
  // The HF Trainer's prediction_step: the model's 16-bit logits, transformers' ForCausalLMLoss
  // upcast (.float()) and log_softmax's fp32 output (10 bytes per token per vocabulary entry at
  // ab = 2; transformers 4.46-4.48 shifted a further fp32 copy with a batch above one, see
  // LogitsBytes above), Gemma-2's softcapped copy. With --chunked-loss the same: Liger's patched
  // forward skips the logits only in training (skip_logits = self.training and labels is not None,
  // liger_kernel/transformers/ model/llama.py lce_forward); Cut Cross Entropy's patch also computes
  // the evaluation loss without logits (PatchOptions.use_lce, train_only false by default), so for
  // CCE jobs this phase is an upper estimate.
  return tokens * vocab * (ab + 8 + SoftcapBytes(m, j, ab));
}

}  // namespace fmte::memory
