#!/usr/bin/env bash
# Installs what xopt needs to build and test (only what is missing), then configures and builds it in
# ./build. Debian/Ubuntu, run as root (or with sudo available).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake ninja-build pkg-config python3 python3-pip
              libprotobuf-dev protobuf-compiler libonnx-dev libgraphviz-dev nlohmann-json3-dev
              libcli11-dev libgtest-dev libopenblas-dev
              libxml2-dev libpng-dev chromium librsvg2-dev)  # viz: PNG charts; tests: SVG/PNG read back, report.html
# ImageDecoder's codecs (with libpng-dev above); each is optional to the build. libjpeg-dev is
# libjpeg-turbo's (libjpeg62-turbo-dev on Debian, libjpeg-turbo8-dev on Ubuntu).
APT_PACKAGES+=(libjpeg-dev libtiff-dev libwebp-dev libopenjp2-7-dev)
APT_PACKAGES+=(clang libclang-rt-dev)  # CI's sanitizer build and the fuzzers (scripts/test_sanitized.sh)
APT_PACKAGES+=(ccache)  # the pip-install test's build reuses the main build's objects
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
fi

# Python is test tooling only (reference outputs, sample generation); the tools never need it.
if ! python3 -c 'import onnx, onnxruntime, numpy' >/dev/null 2>&1; then
  echo "setup: installing onnx onnxruntime numpy with pip"
  python3 -m pip install onnx onnxruntime numpy ||
    python3 -m pip install --break-system-packages onnx onnxruntime numpy
fi

# The Python package (python/, tests/python): its build backend and binding library, and pytest.
if ! python3 -c 'import nanobind, scikit_build_core, pytest' >/dev/null 2>&1; then
  echo "setup: installing nanobind scikit-build-core pytest with pip"
  python3 -m pip install nanobind scikit-build-core pytest ||
    python3 -m pip install --break-system-packages nanobind scikit-build-core pytest
fi

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXOPT_WERROR=ON -DXOPT_PACKAGE=ON \
  "${launcher[@]}" ${XOPT_CMAKE_ARGS:-}
# Without arguments only the tools are built; scripts/test.sh builds the rest.
ninja -C build "${@:-xopt}"
