#!/usr/bin/env bash
# Builds xopt and the GPU tests here and bundles them for the GPU machine into .gpu/ (git-ignored):
# programs (debug info stripped) and the libraries the GPU machine lacks, packed as binlib.tar.xz;
# the shared models that fit the 64 MiB the run tool carries (resnet18 and mobilenet_v2 are
# exported there instead: bench/gpu/export_models.py); the ONNX node tests as one .tar.xz. Then, with the device tool:
#   run  command: "bash bench/gpu/experiment.sh tests conformance shared"   carry: [".gpu"]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
SHARED=${XOPT_SHARED_DIR:-../shared}
ninja -C "$B" xopt xopt_cuda_tests
rm -rf .gpu
../shared/device/bundle.sh .gpu "$B/tools/xopt/xopt" "$B/tests/cuda/xopt_cuda_tests" >/dev/null
# BUNDLE_PYTHON=1: the Python package with the CUDA executor, built for the GPU machine's Python
# (3.12, torch's) in build-py312 (XOPT_PACKAGE, so everything position-independent: a full build
# the first time), for the `python` step.
if [ -n "${BUNDLE_PYTHON:-}" ]; then
  PY=${BUNDLE_PYTHON_EXE:-/root/.pyenv/versions/3.12.1/bin/python3}
  [ -f build-py312/CMakeCache.txt ] || cmake -S . -B build-py312 -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DXOPT_PACKAGE=ON -DXOPT_TESTS=OFF -DPython_EXECUTABLE="$PY"
  ninja -C build-py312 _xopt
  mkdir -p .gpu/python
  cp -rL build-py312/python/xopt .gpu/python/
  ../shared/device/bundle.sh .gpu/pylib build-py312/python/xopt/_xopt*.so >/dev/null
  rm -rf .gpu/pylib/bin
fi
strip --strip-debug .gpu/bin/* .gpu/lib/* 2>/dev/null || true
(cd .gpu && tar cf - bin lib | xz -T2 -3 > binlib.tar.xz && rm -rf bin lib)
mkdir -p .gpu/shared/models
for m in ${BUNDLE_MODELS:-squeezenet1_1 shufflenet_v2_x1_0 bert_mini gpt_nano}; do
  cp -r "$SHARED/models/$m" .gpu/shared/models/
done
cp "$SHARED/models/MANIFEST.json" .gpu/shared/models/
(cd "$SHARED/onnx-conformance" && tar cJf - node) > .gpu/node.tar.xz
du -sh .gpu | awk '{print "bundle:", $1}'
