#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment, then `import xopt` and optimize and run the
# sample there. No network: the venv sees the system's site-packages (numpy, onnx, and the build
# backend scikit-build-core and nanobind that scripts/setup.sh installed), pip builds without
# isolation and installs no dependencies. The CMake build goes to BUILD_DIR, kept between runs.
# Usage: pip_install_test.sh PYTHON SOURCE_DIR BUILD_DIR BUILD_TYPE XOPT_CUDA XOPT_WERROR CXX_FLAGS CXX
# (the build type, options, the build type's compiler flags and the C++ compiler path of the tree
# that runs the test, so that ccache reuses its objects: ccache hashes the compiler's name, so
# /usr/bin/c++ and /usr/bin/g++ miss each other; the .cu files go through ccache too, which turns
# a 20-minute rebuild of the core on two cores into a link);
# XOPT_BUILD_JOBS limits the compile jobs (default: every core).
set -euo pipefail
python="$1" src="$2" build="$3" build_type="${4:-Release}" cuda="${5:-OFF}" werror="${6:-OFF}" flags="${7:-}" cxx="${8:-}"
export CMAKE_BUILD_PARALLEL_LEVEL="${XOPT_BUILD_JOBS:-$(nproc)}"
tmp="$(mktemp -d /tmp/xopt-venv.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv --system-site-packages "$tmp/venv"
py="$tmp/venv/bin/python"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache
            -C cmake.define.CMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_NOHASHDIR=1  # objects of another folder's build with the same flags are reused
fi
echo "pip install $src (build folder $build)"
PIP_NO_INDEX=1 "$py" -m pip install --no-build-isolation --no-deps -q "$src" \
  -C build-dir="$build" -C cmake.build-type="$build_type" -C cmake.define.XOPT_CUDA="$cuda" \
  -C cmake.define.XOPT_WERROR="$werror" \
  ${flags:+-C "cmake.define.CMAKE_CXX_FLAGS_${build_type^^}=$flags"} \
  ${cxx:+-C "cmake.define.CMAKE_CXX_COMPILER=$cxx"} \
  "${launcher[@]}"
cd "$tmp"  # not the source folder: `import xopt` must find the installed package
"$py" - "$src/samples/tiny_cnn" <<'PY'
import os, sys
import numpy as np
import onnx
import xopt

sample = sys.argv[1]
assert xopt.__file__.startswith(sys.prefix), (xopt.__file__, sys.prefix)
opt = xopt.optimize(os.path.join(sample, "model.onnx"), passes="fold,fuse,plan", batch=2)
info = xopt.plan_info(opt)
t = onnx.TensorProto()
with open(os.path.join(sample, "test_data_set_0", "input_0.pb"), "rb") as f:
    t.ParseFromString(f.read())
x = onnx.numpy_helper.to_array(t)
(y, *_) = xopt.Session(opt).run(None, {opt.graph.input[0].name: x})
print("installed xopt at %s: %d nodes, arena %d bytes, output %s" % (
    os.path.dirname(xopt.__file__), len(opt.graph.node), info.arena_bytes, y.shape))
PY
