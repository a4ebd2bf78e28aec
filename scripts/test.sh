#!/usr/bin/env bash
# Builds everything in ./build and runs the whole test suite. Needs scripts/setup.sh first.
# Tests that need ../shared or a GPU skip, saying so, when those are absent.
set -euo pipefail
cd "$(dirname "$0")/.."

ninja -C build
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 1200 "$@"
