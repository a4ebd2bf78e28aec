#!/usr/bin/env python3
"""Runs xopt on every model of the third-party corpus (scripts/corpus/make_corpus.py) and prints
one table row per model:

  runs      `xopt validate CORPUS/NAME/model.onnx`: the CPU executor against onnxruntime's outputs
            stored beside the model (rtol 1e-4, atol 1e-5 of the output's scale)
  optimizes `xopt CORPUS/NAME/model.onnx --passes=cleanup,fold,fuse,plan --validate` with the
            inputs' shapes bound to the stored inputs' (the optimized model against the original,
            both in the CPU executor)
  ort       the optimized model passes onnx.checker.check_model(full_check=True), runs in
            onnxruntime (CPU, graph optimizations off, as for the references) and agrees with the stored reference outputs
  nodes     top-level nodes of xopt's output against onnxruntime's ORT_ENABLE_EXTENDED offline
            optimization of the original (its inputs fixed to the same shapes, so both optimizers
            know the same); `<=` where xopt ends at or below onnxruntime

Usage: python3 scripts/corpus/check_corpus.py BUILD/tools/xopt/xopt [--corpus /work/corpus]
       [--out DIR] [--only NAME,...] [--json FILE]
Exit status 1 when any model fails a column.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

RTOL, ATOL = 1e-4, 1e-5
PASSES = "cleanup,fold,fuse,plan"


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def load_case(d):
    m = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i.name for i in m.graph.input if i.name not in inits]
    data = os.path.join(d, "test_data_set_0")
    feeds = {n: read_tensor(os.path.join(data, f"input_{k}.pb")) for k, n in enumerate(inputs)}
    refs, k = [], 0
    while os.path.exists(os.path.join(data, f"output_{k}.pb")):
        refs.append(read_tensor(os.path.join(data, f"output_{k}.pb")))
        k += 1
    return m, feeds, refs


def close(got, ref):
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return False, f"shape {list(got.shape)} vs {list(ref.shape)}"
    if not np.issubdtype(ref.dtype, np.floating):
        same = np.array_equal(got, ref)
        return same, "equal" if same else "differs"
    a, b = got.astype(np.float64), ref.astype(np.float64)
    err = float(np.abs(a - b).max()) if a.size else 0.0
    scale = float(np.abs(b).max()) if b.size else 0.0
    return err <= ATOL + RTOL * scale, f"err {err / max(scale, 1e-30):.1e} of scale"


def run(cmd, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    text = (r.stdout + r.stderr).strip().splitlines()
    return r.returncode, text


def fixed_shape_copy(m, feeds, path):
    """The original with its inputs' dims set to the stored inputs' shapes."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    for i in m.graph.input:
        if i.name not in feeds or not i.type.HasField("tensor_type"):
            continue
        shape = i.type.tensor_type.shape
        shape.ClearField("dim")
        for v in feeds[i.name].shape:
            shape.dim.add().dim_value = int(v)
    onnx.save(m, path)


def shape_flags(m, feeds):
    flags = []
    for i in m.graph.input:
        if i.name not in feeds or not i.type.HasField("tensor_type"):
            continue
        dims = i.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") and d.dim_value > 0 for d in dims) and len(dims) == feeds[i.name].ndim:
            continue
        shape = feeds[i.name].shape
        if len(shape) == 0:
            continue
        flags += ["--input-shape", f"{i.name}=" + "x".join(str(v) for v in shape)]
    return flags


