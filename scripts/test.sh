#!/usr/bin/env bash
# Builds everything in ./build (or $XOPT_BUILD_DIR) and runs the whole test suite. Needs
# scripts/setup.sh first. Tests that need ../shared or a GPU skip, saying so, when those are absent;
# with CI set (CI=true), a missing shared folder is an error instead: the script stops, naming it,
# and every test that needs it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/blas_env.sh
build="${XOPT_BUILD_DIR:-build}"

case "${CI:-}" in
  "" | 0 | false | FALSE | False | no) ;;
  *)
    shared="${XOPT_SHARED_DIR:-}"
    if [[ -z "$shared" && -f "$build/CMakeCache.txt" ]]; then
      shared="$(sed -n 's/^XOPT_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt")"
    fi
    shared="${shared:-../shared}"
    if [[ ! -d "$shared/models" ]]; then
      echo "test.sh: CI=$CI but the shared folder '$shared' (models/, onnx-conformance/) is" \
        "missing; CI must run the tests that need it (XOPT_SHARED_DIR names another folder)" >&2
      exit 1
    fi
    ;;
esac

ninja -C "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 1200 "$@"
