#!/usr/bin/env bash
# Installs BUILD (cmake --install, the dev component: libxopt.so, headers, xoptConfig.cmake) into a
# temporary prefix, builds the consumer project there with find_package(xopt) and runs it on the
# sample model. Usage: consumer_test.sh BUILD_DIR CONSUMER_SRC SAMPLE_DIR
set -euo pipefail
build="$1" src="$2" sample="$3"
tmp="$(mktemp -d /tmp/xopt-consumer.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" --component dev >/dev/null
test -f "$tmp/prefix/lib/cmake/xopt/xoptConfig.cmake" || {
  echo "consumer_test: no xoptConfig.cmake under $tmp/prefix" >&2
  find "$tmp/prefix" -maxdepth 3 >&2
  exit 1
}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$src" -B "$tmp/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 || {
  cat "$tmp/configure.log" >&2
  exit 1
}
cmake --build "$tmp/build" >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log" >&2
  exit 1
}
"$tmp/build/app" "$sample/model.onnx" "$sample/test_data_set_0"
