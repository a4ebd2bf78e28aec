#!/usr/bin/env python3
"""Checks models converted by convert-precision with onnx's checker and onnxruntime.

Usage: check_with_onnxruntime.py DIR
DIR holds NAME.TYPE.onnx with NAME.TYPE.input_0.pb and NAME.TYPE.output_K.pb (xopt's CPU outputs),
written by xopt_precision_models_tests. Every model must pass onnx.checker.check_model with
full_check=True. The fp16 models are run in onnxruntime (CPU, graph optimizations off, so it runs
exactly the graph it was given) and every output must agree with xopt's: cosine >= 0.999 and
max|a-b| <= 1e-2 * max|xopt| (both compute in fp16, with their own rounding). onnxruntime's CPU
provider has no bf16 kernels for most of these ops, so bf16 models are checked by the checker and
for loading only where onnxruntime can (reported). Exits 77 when onnx or onnxruntime is missing.
"""
import os
import sys

try:
    import numpy as np
    import onnx
    import onnx.numpy_helper
    import onnxruntime as ort
except ImportError:
    sys.exit(77)


def read(path):
    t = onnx.TensorProto()
    with open(path, "rb") as fh:
        t.ParseFromString(fh.read())
    return t.name, onnx.numpy_helper.to_array(t)


def main():
    d = sys.argv[1]
    failed = False
    for f in sorted(os.listdir(d)):
        if not f.endswith(".onnx"):
            continue
        stem = f[: -len(".onnx")]
        path = os.path.join(d, f)
        try:
            onnx.checker.check_model(path, full_check=True)
        except Exception as e:  # noqa: BLE001 (report any checker failure)
            print(f"{stem}: onnx checker FAILED: {e}")
            failed = True
            continue
        if stem.endswith(".bf16"):
            print(f"{stem}: checker ok (full check); onnxruntime CPU has no bf16 kernels, not run")
            continue
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            s = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001
            print(f"{stem}: onnxruntime does not load it: {e}")
            failed = True
            continue
        name, x = read(os.path.join(d, stem + ".input_0.pb"))
        got = s.run(None, {s.get_inputs()[0].name: x})
        worst_cos, worst_rel = 1.0, 0.0
        for k, g in enumerate(got):
            _, ours = read(os.path.join(d, f"{stem}.output_{k}.pb"))
            a = g.astype(np.float64).ravel()
            b = ours.astype(np.float64).ravel()
            cos = float(a @ b / np.sqrt((a @ a) * (b @ b)))
            rel = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
            worst_cos, worst_rel = min(worst_cos, cos), max(worst_rel, rel)
        ok = worst_cos >= 0.999 and worst_rel <= 1e-2
        print(f"{stem}: checker ok (full check), onnxruntime {'agrees' if ok else 'DIFFERS'} "
              f"(cosine {worst_cos:.6f}, max rel {worst_rel:.2e})")
        failed = failed or not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
