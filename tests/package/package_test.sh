#!/usr/bin/env bash
# Builds the Debian package (scripts/package.sh), installs it into a scratch root (dpkg-deb -x: no
# change to this machine), and checks what a sysadmin gets:
#   - the package's name, its exact Slurm pin (the version of the headers it was built against) and
#     its conffiles;
#   - every file in its place: tools, both plugins in Slurm's plugin directory, catalogs, regressors,
#     man pages that render;
#   - the installed fmte-advise, run from the scratch root, answers as the build tree's does, and
#     looks for its catalogs in the installed path (/etc/fmte) by default;
#   - the installed plugins load into a real slurmctld and sbatch (scripts/cluster.sh with
#     FMTE_PLUGIN_DIR in the scratch root and the installed fmte.conf) and decide: a 70B full
#     fine-tune on one GPU is refused by fmte, a LoRA job accepted with its record.
#   tests/package/package_test.sh REPO BUILD_DIR      (the package is built in REPO/build-deb)
set -uo pipefail
REPO=${1:?usage: package_test.sh REPO BUILD_DIR}
BUILD=${2:?usage: package_test.sh REPO BUILD_DIR}
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what: $*"; fi; }
contains() { [[ "$1" == *"$2"* ]] || { echo "  expected '$2' in: ${1:0:600}" >&2; return 1; }; }

SCRATCH=$(mktemp -d)
chmod 755 "$SCRATCH"  # munged wants its socket's folders searchable by all
LAB=$SCRATCH/lab
cleanup() {
  if [ -f "$LAB/etc/slurm.conf" ]; then
    FMTE_LAB=$LAB timeout 60 bash "$REPO/scripts/cluster.sh" down >/dev/null 2>&1 || true
  fi
  rm -rf "$SCRATCH"
}
trap cleanup EXIT

# 1. Build (in REPO/build-deb: the same depth as build/, so ccache's relative paths hit).
DEB=$("$REPO/scripts/package.sh" "build-deb" 2>"$SCRATCH/package.log" | tail -1)
if [ ! -f "$DEB" ]; then
  tail -30 "$SCRATCH/package.log" >&2
  echo "FAIL: scripts/package.sh made no .deb" >&2
  exit 1
