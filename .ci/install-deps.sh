#!/usr/bin/env bash
# Installs dtlab's dependencies from Debian 12's packages (docs/architecture.md,
# "Dependencies"), only those that are missing. python3-torchvision is PyTorch: the independent
# reference that the cross-check tests compare our models and weights files with (and the
# benchmark's peer); python3-matplotlib draws the benchmark scripts' plots (bench/);
# python3-pandas, python3-nbclient and python3-ipykernel run notebooks/ headless in the tests.
set -euo pipefail
PKGS="build-essential cmake pkg-config libopenblas-openmp-dev libopenmpi-dev openmpi-bin
      libsimgrid-dev libjemalloc2 libcmocka-dev libpng-dev libturbojpeg0-dev zlib1g-dev
      dataset-fashion-mnist python3 python3-torchvision python3-matplotlib
      python3-pandas python3-nbclient python3-ipykernel"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "dtlab: installing:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "dtlab: all dependencies present"
fi
