"""Issue 16's GPU line: `xopt.Session(device="cuda")` on PyTorch CUDA tensors through DLPack runs
with no host round trip. For each model: optimize (fold,fuse,plan --device cuda), then
  - the CPU twin: xopt.Session on the CPU gives the expected outputs;
  - run_dlpack with CUDA tensors under torch.profiler (CUDA activities, CUPTI: every copy the
    process makes, ours included): counts Memcpy HtoD / DtoH / DtoD, checks the outputs come back
    as CUDA DLPack arrays that torch.from_dlpack takes without a copy (same data_ptr twice), the
    session's host_transfer_bytes unchanged, outputs equal to the twin (rtol 1e-4, TF32 off);
  - timing: run() with numpy (pinned staging, host copies) vs run_dlpack() with CUDA tensors, and a
    run on a side stream (stream=torch.cuda.Stream).
Prints a table and writes JSON.
  python3 bench/gpu/python_dlpack.py --models DIR --out FILE.json [model ...]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

import xopt


def copies(prof):
    kinds = {"HtoD": 0, "DtoH": 0, "DtoD": 0}
    for e in prof.events():
        for k in kinds:
            if "Memcpy" in e.name and k in e.name:
                kinds[k] += 1
    return kinds


def check(path, batch, iterations):
    opt = path.replace(".onnx", f".b{batch}.dlpack.onnx")
    xopt.optimize(path, passes="fold,fuse,plan", batch=batch, device="cuda", output=opt)
    cpu = xopt.Session(opt)
    rng = np.random.default_rng(0)
    feeds = {}
    for arg in cpu.get_inputs():
        shape = [d if isinstance(d, int) else batch for d in arg.shape]
        if "int" in arg.type:
            feeds[arg.name] = rng.integers(0, 4, size=shape).astype(np.int64 if "64" in arg.type else np.int32)
        else:
            feeds[arg.name] = rng.uniform(-1, 1, size=shape).astype(np.float32)
    want = cpu.run(None, feeds)  # the twin
    sess = xopt.Session(opt, device="cuda")
    cuda_feeds = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}
    sess.run_dlpack(None, cuda_feeds)  # warm-up: captures the device graph
    torch.cuda.synchronize()
    before = sess.host_transfer_bytes
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        outs = sess.run_dlpack(None, cuda_feeds)
        tensors = [torch.from_dlpack(o) for o in outs]
        torch.cuda.synchronize()
    seen = copies(prof)
    row = {"model": os.path.basename(os.path.dirname(path)), "batch": batch, "copies": seen,
           "host_transfer_bytes": sess.host_transfer_bytes - before}
    row["outputs_on_cuda"] = all(t.is_cuda for t in tensors)
    row["zero_copy_out"] = all(torch.from_dlpack(o).data_ptr() == t.data_ptr()
                               for o, t in zip(outs, tensors))
    worst = 0.0
    for t, w in zip(tensors, want):
        got = t.cpu().numpy()
        scale = max(float(np.max(np.abs(w))), 1e-30)
        worst = max(worst, float(np.max(np.abs(got - w))) / scale)
    row["max_rel_diff"] = worst
    # A side stream: the inputs are written there, the session follows it.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        side_feeds = {k: (v * 1).contiguous() for k, v in cuda_feeds.items()}
        side_out = sess.run_dlpack(None, side_feeds, stream=side)
        side_t = [torch.from_dlpack(o) for o in side_out]
    side.synchronize()
    row["side_stream_equal"] = all(torch.equal(a, b) for a, b in zip(side_t, tensors))

    def timed(fn):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(iterations):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        return float(np.median(times))

    row["numpy_ms"] = timed(lambda: sess.run(None, feeds))
    row["dlpack_ms"] = timed(lambda: sess.run_dlpack(None, cuda_feeds))
    row["ok"] = (seen["HtoD"] == 0 and seen["DtoH"] == 0 and row["host_transfer_bytes"] == 0 and
                 row["outputs_on_cuda"] and row["zero_copy_out"] and worst <= 1e-4 and
                 row["side_stream_equal"])
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("names", nargs="*", default=["resnet50:1", "resnet50:32", "bert_base:1"])
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"xopt.cuda_built() = {xopt.cuda_built()}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}")
    rows = []
    for spec in a.names:
        name, batch = spec.split(":")
        row = check(os.path.join(a.models, name, "model.onnx"), int(batch), a.iterations)
        rows.append(row)
        print(f"{row['model']} b{row['batch']}: copies {row['copies']}, host bytes "
              f"{row['host_transfer_bytes']}, outputs on cuda {row['outputs_on_cuda']}, zero-copy "
              f"out {row['zero_copy_out']}, max rel diff {row['max_rel_diff']:.2e}, side stream "
              f"{row['side_stream_equal']}; run(numpy) {row['numpy_ms']:.3f} ms, "
              f"run_dlpack(cuda) {row['dlpack_ms']:.3f} ms -> {'OK' if row['ok'] else 'FAIL'}")
    with open(a.out, "w") as f:
        json.dump(rows, f, indent=1)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
