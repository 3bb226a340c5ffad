#!/bin/sh
# gpu_run.sh — the first minutes on a lent GPU: the cuda tests, then the ResNet-50 step
# against PyTorch in fp16, bf16 and TF32 (bench/CUDA-RESULTS.md's tables), in one go.
#
#   sh bench/gpu_prepare.sh 90      here, first (builds for sm_90 and packs what is missing)
#   sh bench/gpu_run.sh [-q]        there, from the repository root, with .gpu carried
#
# -q: quick (one round per precision, no profile): about 3 minutes instead of 6.
# Writes ctest.log, step_fp16.txt, step_bf16.txt, step_tf32.txt and gpu.txt to $OUT (the
# device tool's return folder) or to ./gpu-results. Every step is bounded by `timeout`, so
# a hang costs its bound, not the lease. Exit status: that of the cuda tests.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RES=${OUT:-$ROOT/gpu-results}
mkdir -p "$RES"
ROUNDS=2; PROFILE=--profile
[ "${1:-}" = -q ] && { ROUNDS=1; PROFILE=; }
say() { echo "gpu_run.sh: $*"; }

[ -f .gpu/paths ] && [ -d .gpu/build ] || { say "no .gpu/ here: run bench/gpu_prepare.sh first and carry .gpu"; exit 2; }
if ! nvidia-smi -L >/dev/null 2>&1; then say "SKIPPED: no NVIDIA GPU on this machine (nvidia-smi -L failed)"; exit 77; fi
nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv | tee "$RES/gpu.txt"
nproc >>"$RES/gpu.txt"

# what the machine lacks, unpacked over / without overwriting anything it has
[ -f .gpu/deps.tar.xz ] && tar -xJf .gpu/deps.tar.xz -C / --skip-old-files --keep-directory-symlink 2>/dev/null
ldconfig 2>/dev/null || true
# the CUDA libraries: where the image keeps them (CUDA toolkit, or PyTorch's wheels)
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib \
         $(python3 -c 'import nvidia, os; b = os.path.dirname(nvidia.__path__[0]); print(" ".join(os.path.join(b, "nvidia", x, "lib") for x in ("cublas", "cuda_runtime")))' 2>/dev/null); do
  [ -d "$d" ] && LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# CTest recorded the source and build paths where the build was made: link them here
SRC=$(sed -n 's/^src //p' .gpu/paths); BLD=$(sed -n 's/^build //p' .gpu/paths)
if [ "$SRC" != "$ROOT" ]; then
  if [ -L "$SRC" ]; then rm -f "$SRC"
  elif [ -e "$SRC" ]; then say "$SRC exists here and is not this tree: cannot link the recorded paths"; exit 2; fi
  mkdir -p "$(dirname "$SRC")" && ln -s "$ROOT" "$SRC"
fi
[ -e "$BLD" ] || ln -s "$ROOT/.gpu/build" "$BLD"
missing=$(ldd "$BLD/bench/bench_train_step" | grep 'not found' || true)
[ -z "$missing" ] || { say "libraries not found: $missing"; exit 1; }

say "cuda tests"
timeout 300 ctest --test-dir "$BLD" -L cuda --output-on-failure >"$RES/ctest.log" 2>&1
rc=$?
tail -n 15 "$RES/ctest.log"

for p in fp16 bf16 tf32; do
  prec=$p; [ $p = tf32 ] && prec=fp32
  say "resnet50 batch 128, $p, dtlab and PyTorch in the same run"
  DT_PYTHON=python3 timeout 150 "$BLD/bench/bench_train_step" --device cuda --model resnet50 \
      --batch 128 --precision $prec --rounds $ROUNDS $PROFILE >"$RES/step_$p.txt" 2>&1 ||
    say "the $p step failed or ran out of time (see step_$p.txt)"
  grep -E '^\|' "$RES/step_$p.txt" | head -n 4
done
exit $rc
