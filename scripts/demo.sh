#!/usr/bin/env bash
# Runs xopt's main job on the bundled sample model and says where everything went. Needs
# scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."

XOPT=build/tools/xopt/xopt
OUT=out/demo
[ -x "$XOPT" ] || ninja -C build xopt
rm -rf "$OUT"
mkdir -p "$OUT"

# fold + fuse + plan at batch 2, then run the optimized model inside its planned arena on the
# sample's test_data_set_0 and compare it with the original model.
echo "== xopt --passes=fold,fuse,plan --batch 2 --validate samples/tiny_cnn/model.onnx"
"$XOPT" --passes=fold,fuse,plan samples/tiny_cnn/model.onnx -o "$OUT/tiny_cnn.opt.onnx" \
  --batch 2 --report "$OUT/report" --stats-json "$OUT/stats.json" \
  --print-after fuse --print-dir "$OUT/graphs" --validate

echo
echo "== xopt plan-info $OUT/tiny_cnn.opt.onnx (the plan read back from the model)"
"$XOPT" plan-info "$OUT/tiny_cnn.opt.onnx" | head -n 20

echo
echo "== outputs"
echo "optimized model (plan in metadata_props[\"xopt.memory_plan\"]): $OUT/tiny_cnn.opt.onnx"
echo "memory breakdown report:  $OUT/report/report.json"
echo "HTML report (graphs before/after, memory timeline, breakdown): $OUT/report/report.html"
echo "per-pass statistics:      $OUT/stats.json"
echo "graph after fuse (text):  $(ls "$OUT"/graphs/*)"
echo "list of passes:           $XOPT --list-passes"
