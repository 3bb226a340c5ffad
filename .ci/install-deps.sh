#!/usr/bin/env bash
# Installs dtlab's dependencies from Debian 12's packages (docs/architecture.md,
# "Dependencies"), only those that are missing. libdnnl-dev is oneDNN, the cpu device's gemm
# backend (docs/cpu-backends.md). python3-torchvision is PyTorch: the independent
# reference that the cross-check tests compare our models and weights files with (and the
# benchmark's peer); python3-matplotlib draws the benchmark scripts' plots (bench/);
# fortunes-min is the text corpus dtrain trains the gpt models on (docs/dtrain.md), fortunes
# (every fortune file, 2.6 MB) its larger one (--data fortunes-all); python3-regex compiles
# GPT-2's pre-tokenizer pattern in the independent BPE that tests/ref/bpe_gpt2.py checks ours with;
# python3-pandas, python3-nbclient and python3-ipykernel run notebooks/ headless in the tests;
# python3-mpi4py and its source distribution's test suite (below) try libdtcoll_mpi.so under
# an outside client (tests/coll/preload_mpi4py.sh); similarity-tester (sim_c) is the batch
# grader's similarity report (lessons/grade NN --submissions, lessons/kit/similarity.py).
set -euo pipefail
PKGS="build-essential cmake pkg-config libopenblas-openmp-dev libdnnl-dev libopenmpi-dev openmpi-bin
      libsimgrid-dev libjemalloc2 libcmocka-dev libpng-dev libturbojpeg0-dev zlib1g-dev
      dataset-fashion-mnist fortunes-min fortunes python3 python3-regex python3-torchvision
      python3-matplotlib python3-pandas python3-nbclient python3-ipykernel python3-mpi4py python3-pip
      similarity-tester"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ -n "$missing" ]; then
  echo "dtlab: installing:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "dtlab: all dependencies present"
fi
# mpi4py's source distribution at the version of Debian 12's python3-mpi4py, from PyPI, once,
# kept outside the repository; only its test/ directory is used (nothing is built from it).
MPI4PY_VERSION=3.1.4
MPI4PY_SHA256=17858f2ebc623220d0120d1fa8d428d033dde749c4bc35b33d81a66ad7f93480
DTLAB_CACHE=${DTLAB_CACHE:-/var/cache/dtlab}
sdist=$DTLAB_CACHE/mpi4py-$MPI4PY_VERSION.tar.gz
if [ ! -f "$sdist" ]; then
  echo "dtlab: fetching mpi4py-$MPI4PY_VERSION.tar.gz (its test suite) into $DTLAB_CACHE"
  $SUDO mkdir -p "$DTLAB_CACHE"
  $SUDO /usr/bin/python3 -m pip download -q --no-deps --no-binary :all: -d "$DTLAB_CACHE" \
    "mpi4py==$MPI4PY_VERSION"
fi
if ! echo "$MPI4PY_SHA256  $sdist" | sha256sum -c --quiet -; then
  echo "dtlab: $sdist does not have the expected SHA-256; delete it and run again" >&2
  exit 1
fi
