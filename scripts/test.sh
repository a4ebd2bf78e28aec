#!/usr/bin/env bash
# Builds everything in ./build and runs the whole test suite. Needs scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."

ninja -C build
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
