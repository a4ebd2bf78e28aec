#!/usr/bin/env bash
# Builds xopt in the configurations issue 15 promises, each in its own folder, warnings as errors
# (XOPT_WERROR=ON), and prints one line per configuration: built or failed, and how long it took.
#
#   scripts/build_matrix.sh [COMPILER:BUILD_TYPE:CUDA ...]
#
# COMPILER is gcc or clang, BUILD_TYPE one of CMake's four, CUDA is cuda or nocuda (cuda needs nvcc;
# the .cu files go through nvcc with its default host compiler, the C++ through COMPILER). With no
# argument: every combination. XOPT_MATRIX_DIR (default build-matrix) holds the folders; a folder is
# removed after its configuration built unless XOPT_MATRIX_KEEP=1. XOPT_MATRIX_TESTS=1 also runs the
# suite but the `slow` label in each (Debug runs the asserts Release compiles out). A full build is
# about 38 minutes on two cores (gcc with CUDA, 2026-12-02): CI builds gcc RelWithDebInfo
# (test.sh), clang Release (test_sanitized.sh) and, through this script, gcc Release with CUDA (GCC -O3 is where the
# optimizer's warnings come from); run the rest before a release or after touching the build.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/ci_budget.sh
root="${XOPT_MATRIX_DIR:-build-matrix}"
configs=("$@")
if ((${#configs[@]} == 0)); then
  for compiler in gcc clang; do
    for type in Debug Release RelWithDebInfo MinSizeRel; do
      for cuda in cuda nocuda; do configs+=("$compiler:$type:$cuda"); done
    done
  done
fi

failed=0
for config in "${configs[@]}"; do
  IFS=: read -r compiler type cuda <<<"$config"
  # Under .ci/run, a configuration starts only while a full build still fits before CI's
  # 85-minute mark (scripts/ci_budget.sh); one that cannot is named as not built.
  left="$(ci_seconds_left)"
  if [[ -n "$left" ]] && ((left < ci_full_build_seconds)); then
    echo "$config: not built, only $((left / 60)) min of CI left before its 85-minute mark"
    continue
  fi
  case "$compiler" in
    gcc) cc=gcc cxx=g++ ;;
    clang)
      cc="$(command -v clang-14 || command -v clang)"
      cxx="$(command -v clang++-14 || command -v clang++)"
      ;;
    *) echo "build_matrix.sh: '$config': the compiler is gcc or clang" >&2; exit 2 ;;
  esac
  case "$type" in Debug | Release | RelWithDebInfo | MinSizeRel) ;;
    *) echo "build_matrix.sh: '$config': the build type is Debug, Release, RelWithDebInfo or MinSizeRel" >&2; exit 2 ;;
  esac
  case "$cuda" in cuda) with_cuda=ON ;; nocuda) with_cuda=OFF ;;
    *) echo "build_matrix.sh: '$config': the last field is cuda or nocuda" >&2; exit 2 ;;
  esac
  dir="$root/$compiler-$type-$cuda"
  log="$root/$compiler-$type-$cuda.log"
  mkdir -p "$root"
  start=$(date +%s)
  status=built
  if ! cmake -S . -B "$dir" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE="$type" -DXOPT_CUDA="$with_cuda" -DXOPT_WERROR=ON -DXOPT_PCH=ON \
    ${XOPT_CMAKE_ARGS:-} >"$log" 2>&1; then
    status="failed to configure"
  elif ! ninja -k 0 -C "$dir" >>"$log" 2>&1; then
    status="failed to build"
  elif [[ "${XOPT_MATRIX_TESTS:-0}" == 1 ]] &&
    ! ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --timeout 1200 -LE slow >>"$log" 2>&1; then
    status="built, tests failed"
  fi
  if [[ "$with_cuda" == ON ]] && grep -q "nvcc not found" "$log"; then
    status="$status (nvcc not found: built without CUDA)"
  fi
  echo "$config: $status in $(($(date +%s) - start)) s (log: $log)"
  if [[ "$status" == built ]]; then
    [[ "${XOPT_MATRIX_KEEP:-0}" == 1 ]] || rm -rf "$dir"
  else
    failed=1
    grep -m 20 -E "error|Error" "$log" | sed 's/^/    /'
  fi
done
exit $failed
