#!/usr/bin/env python3
"""CPU executor latency next to onnxruntime (CPU), batch 1, measured in the same run.

For each model (default: resnet18 and bert_mini from ../shared/models), on test_data_set_0/input_0.pb:
  * ours: BUILD/bench/xopt_bench_executor MODEL --iters N --threads T (run_model in simple mode,
    T intra-op threads; OpenBLAS itself single-threaded), its median ms per inference, on the model as exported and on the model after
    `xopt --passes=fold,fuse` (BUILD/tools/xopt/xopt, or --xopt; skipped when absent);
  * onnxruntime: InferenceSession on the CPU provider with intra_op_num_threads = --threads, once
    with its default graph optimizations (ORT_ENABLE_ALL: what a user gets) and once with them
    disabled (the graph as written, as our executor runs it); median ms per inference.
Rounds alternate ours / onnxruntime (--rounds, best median of each kept) so background load hits
both alike. Prints a table with the ratio ours / onnxruntime (target: within 3x of ORT_ENABLE_ALL)
and the load average, since other builds may share the machine: the figures are indicative.

Usage: python3 bench/executor_bench.py BUILD/bench/xopt_bench_executor [--models DIR]
       [--names resnet18,bert_mini] [--iters 20] [--rounds 3] [--threads 1]
Asserts nothing; exit status 1 only when a tool fails.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def ours(binary, model, data, iters, threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    r = subprocess.run([binary, model, "--data", data, "--iters", str(iters), "--warmup", "2",
                        "--threads", str(threads)],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{binary} {model}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout.strip().splitlines()[-1])["ms_median"]


def ort_session(model, threads, optimize):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else
                                   ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def ort_ms(sess, feeds, iters):
    for _ in range(2):
        sess.run(None, feeds)
    ms = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        ms.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ms))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", help="BUILD/bench/xopt_bench_executor")
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "shared", "models"))
    ap.add_argument("--names", default="resnet18,bert_mini")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--xopt", help="xopt binary for the fold,fuse column (default: BUILD/tools/xopt/xopt)")
    args = ap.parse_args()
    xopt = args.xopt or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.binary))),
                                     "tools", "xopt", "xopt")
    if not os.path.exists(xopt):
        print(f"# {xopt} not found: no fold,fuse column")
        xopt = None
    tmp = tempfile.mkdtemp(prefix="xopt_executor_bench_")

    load0 = os.getloadavg()
    print(f"# {os.cpu_count()} cores, load average {load0[0]:.1f} at start; threads {args.threads}"
          f" (xopt / onnxruntime intra-op); onnxruntime {ort.__version__}")
    if load0[0] > (os.cpu_count() or 1):
        print("# the machine is loaded by other work: the figures are indicative only")
    rows = []
    for name in args.names.split(","):
        model = os.path.join(args.models, name, "model.onnx")
        data_dir = os.path.join(args.models, name, "test_data_set_0")
        data = os.path.join(data_dir, "input_0.pb")
        optimized = None
        if xopt:
            optimized = os.path.join(tmp, name + ".opt.onnx")
            r = subprocess.run([xopt, "--passes=fold,fuse", "-q", model, "-o", optimized],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"xopt --passes=fold,fuse {model}: {r.stderr.strip()}")
        m = onnx.load(model, load_external_data=False)
        inits = {i.name for i in m.graph.initializer}
        inputs = [i.name for i in m.graph.input if i.name not in inits]
        feeds = {inputs[0]: read_tensor(data)}
        full, plain = ort_session(model, args.threads, True), ort_session(model, args.threads, False)
        best = {k: float("inf") for k in ("ours", "ours_opt", "ort", "ort_plain")}
        for _ in range(args.rounds):
            best["ours"] = min(best["ours"],
                               ours(args.binary, model, data_dir, args.iters, args.threads))
            if optimized:
                best["ours_opt"] = min(best["ours_opt"], ours(args.binary, optimized, data_dir,
                                                              args.iters, args.threads))
            best["ort"] = min(best["ort"], ort_ms(full, feeds, args.iters))
            best["ort_plain"] = min(best["ort_plain"], ort_ms(plain, feeds, args.iters))
        rows.append((name, best))

    print(f"{'model':<10} {'ort ms':>8} {'ort no-opt':>10} {'xopt cpu':>9} {'ratio':>6}"
          f" {'xopt cpu fold,fuse':>19} {'ratio':>6}")
    for name, b in rows:
        opt = (f"{b['ours_opt']:>19.2f} {b['ours_opt'] / b['ort']:>5.2f}x"
               if b["ours_opt"] != float("inf") else f"{'-':>19} {'-':>6}")
        print(f"{name:<10} {b['ort']:>8.2f} {b['ort_plain']:>10.2f} {b['ours']:>9.2f}"
              f" {b['ours'] / b['ort']:>5.2f}x {opt}")
    shutil.rmtree(tmp, ignore_errors=True)
    load1 = os.getloadavg()
    print(f"# median ms per inference, batch 1, best of {args.rounds} rounds of {args.iters};"
          f" load average {load1[0]:.1f} at the end. ratio = xopt / ort (ORT_ENABLE_ALL);"
          f" target <= 3x")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"executor_bench: {e}", file=sys.stderr)
        sys.exit(1)
