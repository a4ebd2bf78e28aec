#!/usr/bin/env bash
# CI's second configuration (issue 15), in its own folder (./build-asan or $XOPT_ASAN_BUILD_DIR):
# clang, Release (its own -O3 flags: this is also CI's Release/clang build), AddressSanitizer +
# UndefinedBehaviorSanitizer, no CUDA; builds everything
# plus the libFuzzer harnesses, runs the whole test suite except the `slow` label (the model tests
# scripts/test.sh already ran unsanitized: under ASan they would pass CI's 90 minutes), then each
# harness for $XOPT_FUZZ_SECONDS (default 60) seconds (scripts/fuzz.sh). Any sanitizer report fails.
# Needs scripts/setup.sh first (it installs clang and libFuzzer).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/blas_env.sh
build="${XOPT_ASAN_BUILD_DIR:-build-asan}"
cxx="$(command -v clang++-14 || command -v clang++)"
cc="$(command -v clang-14 || command -v clang)"
cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-g1 -DXOPT_CUDA=OFF \
  -DXOPT_WERROR=ON -DXOPT_SANITIZE=address,undefined -DXOPT_FUZZ=ON -DXOPT_PCH=ON ${XOPT_CMAKE_ARGS:-}
# Under .ci/run: a full build takes about ci_full_build_seconds (scripts/ci_budget.sh). When less
# than that plus 5 minutes for the suite is left as this starts (the first build and suite took
# longer than usual), only the core is built and tested sanitized: the fuzz harnesses and the unit
# tests of the loaders, IR, passes, planner and CPU executor (where inputs from outside are parsed
# and memory is indexed), saying so; the CLI, viz, pipeline and model suites then ran only
# unsanitized, in scripts/test.sh.
source scripts/ci_budget.sh
targets=() labels=()
left="$(ci_seconds_left)"
if [[ -n "$left" ]] && ((left < ci_full_build_seconds + 5 * 60)); then
  core=(xopt_ir_tests xopt_fuzz_regression_tests xopt_passes_tests xopt_planner_tests
        xopt_executor_tests)
  targets=("${core[@]}" xopt_fuzzers)
  labels=(-L "^($(IFS='|'; echo "${core[*]}"))\$")
  echo "test_sanitized.sh: only $((left / 60)) min of CI left: sanitized build and tests of the" \
    "core only (${core[*]}) and the fuzzers; the other suites ran unsanitized in test.sh"
fi
ninja -C "$build" "${targets[@]}"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 1200 -LE slow "${labels[@]}" "$@"
# Fuzzing time per harness: XOPT_FUZZ_SECONDS (default 60); under .ci/run (XOPT_CI_START, when CI
# began) at most what keeps the whole run inside 85 of CI's 90 minutes, and at least 15 s.
seconds="${XOPT_FUZZ_SECONDS:-60}"
left="$(ci_seconds_left)"
if [[ -n "$left" ]]; then
  harnesses=$(find "$build/fuzz" -maxdepth 1 -name 'xopt_fuzz_*' -type f -executable | wc -l)
  left=$((left - 120))  # 2 min: regressions and shared models
  fit=$((left / (harnesses > 0 ? harnesses : 1)))
  ((fit < seconds)) && seconds=$fit
  ((seconds < 15)) && seconds=15
  echo "test_sanitized.sh: $((left / 60)) min of CI left: fuzzing $seconds s per harness"
fi
start=$(date +%s)
./scripts/fuzz.sh "$build" "$seconds"
echo "test_sanitized.sh: fuzzing took $(($(date +%s) - start)) s"
