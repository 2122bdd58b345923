// Step time of one training job: an analytic model (FLOPs from the real linear shapes, a learned
// GEMM efficiency, memory-bound traffic, collectives on intra/inter-node links, pipeline bubble,
// CPU offload, optimizer step) times a learned correction, with a breakdown and the per-stage
// schedule the timeline draws.
//
// The efficiency constants are not written in the code: TimeModel loads them from
// regressors/vtrain/efficiency.json, written by learn/src/vtrain_fit.cc from measured step times
// (vTrain's published runs, copied in tests/data/vtrain) and validated on held-out
// configurations (docs/time.md). Formulas and sources: time.cc, docs/formulas.md §5.
// Thread-safety: TimeModel is immutable after loading; EstimateStepTime is a pure function.
#ifndef FMTE_TIME_H_
#define FMTE_TIME_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fmte/cluster.h"
#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/model.h"
#include "fmte/status.h"

namespace fmte {

// How a matrix product's efficiency falls with its shape, learned from measured operator times
// (learn/gemm_fit.h: the AI4CI estimator's linear1..4 samples, tests/data/gemm): a GEMM of m x k
// by k x n reaches
//   peak_fraction / (1 + m_half/m + k_half/k + n_half/n)
// of dense peak. The harmonic form is the roofline's: a GEMM's arithmetic intensity is
// 1 / (1/m + 1/k + 1/n) (times a constant), so each small dimension costs efficiency through memory
// traffic and tile padding; large products saturate at peak_fraction. peak_fraction == 0: no curve.
struct GemmCurve {
  double peak_fraction = 0;  // fraction of dense peak that large products reach (this pass)
  double m_half = 0, k_half = 0, n_half = 0;  // the dimension at which it alone halves efficiency
  bool valid() const { return peak_fraction > 0; }
  // Shape factor in (0, 1]: the efficiency of this shape relative to a large product.
  double Factor(double m, double k, double n) const {
    return 1.0 / (1.0 + m_half / std::max(m, 1.0) + k_half / std::max(k, 1.0) +
                  n_half / std::max(n, 1.0));
  }
};

// Learned constants of the analytic model for one GPU family (and the frameworks measured on it).
struct TimeEfficiency {
  std::string gpu;               // GPU catalog name prefix it was learned on ("A100")
  double gemm_efficiency = 0.6;  // achieved fraction of dense peak on large matrix products
  // With curves, a linear's forward runs at gemm_efficiency x gemm_fwd.Factor(m, k, n) of peak and
  // its backward (input + weight gradients) at gemm_efficiency x (gemm_bwd.peak_fraction /
  // gemm_fwd.peak_fraction) x gemm_bwd.Factor(m, k, n); without them every product runs at
  // gemm_efficiency (the constant learned from one width only).
  GemmCurve gemm_fwd, gemm_bwd;
  std::string source;            // where the constants come from (efficiency.json "source")
  double layer_overhead_s = 0;   // per transformer layer, per pass (fwd, bwd, recompute), per
                                 // micro-batch: kernel launches and small kernels
  double memory_traffic = 1;     // memory-bound bytes per pass = this x the layer's activation
                                 // bytes (Korthikanti Table 2), read at HBM bandwidth
  double comm_efficiency = 0.7;  // fraction of nominal link bandwidth a collective reaches
  double comm_latency_s = 0;     // fixed cost per collective call
  double step_overhead_s = 0;    // fixed cost per optimizer step (launch, data loader, logging)
  // Custom figures (fmte-advise estimate --overrides, section "time"), never learned: when > 0,
  // one transformer layer's forward (backward, recomputation included) compute on one rank per
  // micro-batch takes this long, in place of the modelled time of each pipeline stage (its
  // embedding and head included).
  double layer_fwd_s = 0, layer_bwd_s = 0;
};

// The learned correction on top of the analytic model (a boosted-tree model on features that exist
// for any job). Implemented by an adapter over the native tree evaluator; null = no correction.
class StepTimeCorrection {
 public:
  virtual ~StepTimeCorrection() = default;
  // log(measured / analytic) predicted from StepTimeFeatures().
  virtual double PredictLogRatio(const std::vector<float>& features) const = 0;
};

// The range of one correction feature over the correction's training rows.
struct FeatureRange {
  size_t index = 0;  // into StepTimeFeatureNames()
  double min = 0, max = 0;
};

// Weight in [0, 1] of the learned correction for a job's features: 1 inside the training range of
// every feature in `domain`, falling linearly to 0 at one range width outside it (trees repeat
// their edge leaf unchanged however far a job lies outside the measured ones, e.g. a 175B model
// against runs of hidden size 1024: there the analytic model is used alone). Empty domain: 1.
double CorrectionWeight(const std::vector<float>& features,
                        const std::vector<FeatureRange>& domain);

// The features whose training range limits the correction (size of the work and of the matrices).
const std::vector<std::string>& CorrectionDomainFeatures();

class TimeModel {
 public:
  TimeModel() = default;
  // Loads efficiency.json (required) and correction.json (optional) from `dir`.
  static Result<TimeModel> LoadDir(const std::string& dir);
  static std::string DefaultDir();  // FMTE_REGRESSORS_DIR/vtrain, or $FMTE_REGRESSORS_DIR/vtrain