fi
ARCH=$(dpkg --print-architecture)
VERSION=$(sed -n 's/^project(fmte VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
check "file name fmte_<version>_<arch>.deb" test "$(basename "$DEB")" = "fmte_${VERSION}_${ARCH}.deb"
SLURM_VERSION=$(dpkg-query -W -f='${Version}' libslurm-dev)
depends=$(dpkg-deb -f "$DEB" Depends)
check "pins the Slurm it was built against ($SLURM_VERSION)" \
  contains "$depends" "slurm-wlm-basic-plugins (= $SLURM_VERSION)"
check "depends on the shared libraries it links" contains "$depends" "libxgboost0"
mkdir -p "$SCRATCH/control"
dpkg-deb -e "$DEB" "$SCRATCH/control"
check "fmte.conf is a conffile" grep -qx /etc/slurm/fmte.conf "$SCRATCH/control/conffiles"
check "the GPU catalog is a conffile" grep -qx /etc/fmte/gpus.csv "$SCRATCH/control/conffiles"

# 2. Installed into a scratch root.
ROOT=$SCRATCH/root
dpkg-deb -x "$DEB" "$ROOT"
PLUGINS=$ROOT/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm
for f in usr/bin/fmte-advise usr/bin/fmte-retrain usr/bin/fmte-sample etc/fmte/slurm/fmte-sample.sbatch \
  etc/slurm/fmte.conf etc/fmte/gpus.csv \
  etc/fmte/launchers.json etc/fmte/models/aliases.tsv usr/share/man/man1/fmte-advise.1.gz \
  usr/share/man/man1/fmte-retrain.1.gz usr/share/man/man5/fmte.conf.5.gz; do
  check "installs /$f" test -s "$ROOT/$f"
done
check "job_submit plugin in Slurm's plugin directory" test -s "$PLUGINS/job_submit_fmte.so"
check "SPANK plugin in Slurm's plugin directory" test -s "$PLUGINS/spank_fmte.so"
check "regressors installed" test -d "$ROOT/usr/share/fmte/regressors/vtrain"
for page in man1/fmte-advise.1 man1/fmte-retrain.1 man5/fmte.conf.5; do
  rendered=$(man -l "$ROOT/usr/share/man/$page.gz" 2>"$SCRATCH/man.err" | col -b)
  check "man $page renders without warnings" test ! -s "$SCRATCH/man.err"
  check "man $page has a NAME section" contains "$rendered" "NAME"
done

# 3. The installed tool, pointed at the scratch root's catalogs, answers as the build tree's.
export FMTE_ETC_DIR=$ROOT/etc/fmte FMTE_REGRESSORS_DIR=$ROOT/usr/share/fmte/regressors
installed=$("$ROOT/usr/bin/fmte-advise" estimate --model meta-llama/Llama-3.1-8B --method lora \
  --gpus 1 --micro-batch 2 --seq-len 2048 --tokens 1e8 --json 2>&1)
check "installed fmte-advise runs" contains "$installed" '"per_gpu_bytes"'
built=$(FMTE_ETC_DIR=$REPO/etc FMTE_REGRESSORS_DIR=$REPO/regressors "$BUILD/tools/fmte-advise" \
  estimate --model meta-llama/Llama-3.1-8B --method lora --gpus 1 --micro-batch 2 --seq-len 2048 \
  --tokens 1e8 --json 2>&1)
check "installed and built fmte-advise give the same estimate" test "$installed" = "$built"
check "installed fmte-advise --version" contains "$("$ROOT/usr/bin/fmte-advise" --version)" "$VERSION"
unset FMTE_ETC_DIR FMTE_REGRESSORS_DIR
if [ ! -e /etc/fmte ]; then
  err=$("$ROOT/usr/bin/fmte-advise" models 2>&1)
  check "the installed tool reads /etc/fmte by default" contains "$err" "/etc/fmte/"
fi

# 4. The installed plugins in a real slurmctld, with the installed fmte.conf (catalogs and
#    regressors pointed at the scratch root, as a site would with CatalogDir/RegressorsDir).
{
  cat "$ROOT/etc/slurm/fmte.conf"
  echo "CatalogDir=$ROOT/etc/fmte"
  echo "RegressorsDir=$ROOT/usr/share/fmte/regressors"
} >"$SCRATCH/fmte.conf"
export FMTE_LAB=$LAB FMTE_PLUGIN_DIR=$PLUGINS FMTE_CONF=$SCRATCH/fmte.conf FMTE_PORT_BASE=17217
timeout 100 bash "$REPO/scripts/cluster.sh" up >"$SCRATCH/cluster.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "cluster.sh up: exit code $rc" >&2
  tail -30 "$SCRATCH/cluster.log" >&2
  tail -20 "$LAB"/log/slurmctld.log >&2 2>/dev/null
  fail "cluster with the installed plugins did not start"
  exit 1
fi
eval "$(bash "$REPO/scripts/cluster.sh" env)"
doctor=$("$ROOT/usr/bin/fmte-advise" doctor --slurm-conf "$SLURM_CONF" 2>&1)
check "the installed doctor finds the site consistent" contains "$doctor" "doctor: all well"
mkdir -p "$SCRATCH/jobs"
cd "$SCRATCH/jobs" || exit 1
# Full fine-tuning of 70B needs >= 16 bytes per parameter (ZeRO paper, §3.1): 1.1 TB, never one
# 80 GB GPU. LoRA of 8B at 1k tokens fits one with room to spare.
printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#FMTE model=meta-llama/Llama-3.1-70B method=full\nsleep 1\n' >big.sbatch
printf '#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 5\n#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024\nsleep 1\n' >lora.sbatch
out=$(sbatch --parsable -o /dev/null -e /dev/null big.sbatch 2>&1)
check "installed job_submit/fmte refuses the 70B job on one GPU" contains "$out" "sbatch: error: fmte:"
job=$(sbatch --parsable -o /dev/null -e /dev/null lora.sbatch 2>"$SCRATCH/lora.err")
if [ -n "$job" ]; then
  comment=$(scontrol show job -o "$job" | tr ' ' '\n' | sed -n 's/^AdminComment=//p')
  check "installed plugin records its prediction" contains "$comment" "fmte:v1;"
else
  fail "the LoRA job was refused: $(cat "$SCRATCH/lora.err")"
fi
check "slurmctld loaded the installed plugin" \
  grep -q "job_submit/fmte" "$LAB/log/slurmctld.log"

if [ "$FAILS" -ne 0 ]; then
  echo "package_test: $FAILS failed" >&2
  exit 1
fi
echo "package_test: $(basename "$DEB") ($(du -h "$DEB" | cut -f1)) installs, runs and loads"
