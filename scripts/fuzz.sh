#!/usr/bin/env bash
# Runs each libFuzzer harness (fuzz/, built with -DXOPT_FUZZ=ON) for a bounded time and fails on any
# crash, leak, timeout or sanitizer report, printing the executions each one made.
#   scripts/fuzz.sh BUILD_DIR [SECONDS_PER_HARNESS]     (default 60)
# Seeds: fuzz/seeds/* (small, checked in) and, read where they lie, ../shared/onnx-conformance's
# models (the model harness mutates them) and ../shared/models (each run once through the whole
# pipeline: too large to mutate usefully). Every input that ever crashed is in fuzz/regressions/ and
# runs first. New inputs go to a temporary folder that is deleted afterwards; a crashing input is
# kept as BUILD_DIR/fuzz/crash-* (add it to fuzz/regressions/NAME/ with its fix).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: scripts/fuzz.sh BUILD_DIR [SECONDS]}"
seconds="${2:-60}"
shared="${XOPT_SHARED_DIR:-../shared}"
if [[ -f "$build/CMakeCache.txt" ]]; then
  s="$(sed -n 's/^XOPT_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt")"
  shared="${XOPT_SHARED_DIR:-${s:-$shared}}"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# -rss_limit_mb / -malloc_limit_mb: a huge allocation is a finding, not a slow run.
common=(-timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1
        "-artifact_prefix=$build/fuzz/")
status=0
run() {  # NAME MAX_LEN SEED_DIR...
  local name="$1" max_len="$2"
  shift 2
  local bin="$build/fuzz/xopt_fuzz_$name" log="$work/$name.log"
  mkdir -p "$work/corpus-$name"
  local regressions=(fuzz/regressions/"$name"/*)
  if [[ -e "${regressions[0]}" ]]; then
    "$bin" "${common[@]}" "${regressions[@]}" >"$log" 2>&1 || {
      cat "$log"
      echo "fuzz.sh: $name: a regression input fails again" >&2
      status=1
      return
    }
  fi
  if "$bin" "${common[@]}" -max_len="$max_len" -max_total_time="$seconds" \
    "$work/corpus-$name" "$@" >"$log" 2>&1; then
    local execs
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    echo "fuzz.sh: $name: ${execs:-?} executions in ${seconds}s, no finding"
  else
    tail -n 60 "$log"
    echo "fuzz.sh: $name: FAILED (crash, leak, timeout or sanitizer report; input saved in $build/fuzz/)" >&2
    status=1
  fi
}
models=()
while IFS= read -r -d '' f; do models+=("$f"); done < <(find "$shared/models" -name '*.onnx' -print0)
if [[ ${#models[@]} -gt 0 ]]; then
  "$build/fuzz/xopt_fuzz_model" "${common[@]}" -timeout=600 -rss_limit_mb=8192 \
    -malloc_limit_mb=8192 "${models[@]}" >"$work/models.log" 2>&1 || {
    cat "$work/models.log"
    echo "fuzz.sh: model: a shared model fails the harness" >&2
    status=1
  }
  echo "fuzz.sh: model: ${#models[@]} shared models through the whole pipeline"
fi
conformance=()
for d in node simple pytorch-converted pytorch-operator; do
  [[ -d "$shared/onnx-conformance/$d" ]] && conformance+=("$shared/onnx-conformance/$d")
done
# libFuzzer reads seed folders one level deep: the conformance cases are FOLDER/CASE/model.onnx.
mkdir -p "$work/seeds-model"
if [[ ${#conformance[@]} -gt 0 ]]; then
  find "${conformance[@]}" -name model.onnx -size -64k -print0 |
    while IFS= read -r -d '' f; do ln -s "$(realpath "$f")" "$work/seeds-model/$(echo "$f" | md5sum | cut -c1-16)"; done
fi
run model 65536 "$work/seeds-model" fuzz/seeds/model
run text 8192 fuzz/seeds/text
run plan 16384 fuzz/seeds/plan
run image 65536 fuzz/seeds/image
exit $status