  // The constants for `gpu`: the entry whose name is a prefix of the GPU's name, else the first
  // entry (reported in TimeEstimate::efficiency_source).
  const TimeEfficiency& For(const GpuSpec& gpu, bool* exact = nullptr) const;
  // The same entry, to change (custom figures); without entries, a default one is added first.
  TimeEfficiency& MutableFor(const GpuSpec& gpu);

  // Multiplicative factor such that measured <= predicted x factor for a fraction `quantile` of the
  // held-out residuals (grouped cross-validation). 1 when no residuals were shipped.
  double UpperFactor(double quantile) const;

  const StepTimeCorrection* correction() const { return correction_.get(); }
  double correction_clamp() const { return correction_clamp_; }

  void AddEfficiency(TimeEfficiency e) { efficiencies_.push_back(std::move(e)); }
  void SetResiduals(std::vector<double> log_residuals);
  void SetCorrection(std::shared_ptr<const StepTimeCorrection> c, double clamp_log = 0.4) {
    correction_ = std::move(c);
    correction_clamp_ = clamp_log;
  }
  const std::vector<TimeEfficiency>& efficiencies() const { return efficiencies_; }
  void SetCorrectionDomain(std::vector<FeatureRange> domain) {
    correction_domain_ = std::move(domain);
  }
  const std::vector<FeatureRange>& correction_domain() const { return correction_domain_; }
  // Whether predictions take the measured median of their group where two sources agree on it
  // (TimeEstimate::measured_factor; on by default; off with the learned correction's override).
  bool measured_groups() const { return measured_groups_; }
  void SetMeasuredGroups(bool on) { measured_groups_ = on; }

