#!/usr/bin/env python3
"""xopt's fold,fuse next to onnxruntime's own offline optimization, for every shared model.

For each ../shared/models/NAME/model.onnx:
  * runs `xopt NAME/model.onnx --passes=fold,fuse -o OUT/NAME.xopt.onnx` (timed),
  * lets onnxruntime write its own optimized graph (SessionOptions.graph_optimization_level =
    ORT_ENABLE_EXTENDED, optimized_model_filepath = OUT/NAME.ort.onnx),
  * runs onnxruntime (CPU, its graph optimizations off, so each graph runs as written) on the
    original and on xopt's model with test_data_set_0/input_0.pb, and prints whether the outputs
    agree (max abs / max rel diff), plus the diff of xopt's model against PyTorch's output_0.pb,
  * prints node counts: original, after xopt fold,fuse, after onnxruntime's extended optimization,
    and whether xopt's model passes onnx.checker.
Then the annotated models: `xopt --passes=fold,fuse,plan` writes the memory plan into
metadata_props["xopt.memory_plan"]; each such model must pass onnx.checker and give onnxruntime the
same outputs as the original (arena, lower bound and naive figures printed from the stored plan).
Last, times `xopt --passes=fold,fuse` on bert_mini (best of --repeat runs; target < 1 s).

Usage: python3 bench/ort_compare.py BUILD/tools/xopt/xopt [--models DIR] [--out DIR] [--repeat N]
Figures only: the script asserts nothing except that the tools ran. Exit status 1 when an output
disagrees beyond rtol 1e-4 (atol 1e-5).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

RTOL, ATOL = 1e-4, 1e-5


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run_ort(path, feeds, level=ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def ort_offline(path, out_path):
    """onnxruntime's own extended offline optimization; returns the saved model's node count."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = out_path
    so.log_severity_level = 3
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return onnx.load(out_path, load_external_data=False)


