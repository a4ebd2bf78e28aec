#!/usr/bin/env python3
"""xopt's CUDA executor against PyTorch on the same GPU, model, batch and precision (issue 11).

For each model and batch: `xopt --passes=fold,fuse,plan --batch B --device cuda` then
`xopt bench --device cuda` (ours: GPU time of one replayed inference, copies in and out included;
memory measured on the device), and PyTorch eager, CUDA-graph replay and (with --compile)
torch.compile(mode="reduce-overhead"), each timed with CUDA events over the same iteration count.
Memory: ours = arena + workspace (activations) and parameters, measured; PyTorch = parameters and
the activation peak after warm-up (max_memory_allocated minus parameters). Prints a table with
ratios and writes JSON.

    python3 bench/gpu/bench_vs_torch.py --xopt XOPT --models DIR --out OUTDIR [--batches 1,32]
        [--names resnet50,bert_base,mobilenet_v2] [--compile] [--tf32]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import export_models  # noqa: E402


def cuda_time(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2], times[0]


def torch_variants(name, batch, warmup, iters, use_compile):
    model, args, _, _, _ = export_models.MAKERS[name]()
    model = model.cuda().eval()
    args = tuple(torch.cat([a] * batch).cuda() for a in args)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    params += sum(b.numel() * b.element_size() for b in model.buffers())
    res = {}
    with torch.no_grad():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        for _ in range(3):
            model(*args)
        torch.cuda.synchronize()
        res["torch_activation_peak"] = torch.cuda.max_memory_allocated() - base
        res["torch_params"] = params
        res["eager_ms"], _ = cuda_time(lambda: model(*args), warmup, iters)
        # CUDA-graph replay of eager.
        static = args
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(*static)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            model(*static)
        res["cuda_graph_ms"], _ = cuda_time(g.replay, warmup, iters)
        if use_compile:
            t0 = time.time()
            compiled = torch.compile(model, mode="reduce-overhead")
            for _ in range(3):
                compiled(*args)
            res["compile_seconds"] = time.time() - t0
            res["torch_compile_ms"], _ = cuda_time(lambda: compiled(*args), warmup, iters)
    del model
    torch.cuda.empty_cache()
    return res


def ours(xopt, model_path, batch, workdir, tf32, warmup, iters, extra):
    opt = os.path.join(workdir, f"b{batch}.opt.onnx")
    flags = (["--tf32"] if tf32 else []) + extra
    r = subprocess.run([xopt, "--passes=fold,fuse,plan", model_path, "-o", opt, "--batch",
                        str(batch), "--device", "cuda", "-q"] + flags,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:]}
    js = os.path.join(workdir, f"b{batch}.bench.json")
    r = subprocess.run([xopt, "bench", opt, "--device", "cuda", "--warmup", str(warmup),
                        "--iterations", str(iters), "--json", js] + flags,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:]}
    j = json.load(open(js))
    m = j["memory"]
    return {"ours_ms": j["gpu_ms"]["median"], "ours_min_ms": j["gpu_ms"]["min"],
            "ours_host_ms": j["host_ms"]["median"], "ours_params": m["parameters"],
            "ours_activations": m["arena"] + m["workspace"], "ours_arena": m["arena"],
            "ours_workspace": m["workspace"], "ours_context": m["context"],
            "plan_equal": m["arena"] == m["plan_arena"] and m["workspace"] == m["plan_workspace"]
            and m["parameters"] == m["plan_parameters"],
            "allocations_during_runs": m["allocations_during_runs"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xopt", required=True)
    ap.add_argument("--models", required=True, help="folder of export_models.py's output")
    ap.add_argument("--out", required=True)
    ap.add_argument("--names", default="resnet50,bert_base,mobilenet_v2")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--tf32", action="store_true")
    ap.add_argument("--xopt-flags", default="",
                    help="more flags for both xopt commands, space-separated (e.g. --tune)")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for name in a.names.split(","):
        for batch in [int(b) for b in a.batches.split(",")]:
            work = os.path.join(a.out, name)
            os.makedirs(work, exist_ok=True)
            row = {"model": name, "batch": batch, "tf32": a.tf32}
            row.update(ours(a.xopt, os.path.join(a.models, name, "model.onnx"), batch, work,
                            a.tf32, a.warmup, a.iterations, a.xopt_flags.split()))
            row.update(torch_variants(name, batch, a.warmup, a.iterations, a.compile))
            best = min(row[k] for k in ("eager_ms", "cuda_graph_ms", "torch_compile_ms")
                       if k in row)
            row["best_torch_ms"] = best
            if "ours_ms" in row:
                row["ratio_vs_best"] = row["ours_ms"] / best
                row["activation_ratio"] = row["ours_activations"] / max(
                    1, row["torch_activation_peak"])
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{'model':14} {'batch':>5} {'ours ms':>9} {'eager':>8} {'graph':>8} {'compile':>8}"
          f" {'ours/best':>9} {'ours act MiB':>12} {'torch act MiB':>13} {'act ratio':>9}")
    for r in rows:
        if "ours_ms" not in r:
            print(f"{r['model']:14} {r['batch']:>5}  ours failed: {r.get('error')}")
            continue
        comp = r.get("torch_compile_ms")
        print(f"{r['model']:14} {r['batch']:>5} {r['ours_ms']:9.3f} {r['eager_ms']:8.3f} "
              f"{r['cuda_graph_ms']:8.3f} {comp if comp is not None else float('nan'):8.3f} "
              f"{r['ratio_vs_best']:9.3f} {r['ours_activations'] / 2**20:12.1f} "
              f"{r['torch_activation_peak'] / 2**20:13.1f} {r['activation_ratio']:9.3f}")
    json.dump(rows, open(os.path.join(a.out, "bench_vs_torch.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
