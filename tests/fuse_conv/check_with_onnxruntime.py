#!/usr/bin/env python3
"""Checks models optimized by fold,fuse with onnx's checker and onnxruntime.

Usage: check_with_onnxruntime.py OPT_DIR [SHARED_MODELS_DIR]
OPT_DIR holds NAME.opt.onnx files (XOPT_SAVE_OPTIMIZED=OPT_DIR xopt_fuse_conv_tests, or
xopt --passes=fold,fuse). Each is compared with the original NAME/model.onnx on its
test_data_set_0 input, both run in onnxruntime (CPU, graph optimizations off so onnxruntime runs
exactly the graph it was given). Exits 1 when a model fails the checker, does not load, or differs
by more than rtol 1e-4 of its scale / atol 1e-5 (close() below).
"""
import collections
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
from ort_compare_rule import close  # noqa: E402 (beside this script)


def session(path):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def main():
    opt_dir = sys.argv[1]
    models_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "models")
    failed = False
    for f in sorted(os.listdir(opt_dir)):
        if not f.endswith(".opt.onnx"):
            continue
        name = f[: -len(".opt.onnx")]
        opt_path = os.path.join(opt_dir, f)
        orig_path = os.path.join(models_dir, name, "model.onnx")
        opt = onnx.load(opt_path)
        onnx.checker.check_model(opt)
        ops = collections.Counter(
            (n.domain + "." if n.domain else "") + n.op_type for n in opt.graph.node)
        inp = onnx.TensorProto()
        with open(os.path.join(models_dir, name, "test_data_set_0", "input_0.pb"), "rb") as fh:
            inp.ParseFromString(fh.read())
        x = onnx.numpy_helper.to_array(inp)
        a = session(orig_path)
        b = session(opt_path)
        want = a.run(None, {a.get_inputs()[0].name: x})
        got = b.run(None, {b.get_inputs()[0].name: x})
        ok = all(close(g, w) for g, w in zip(got, want))
        diff = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
        print(f"{name}: checker ok, onnxruntime {'matches' if ok else 'DIFFERS'} "
              f"(max abs diff {diff:.3g}), {len(opt.graph.node)} nodes: {dict(ops)}")
        failed = failed or not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
