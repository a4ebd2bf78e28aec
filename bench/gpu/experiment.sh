#!/usr/bin/env bash
# One experiment on the GPU machine, from the repository root there, with .gpu/ carried
# (bench/gpu/make_bundle.sh made it here). Steps, in the order given:
#   export       resnet18, resnet50, mobilenet_v2, bert_base (export_models.py); resnet18 and
#                mobilenet_v2 also stand in for the shared models of those names (not carried)
#   tests        the GPU test binary (every case against its CPU twin; TEST_FILTER selects)
#   conformance  `xopt conformance --device cuda` on the ONNX node tests
#   shared       every shared model: fold,fuse,plan --device cuda --validate, then validate on the
#                GPU against PyTorch's stored output
#   big          resnet50, bert_base at batch 1 and 32: the same validation
#   bench        bench_vs_torch.py (BENCH_FLAGS adds e.g. --compile, --xopt-flags=--tune)
#   bench-tf32   the same with TF32 allowed on both sides (bench_tf32.txt, bench_vs_torch_tf32.json)
#   profile      `xopt bench --profile` on the batch-32 models the big step planned
# Results go to $OUT (at most 8 files come back).
set -uo pipefail
ROOT=$PWD
G=$ROOT/.gpu
export LD_LIBRARY_PATH=$G/lib
export XOPT_SHARED_DIR=$G/shared
X=$G/bin/xopt
OUT=${OUT:-/tmp/xopt-out}
W=/tmp/xopt-work
mkdir -p "$OUT" "$W"
[ -d "$G/bin" ] || (cd "$G" && tar xJf binlib.tar.xz)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/log.txt"
log() { echo "== $*" | tee -a "$OUT/log.txt"; }

for step in "$@"; do
  t0=$(date +%s)
  case $step in
    export)
      log "export"
      python3 bench/gpu/export_models.py "$W/models" resnet18 resnet50 mobilenet_v2 bert_base \
        2>&1 | grep -v Warning | tee -a "$OUT/log.txt"
      for m in resnet18 mobilenet_v2; do  # when not carried (64 MiB): the same architectures
        [ -d "$G/shared/models/$m" ] || cp -r "$W/models/$m" "$G/shared/models/"
      done ;;
    tests)
      log "tests"
      "$G/bin/xopt_cuda_tests" --gtest_color=no --gtest_filter="${TEST_FILTER:-*}" \
        > "$OUT/tests.txt" 2>&1
      tail -n 3 "$OUT/tests.txt" | tee -a "$OUT/log.txt" ;;
    conformance)
      log "conformance"
      tar xJf "$G/node.tar.xz" -C "$W"
      "$X" conformance --device cuda "$W/node" --details > "$OUT/conformance.txt" 2>&1
      grep -iE "^total|passed" "$OUT/conformance.txt" | tail -n 3 | tee -a "$OUT/log.txt" ;;
    shared)
      log "shared"
      for d in "$G"/shared/models/*/; do
        m=$(basename "$d")
        echo "---- $m" >> "$OUT/shared.txt"
        "$X" --passes=fold,fuse,plan --device cuda --batch 1 --validate "$d/model.onnx" \
          -o "$W/$m.opt.onnx" >> "$OUT/shared.txt" 2>&1
        echo "exit $?" >> "$OUT/shared.txt"
        "$X" validate --device cuda "$W/$m.opt.onnx" --data "$d/test_data_set_0" \
          >> "$OUT/shared.txt" 2>&1
        echo "exit $?" >> "$OUT/shared.txt"
        "$X" bench --device cuda "$W/$m.opt.onnx" --iterations 50 >> "$OUT/shared.txt" 2>&1
      done
      grep -E "^----|^exit|validation|median" "$OUT/shared.txt" | tee -a "$OUT/log.txt" ;;
    big)
      log "big"
      for m in resnet50 bert_base mobilenet_v2; do
        for b in 1 32; do
          echo "---- $m batch $b" >> "$OUT/big.txt"
          "$X" --passes=fold,fuse,plan --device cuda --batch "$b" --validate --random-inputs \
            "$W/models/$m/model.onnx" -o "$W/$m.b$b.opt.onnx" >> "$OUT/big.txt" 2>&1
          echo "exit $?" >> "$OUT/big.txt"
        done
        "$X" validate --device cuda "$W/$m.b1.opt.onnx" --data "$W/models/$m/test_data_set_0" \
          >> "$OUT/big.txt" 2>&1
        echo "exit $?" >> "$OUT/big.txt"
      done
      grep -E "^----|^exit|validation" "$OUT/big.txt" | tee -a "$OUT/log.txt" ;;
    bench)
      log "bench"
      PYTHONUNBUFFERED=1 python3 bench/gpu/bench_vs_torch.py --xopt "$X" --models "$W/models" \
        --out "$W/bench" ${BENCH_FLAGS:-} > "$OUT/bench.txt" 2>&1
      cp "$W/bench/bench_vs_torch.json" "$OUT/" 2>/dev/null
      tail -n 8 "$OUT/bench.txt" | tee -a "$OUT/log.txt" ;;
    bench-tf32)
      log "bench-tf32"
      PYTHONUNBUFFERED=1 python3 bench/gpu/bench_vs_torch.py --xopt "$X" --models "$W/models" \
        --out "$W/bench_tf32" --tf32 ${BENCH_FLAGS:-} > "$OUT/bench_tf32.txt" 2>&1
      cp "$W/bench_tf32/bench_vs_torch.json" "$OUT/bench_vs_torch_tf32.json" 2>/dev/null
      tail -n 8 "$OUT/bench_tf32.txt" | tee -a "$OUT/log.txt" ;;
    profile)
      log "profile"
      for m in resnet50 bert_base mobilenet_v2; do
        [ -f "$W/$m.b32.opt.onnx" ] || continue
        echo "---- $m batch 32" >> "$OUT/profile.txt"
        "$X" bench --device cuda "$W/$m.b32.opt.onnx" --iterations 50 --profile \
          ${PROFILE_FLAGS:-} >> "$OUT/profile.txt" 2>&1
        echo "exit $?" >> "$OUT/profile.txt"
      done
      grep -E "^----|^exit|^gpu|^profile" "$OUT/profile.txt" | tee -a "$OUT/log.txt" ;;
    *) echo "unknown step $step" ;;
  esac
  echo "   ($step: $(( $(date +%s) - t0 )) s)" | tee -a "$OUT/log.txt"
done
