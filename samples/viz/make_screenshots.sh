#!/bin/sh
# Regenerates the screenshots in this folder: the report, a diff and a timeline for resnet18 and
# bert_mini, as a user sees them in Chromium.
#   samples/viz/make_screenshots.sh [BUILD_DIR] [SHARED_DIR]     (defaults: build, ../shared)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
shared=$(cd "${2:-$here/../../../shared}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shot() {  # shot HTML PNG WIDTH HEIGHT
  chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$work/chromium" --window-size="$3,$4" --screenshot="$2" "file://$1" \
    >/dev/null 2>&1
}
for m in resnet18 bert_mini; do
  model="$shared/models/$m/model.onnx"
  "$build/tools/xopt/xopt" --passes=fold,fuse,plan --batch 1 -q "$model" \
    -o "$work/$m.opt.onnx" --report "$work/$m-report" >/dev/null
  "$build/tools/xviz/xviz" diff "$model" "$work/$m.opt.onnx" -o "$work/$m-diff.html" >/dev/null
  "$build/tools/xviz/xviz" timeline "$work/$m.opt.onnx" -o "$work/$m-timeline.html" >/dev/null
  shot "$work/$m-report/report.html" "$here/${m}_report.png" 1400 1500
  shot "$work/$m-diff.html" "$here/${m}_diff.png" 1300 1400
  shot "$work/$m-timeline.html" "$here/${m}_timeline.png" 1240 700
done
ls -l "$here"/*.png