def diffs(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    abs_diff = np.abs(a - b)
    # Relative error where it means something: over elements with |b| >= 1e-3.
    big = np.abs(b) >= 1e-3
    rel = float((abs_diff[big] / np.abs(b[big])).max()) if big.any() else 0.0
    ok = bool(np.all(abs_diff <= ATOL + RTOL * np.abs(b)))
    return float(abs_diff.max()), rel, ok


def run_xopt(xopt, model, out, passes="fold,fuse"):
    t0 = time.perf_counter()
    r = subprocess.run([xopt, model, f"--passes={passes}", "-o", out, "--quiet"],
                       capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"xopt failed on {model}: {r.stdout}{r.stderr}")
    return secs


def checker_result(path):
    try:
        onnx.checker.check_model(path)
        return "ok"
    except Exception as e:  # noqa: BLE001 - report, do not stop
        return f"FAILS: {str(e).splitlines()[0][:80]}"


def stored_plan(model):
    for p in model.metadata_props:
        if p.key == "xopt.memory_plan":
            return json.loads(p.value)
    return None


def annotated(xopt, models, names, out):
    """fold,fuse,plan models: checker, onnxruntime outputs vs the original, the stored plan."""
    print("\nannotated models (xopt --passes=fold,fuse,plan; plan in metadata_props):")
    header = (f"{'model':20} {'checker':8} {'ort(orig) vs ort(annotated)':>28}  {'arena':>10} "
              f"{'lower bnd':>10} {'naive given':>12} {'ratio':>6}  agree")
    print(header)
    print("-" * len(header))
    failures = 0
    for name in names:
        src = os.path.join(models, name, "model.onnx")
        path = os.path.join(out, f"{name}.plan.onnx")
        run_xopt(xopt, src, path, "fold,fuse,plan")
        checker = checker_result(path)
        plan = stored_plan(onnx.load(path, load_external_data=False))
        original = onnx.load(src, load_external_data=False)
        x = read_tensor(os.path.join(models, name, "test_data_set_0", "input_0.pb"))
        in_name = [i.name for i in original.graph.input
                   if i.name not in {t.name for t in original.graph.initializer}][0]
        mabs, mrel, ok = diffs(run_ort(path, {in_name: x})[0], run_ort(src, {in_name: x})[0])
        good = ok and checker == "ok" and plan is not None
        failures += not good
        arena = plan["arena_bytes"] if plan else 0
        lower = plan["lower_bound"] if plan else 0
        given = plan.get("input_naive_bytes", 0) if plan else 0
        print(f"{name:20} {checker[:8]:8} abs {mabs:8.2e} rel {mrel:8.2e}  {arena:10d} "
              f"{lower:10d} {given:12d} {arena / max(lower, 1):6.3f}  {'yes' if good else 'NO'}")
        if checker != "ok":
            print(f"  {checker}")
    return failures


def fused_ops(model):
    c = Counter((n.domain + "." if n.domain else "") + n.op_type for n in model.graph.node)
    keep = [k for k in c if k.startswith("com.microsoft.") or k in ("LayerNormalization", "Gelu")]
    return ", ".join(f"{k.replace('com.microsoft.', 'ms.')}={c[k]}" for k in sorted(keep)) or "-"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("xopt", help="path of the xopt binary")
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "shared", "models"))
    ap.add_argument("--out", default=None, help="where optimized models go (default: a temp dir)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of the bert_mini timing")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="xopt_ort_compare_")
    os.makedirs(out, exist_ok=True)
    names = sorted(d for d in os.listdir(args.models)
                   if os.path.isfile(os.path.join(args.models, d, "model.onnx")))
    print(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}; optimized models in {out}")
    header = (f"{'model':20} {'nodes':>6} {'xopt':>6} {'ort-ext':>7} {'xopt s':>7}  "
              f"{'ort(orig) vs ort(xopt)':>26}  {'xopt vs torch':>13}  agree")
    print(header)
    print("-" * len(header))
    failures = 0
    details = []
    for name in names:
        src = os.path.join(args.models, name, "model.onnx")
        ours = os.path.join(out, f"{name}.xopt.onnx")
        theirs = os.path.join(out, f"{name}.ort.onnx")
        secs = run_xopt(args.xopt, src, ours)
        original = onnx.load(src, load_external_data=False)
        optimized = onnx.load(ours, load_external_data=False)
        ort_model = ort_offline(src, theirs)
        data = os.path.join(args.models, name, "test_data_set_0")
        x = read_tensor(os.path.join(data, "input_0.pb"))
        torch_out = read_tensor(os.path.join(data, "output_0.pb"))
        in_name = [i.name for i in original.graph.input
                   if i.name not in {t.name for t in original.graph.initializer}][0]
        ref = run_ort(src, {in_name: x})[0]
        got = run_ort(ours, {in_name: x})[0]
        mabs, mrel, ok = diffs(got, ref)
        tabs, trel, tok = diffs(got, torch_out)
        checker = checker_result(ours)
        failures += checker != "ok"
        failures += not (ok and tok)
        print(f"{name:20} {len(original.graph.node):6d} {len(optimized.graph.node):6d} "
              f"{len(ort_model.graph.node):7d} {secs:7.3f}  abs {mabs:8.2e} rel {mrel:8.2e}  "
              f"rel {trel:8.2e}  {'yes' if ok and tok else 'NO'}")
        details.append(f"  {name:20} xopt: {fused_ops(optimized)}  (onnx.checker: {checker})\n"
                       f"  {'':20} ort:  {fused_ops(ort_model)}")
    print("\nfused ops (xopt fold,fuse vs onnxruntime ORT_ENABLE_EXTENDED):")
    print("\n".join(details))
    failures += annotated(args.xopt, args.models, names, out)

    bert = os.path.join(args.models, "bert_mini", "model.onnx")
    if os.path.isfile(bert):
        times = [run_xopt(args.xopt, bert, os.path.join(out, "bert_mini.timing.onnx"))
                 for _ in range(args.repeat)]
        print(f"\nxopt --passes=fold,fuse on bert_mini (process wall time, best of {args.repeat}): "
              f"{min(times):.3f} s (median {sorted(times)[len(times) // 2]:.3f} s; target < 1 s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
