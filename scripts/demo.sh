#!/usr/bin/env bash
# Runs xopt on the bundled sample model and says where everything went. Needs scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."

XOPT=build/tools/xopt/xopt
OUT=out/demo
[ -x "$XOPT" ] || ninja -C build xopt
rm -rf "$OUT"
mkdir -p "$OUT"

echo "== xopt --passes=cleanup samples/tiny_cnn/model.onnx"
"$XOPT" --passes=cleanup samples/tiny_cnn/model.onnx -o "$OUT/tiny_cnn.opt.onnx" \
  --input-shape image=1x3x16x16 --stats-json "$OUT/stats.json" \
  --print-after cleanup --print-dir "$OUT/graphs"

echo
echo "== outputs"
echo "optimized model:        $OUT/tiny_cnn.opt.onnx"
echo "per-pass statistics:    $OUT/stats.json"
echo "graph after cleanup:    $(ls "$OUT"/graphs/*)"
echo "list of passes:         $XOPT --list-passes"
