#!/bin/sh
# gpu_prepare.sh — everything a bare GPU machine needs for bench/gpu_run.sh, made here.
#
#   sh bench/gpu_prepare.sh [ARCH]          (ARCH: compute capability digits, default 90)
#
# The GPU machines this project is lent now and then (an H100 or H200 for a few minutes)
# have nvcc, CMake, PyTorch and the CUDA libraries, but no Open MPI, OpenBLAS, libpng or
# libjpeg, and nothing can be installed there. So the build happens here, for that GPU's
# architecture only, and travels with the Debian libraries it needs:
#   build-gpu/   a Release build with -DDT_CUDA_ARCHS=ARCH and no oneDNN (the cpu device
#                is only the reference there); only what `ctest -L cuda` and the benchmark
#                run is built;
#   .gpu/build/  a slim copy of it: the CTest files and the programs the cuda tests and
#                bench_train_step run (the whole build tree is gigabytes of objects);
#   .gpu/deps.tar.xz  the Debian packages' files those programs load (ldd), plus Open MPI's
#                launcher, daemons and plug-ins; gpu_run.sh unpacks it over / without
#                overwriting a file that is there already;
#   .gpu/paths   the source and build paths CTest recorded here, so gpu_run.sh can link
#                them to wherever the tree lands there.
# Then, on the GPU machine, from the repository root (what travels: the tree, .gpu):
#   sh bench/gpu_run.sh        (see its header; about 6 minutes on an H100)
set -eu
ARCH=${1:-90}
case $ARCH in *[!0-9]*|'') echo "gpu_prepare.sh: ARCH must be digits such as 90 (sm_90), got '$ARCH'" >&2; exit 2 ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=/usr/bin/python3
command -v nvcc >/dev/null || { echo "gpu_prepare.sh: nvcc not found: the cuda device cannot be built here" >&2; exit 2; }

CC_LAUNCH=
command -v ccache >/dev/null && CC_LAUNCH="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DDT_CUDA_ARCHS="$ARCH" -DDT_ONEDNN=OFF $CC_LAUNCH >/dev/null
# the targets the cuda-labelled tests run, read from CTest itself, plus the benchmark
TESTS_JSON=$(mktemp)
trap 'rm -f "$TESTS_JSON"' EXIT
ctest --test-dir build-gpu -L cuda -N --show-only=json-v1 >"$TESTS_JSON"
TARGETS=$($PY - "$TESTS_JSON" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
names = set()
for t in d["tests"]:
    words = list(t.get("command", []))
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            words += [v.split("=", 1)[1] for v in p["value"] if "=" in v]
    for w in words:
        b = os.path.basename(w)
        if "/build-gpu/" in w and "." not in b:
            names.add(b)
names |= {"bench_train_step", "dtrain", "st_compare", "test_device_cuda"}  # unbuilt programs have no command yet
print(" ".join(sorted(names)))
EOF
)
echo "gpu_prepare.sh: building $TARGETS for sm_$ARCH"
for t in $TARGETS; do cmake --build build-gpu -j2 --target "$t" >/dev/null || { echo "gpu_prepare.sh: target $t failed" >&2; exit 1; }; done

# the slim build: CTest files and the built programs and shared libraries
rm -rf .gpu && mkdir -p .gpu/build
(cd build-gpu && find . -name CTestTestfile.cmake -o -type f -perm -u+x ! -path '*/CMakeFiles/*' \
    -o -name '*.so' ! -path '*/CMakeFiles/*' | grep -v '/same_bits/' | tar -cf - -T -) | tar -xf - -C .gpu/build
printf 'src %s\nbuild %s\n' "$ROOT" "$ROOT/build-gpu" >.gpu/paths

# the Debian packages whose libraries the programs load, and Open MPI's runtime
BINS=$(find .gpu/build -type f -perm -u+x ! -name '*.cmake')
LIBS=$(for b in $BINS /usr/bin/orterun /usr/bin/orted; do ldd "$b" 2>/dev/null; done |
       awk '$3 ~ /^\// {print $3}' | sort -u)
PKGS=$(for l in $LIBS; do dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "$l" 2>/dev/null; done |
       cut -d: -f1 | sort -u |
       grep -v -x -E 'libc6|libgcc-s1|libstdc\+\+6|libgomp1' || true)
PKGS="$PKGS openmpi-bin openmpi-common libopenmpi3 libpmix2"
# the plug-ins Open MPI opens at run time bring their own libraries
PLUG=$(dpkg -L libopenmpi3 libpmix2 | grep '\.so$' || true)
MORE=$(for p in $PLUG; do ldd "$p" 2>/dev/null; done | awk '$3 ~ /^\// {print $3}' | sort -u |
       while read -r l; do dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "$l" 2>/dev/null; done |
       cut -d: -f1 | sort -u | grep -v -x -E 'libc6|libgcc-s1|libstdc\+\+6|libgomp1|libcuda1|libnvidia.*' || true)
PKGS=$(printf '%s\n' $PKGS $MORE | sort -u)
echo "gpu_prepare.sh: packages: $(echo $PKGS)"
FILES=$(mktemp)
for p in $PKGS; do dpkg -L "$p"; done | while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "$f"; done |
  grep -v -E '^/usr/share/(doc|man|lintian)/' | sort -u >"$FILES"
tar -cJf .gpu/deps.tar.xz -T "$FILES" 2>/dev/null
rm -f "$FILES"
echo "gpu_prepare.sh: .gpu is $(du -sh .gpu | cut -f1) (the device tool carries 64 MiB with the tree)"
echo "gpu_prepare.sh: on the GPU machine: sh bench/gpu_run.sh   (carry .gpu)"
