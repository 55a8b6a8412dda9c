#!/usr/bin/env bash
# Installs the Debian packages vidmap builds and tests with (idempotent; apt-get update once).
# Required: a C++20 compiler, CMake, Ninja, Eigen, libpng, libjpeg-turbo. The rest is optional
# at configure time but installed here so every feature and every peer comparison builds
# (colmap reads our models back in a test; opencv-doc ships the graf pair with its homography;
# libbz2-dev lets the bundle adjuster read the .bz2 BAL problems; slurm-wlm and munge run
# `vidmap batch` on a real single-node Slurm in a test, python3-yaml parses its Kubernetes Job;
# pybind11, numpy, pytest and venv build and test the Python module; libjs-three is inlined
# into report.html and chromium opens it in the report's browser test;
# clang-format and clang-tidy are CI's static checks, scripts/ci_checks.sh).
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config git
  libeigen3-dev libpng-dev libjpeg-dev
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev
  nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopencv-dev libceres-dev colmap opencv-doc libbz2-dev
  slurm-wlm munge python3-yaml
  python3-dev python3-pybind11 pybind11-dev python3-numpy python3-pytest python3-setuptools
  python3-wheel python3-pip python3-venv libjs-three chromium
  clang-format clang-tidy)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"
