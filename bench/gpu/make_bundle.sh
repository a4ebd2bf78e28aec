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
strip --strip-debug .gpu/bin/* .gpu/lib/* 2>/dev/null || true
(cd .gpu && tar cf - bin lib | xz -T2 -3 > binlib.tar.xz && rm -rf bin lib)
mkdir -p .gpu/shared/models
for m in ${BUNDLE_MODELS:-squeezenet1_1 shufflenet_v2_x1_0 bert_mini gpt_nano}; do
  cp -r "$SHARED/models/$m" .gpu/shared/models/
done
cp "$SHARED/models/MANIFEST.json" .gpu/shared/models/
(cd "$SHARED/onnx-conformance" && tar cJf - node) > .gpu/node.tar.xz
du -sh .gpu | awk '{print "bundle:", $1}'
