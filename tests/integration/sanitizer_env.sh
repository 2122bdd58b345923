# Sourced by the integration scripts. A sanitized build (FMTE_SANITIZER_PRELOAD, set by
# tests/integration/CMakeLists.txt): the clients that load the SPANK plugin need the ASan runtime
# loaded first. PRELOAD is the same for a client started by another program (timeout srun ...).
PRELOAD=()
if [ -n "${FMTE_SANITIZER_PRELOAD:-}" ]; then
  sbatch() { LD_PRELOAD=$FMTE_SANITIZER_PRELOAD command sbatch "$@"; }
  srun() { LD_PRELOAD=$FMTE_SANITIZER_PRELOAD command srun "$@"; }
  PRELOAD=(env "LD_PRELOAD=$FMTE_SANITIZER_PRELOAD")
fi