 private:
  std::vector<TimeEfficiency> efficiencies_;
  std::vector<double> log_residuals_;  // sorted log(measured / predicted), held-out
  std::shared_ptr<const StepTimeCorrection> correction_;
  double correction_clamp_ =
      0.4;  // |log ratio| the correction may apply (trees do not extrapolate)
  std::vector<FeatureRange> correction_domain_;  // where the correction applies fully
  bool measured_groups_ = true;
};

// Seconds per optimizer step, by kind. The JSON names are the contract:
// time.breakdown.{compute,communication,bubble,optimizer,offload,overhead}.
struct TimeBreakdown {
  double compute_s = 0;        // matrix products, memory-bound kernels, kernel overheads
  double communication_s = 0;  // exposed TP / DP / FSDP collectives and pipeline p2p
  double bubble_s = 0;         // pipeline fill and drain
  double optimizer_s = 0;      // optimizer step on the GPU
  double offload_s = 0;        // PCIe transfers and CPU optimizer step (exposed)
  double overhead_s = 0;       // fixed per step
  double Total() const {
    return compute_s + communication_s + bubble_s + optimizer_s + offload_s + overhead_s;
  }
};

// One pipeline stage's work per micro-batch (what the timeline draws).
struct StageTime {
  int64_t layers = 0;
  double fwd_s = 0;       // forward compute of one micro-batch
  double bwd_s = 0;       // backward (with recomputation) compute of one micro-batch
  double fwd_comm_s = 0;  // TP collectives + p2p in the forward
  double bwd_comm_s = 0;  // TP collectives + p2p in the backward
  double Total() const { return fwd_s + bwd_s + fwd_comm_s + bwd_comm_s; }
};

struct TimeEstimate {
  double step_time_s = 0;           // corrected
  double analytic_step_time_s = 0;  // before the learned correction
  double correction_factor = 1;     // step_time_s / analytic_step_time_s
  double correction_weight = 1;     // CorrectionWeight of this job (0: outside the measured range)
  // Measured / predicted of the job's group (GPU generation x framework family x dense or mixture
  // of experts) where two sources agree on it (time_groups.cc), in step_time_s; 1 elsewhere.
  double measured_factor = 1;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;                   // model FLOPs / (step time x GPUs x dense peak)
  double model_flops_per_step = 0;  // Megatron convention: fwd + bwd, no recompute, full attention
  double hardware_flops_per_step = 0;  // what runs: recompute, causal skipping, frozen weights
  double peak_flops_per_gpu = 0;
  int64_t global_batch = 0;   // sequences per step
  int64_t micro_batches = 0;  // m per pipeline (per data-parallel rank)
  int64_t tp = 1, pp = 1, dp = 1, vpp = 1;
  TimeBreakdown breakdown;        // sums to step_time_s
  std::vector<StageTime> stages;  // size pp, per micro-batch, analytic (uncorrected)
  double dp_comm_s = 0;           // exposed data-parallel / sharding collectives per step
  std::vector<float> features;    // StepTimeFeatures, for the correction and for retraining
  std::string efficiency_source;  // which learned entry was used
  std::string gpu;                // the GPU's catalog name
  bool moe = false;  // a mixture of experts: its measured group bounds the time (time_groups.cc)
};

// Names of the correction's features, in order (the manifest lists them).
const std::vector<std::string>& StepTimeFeatureNames();

// REQUIRES: ValidateJob(job).ok(). The layout must fit the architecture (tp divides the heads,
// pp <= layers). With a global batch, it must be a multiple of micro_batch x dp.
Result<TimeEstimate> EstimateStepTime(const ModelArch& model, const TrainingJob& job,
                                      const GpuSpec& gpu, const ClusterSpec& cluster,
                                      const TimeModel& time_model);
// The same into a default-constructed `estimate` (written only on success), for a caller that
// keeps the estimate in a larger one (a JobEstimate's time.step) instead of moving it there.
Status EstimateStepTimeInto(const ModelArch& model, const TrainingJob& job, const GpuSpec& gpu,
                            const ClusterSpec& cluster, const TimeModel& time_model,
                            TimeEstimate* estimate);

// The analytic part alone with explicit constants (what the fit in learn/ varies).
Result<TimeEstimate> EstimateStepTimeAnalytic(const ModelArch& model, const TrainingJob& job,
                                              const GpuSpec& gpu, const ClusterSpec& cluster,
                                              const TimeEfficiency& eff);

// Megatron's published per-iteration FLOPs for a GPT model (Narayanan et al. 2021, eq. 3;
// docs/formulas.md §5): 72*B*s*L*h^2*(1 + s/(6h) + V/(12*L*h)), without recomputation.
double MegatronGptFlops(double global_batch, double seq_len, double layers, double hidden,
                        double vocab);

}  // namespace fmte

#endif  // FMTE_TIME_H_