def ort_session(path, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def short(lines, n=1):
    keep = [l for l in lines if l.strip()]
    bad = [l for l in keep if "error" in l.lower() or "FAIL" in l or "mismatch" in l.lower()]
    return " | ".join((bad or keep)[-n:])[:200]


def check(xopt, d, out):
    name = os.path.basename(d)
    meta = json.load(open(os.path.join(d, "meta.json")))
    m, feeds, refs = load_case(d)
    row = {"model": name, "source": meta["source"], "exporter": meta["exporter"],
           "nodes_in": len(m.graph.node)}

    rc, text = run([xopt, "validate", os.path.join(d, "model.onnx")])
    row["runs"] = rc == 0
    row["runs_detail"] = "" if rc == 0 else short(text)

    opt = os.path.join(out, name + ".opt.onnx")
    if os.path.exists(opt):
        os.remove(opt)
    rc, text = run([xopt, os.path.join(d, "model.onnx"), f"--passes={PASSES}", "--validate", "-o",
                    opt, "--quiet"] + shape_flags(m, feeds))
    row["optimizes"] = rc == 0
    row["optimizes_detail"] = "" if rc == 0 else f"exit {rc}: {short(text)}"

    row["ort"] = False
    row["nodes_xopt"] = None
    if os.path.exists(opt):
        om = onnx.load(opt, load_external_data=False)
        row["nodes_xopt"] = len(om.graph.node)
        try:
            onnx.checker.check_model(opt, full_check=True)
            # As the references were made: graph optimizations off (onnxruntime's own QDQ fusions
            # change a static-quantized model's output by 1e-1 of its scale).
            sess = ort_session(opt, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
            names = [i.name for i in sess.get_inputs()]
            got = sess.run(None, {k: feeds[k] for k in names})
            verdicts = [close(g, r) for g, r in zip(got, refs)]
            row["ort"] = len(got) == len(refs) and all(ok for ok, _ in verdicts)
            row["ort_detail"] = "; ".join(msg for _, msg in verdicts)
        except Exception as e:  # noqa: BLE001 - a row, not a stop
            row["ort_detail"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"

    fixed = os.path.join(out, name + ".fixed.onnx")
    fixed_shape_copy(m, feeds, fixed)
    ort_out = os.path.join(out, name + ".ort.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = ort_out
    so.log_severity_level = 3
    row["nodes_ort"] = None
    # onnxruntime's shape inference refuses some models once their inputs are fixed (silero_vad's
    # If branches): then its count is of the original as shipped.
    for src in (fixed, os.path.join(d, "model.onnx")):
        try:
            ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
            row["nodes_ort"] = len(onnx.load(ort_out, load_external_data=False).graph.node)
            break
        except Exception as e:  # noqa: BLE001
            row["nodes_detail"] = f"ort: {e}"[:160]
    return row


def yes(v):
    return "yes" if v else "NO"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("xopt")
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="xopt_corpus_")
    os.makedirs(out, exist_ok=True)
    names = sorted(n for n in os.listdir(args.corpus)
                   if os.path.isfile(os.path.join(args.corpus, n, "meta.json")))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    rows = []
    print(f"onnxruntime {ort.__version__}; outputs in {out}")
    print("| model | source | exporter | runs | optimizes | onnxruntime agrees | nodes: in / xopt / ort-ext |")
    print("|---|---|---|---|---|---|---|")
    for n in names:
        row = check(args.xopt, os.path.join(args.corpus, n), out)
        rows.append(row)
        nx, no = row["nodes_xopt"], row["nodes_ort"]
        cmp = "" if nx is None or no is None else ("<=" if nx <= no else "**>**")
        print(f"| {n} | {row['source']} | {row['exporter']} | {yes(row['runs'])} | "
              f"{yes(row['optimizes'])} | {yes(row['ort'])} | {row['nodes_in']} / {nx} / {no} {cmp} |",
              flush=True)
    print()
    failures = 0
    for r in rows:
        nodes_ok = r["nodes_xopt"] is not None and r["nodes_ort"] is not None and r["nodes_xopt"] <= r["nodes_ort"]
        ok = r["runs"] and r["optimizes"] and r["ort"] and nodes_ok
        failures += not ok
        for k in ("runs_detail", "optimizes_detail", "ort_detail", "nodes_detail"):
            if r.get(k) and not (k == "ort_detail" and r["ort"]):
                print(f"{r['model']}: {k.split('_')[0]}: {r[k]}")
    print(f"\n{len(rows) - failures} passed, {failures} failed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
