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
#   offload      ResNet-50 b32, BERT-base b1 and b32 planned with --mem-budget (50% and 25% of the
#                parameters on top of the activations; and 50% of parameters + arena as one
#                figure), plan-info, then `xopt bench` (offloaded vs resident, outputs compared)
#   group        ResNet-50, MobileNetV2 and BERT-base (batch 1) planned into one shared arena, then
#                `xopt bench-group` (each member against its solo run, memory measured)
#   tune         the carried shared models planned with --tune (algorithm choices stored in the
#                model), plan-info listing them, then `xopt bench` reusing them vs searching again
#   sanitize     the GPU tests under compute-sanitizer (SANITIZE_TOOLS, SANITIZE_FILTER)
#   lowp         the carried shared models and resnet50, bert_base (export first) converted with
#                --passes=fold,fuse,precision,plan --precision fp16 and bf16 at batch 1 (LOWP_MODES,
#                LOWP_MODELS select), each validated on the GPU against the CPU executor running the
#                converted model (same precision) and against the original fp32 model; the table
#                (lowp.md) has every output's max|a-b| / max|ref| and pass at the type's tolerance
#   convert      convert time and peak RSS (the process's, children's ru_maxrss) of
#                `xopt --passes=fold,fuse,precision,plan --precision fp16|bf16|mixed` on the CPU for
#                resnet50 and bert_base (export first), against fp32 fold,fuse,plan; convert.md
#   python       the Python package (BUNDLE_PYTHON=1 make_bundle.sh) on PyTorch CUDA tensors:
#                bench/gpu/python_dlpack.py (no host round trip, CUPTI-counted copies, timing) and
#                the pytest suite's GPU cases
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

# The exported models, when an earlier call on this (still warm) machine did not leave them.
need_models() {
  [ -f "$W/models/bert_base/model.onnx" ] || python3 bench/gpu/export_models.py "$W/models" \
    resnet50 mobilenet_v2 bert_base 2>&1 | grep -v Warning | tee -a "$OUT/log.txt"
}

for step in "$@"; do
  t0=$(date +%s)
  case $step in
    export)
      log "export"
      python3 bench/gpu/export_models.py "$W/models" resnet18 resnet50 mobilenet_v2 bert_base \
        shufflenet_v2_x1_0 squeezenet1_1 \
        2>&1 | grep -v Warning | tee -a "$OUT/log.txt"
      for m in resnet18 mobilenet_v2 shufflenet_v2_x1_0 squeezenet1_1; do  # when not carried (64 MiB): the same architectures
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
    offload)
      log "offload"
      need_models
      for spec in resnet50:32 bert_base:1 bert_base:32; do
        m=${spec%%:*}; b=${spec##*:}
        src="$W/models/$m/model.onnx"
        "$X" --passes=fold,fuse,plan --device cuda --batch "$b" -q "$src" \
          -o "$W/$m.b$b.res.onnx" > /dev/null 2>&1
        # 50% of parameters + arena, read off the resident plan.
        half=$(python3 -c "import onnx,json,sys; m=onnx.load(sys.argv[1], load_external_data=False); \
p=json.loads({e.key: e.value for e in m.metadata_props}['xopt.memory_plan']); \
print(int((p['breakdown']['parameters'] + p['arena_bytes']) * 0.5))" "$W/$m.b$b.res.onnx")
        for budget in 50% 25% "$half"; do
          tag=${budget%\%}
          echo "---- $m batch $b --mem-budget $budget" >> "$OUT/offload.txt"
          "$X" --passes=fold,fuse,plan --device cuda --batch "$b" --mem-budget "$budget" "$src" \
            -o "$W/$m.b$b.off$tag.onnx" >> "$OUT/offload.txt" 2>&1
          rc=$?; echo "exit $rc" >> "$OUT/offload.txt"
          [ $rc -eq 0 ] || continue
          "$X" plan-info "$W/$m.b$b.off$tag.onnx" | grep -A3 "^offload" >> "$OUT/offload.txt"
          "$X" bench --device cuda "$W/$m.b$b.off$tag.onnx" --iterations 50 \
            --json "$W/off_${m}_b${b}_$tag.json" >> "$OUT/offload.txt" 2>&1
          echo "exit $?" >> "$OUT/offload.txt"
        done
      done
      grep -E "^----|^exit|^offload|device total|short" "$OUT/offload.txt" | tee -a "$OUT/log.txt" ;;
    group)
      log "group"
      need_models
      g="$W/group"; mkdir -p "$g"
      for m in resnet50 mobilenet_v2 bert_base; do cp "$W/models/$m/model.onnx" "$g/$m.onnx"; done
      "$X" --passes=fold,fuse,plan --device cuda --batch 1 "$g/resnet50.onnx" \
        --shared-arena "$g/mobilenet_v2.onnx" "$g/bert_base.onnx" --report "$g/report" \
        > "$OUT/group.txt" 2>&1
      echo "exit $?" >> "$OUT/group.txt"
      "$X" bench-group --device cuda "$g/resnet50.opt.onnx" "$g/mobilenet_v2.opt.onnx" \
        "$g/bert_base.opt.onnx" --json "$OUT/group.json" >> "$OUT/group.txt" 2>&1
      echo "exit $?" >> "$OUT/group.txt"
      tail -n 16 "$OUT/group.txt" | tee -a "$OUT/log.txt" ;;
    tune)
      log "tune"
      for d in "$G"/shared/models/*/; do
        m=$(basename "$d")
        echo "---- $m" >> "$OUT/tune.txt"
        "$X" --passes=fold,fuse,plan --device cuda --batch 1 --tune "$d/model.onnx" \
          -o "$W/$m.tuned.onnx" >> "$OUT/tune.txt" 2>&1
        echo "exit $?" >> "$OUT/tune.txt"
        "$X" plan-info "$W/$m.tuned.onnx" 2>&1 | grep -iA4 "algorithm" >> "$OUT/tune.txt"
        for again in "" --tune; do
          echo "-- bench $again" >> "$OUT/tune.txt"
          "$X" bench --device cuda "$W/$m.tuned.onnx" --iterations 50 $again >> "$OUT/tune.txt" 2>&1
          echo "exit $?" >> "$OUT/tune.txt"
        done
      done
      grep -E "^----|^--|^exit|algorithm|reused|median" "$OUT/tune.txt" | tee -a "$OUT/log.txt" ;;
    sanitize)
      # The GPU tests under NVIDIA's compute-sanitizer (the device's own, when it has one): each
      # tool in SANITIZE_TOOLS (default memcheck with leak checking, then racecheck on our kernels'
      # shared memory), on the tests SANITIZE_FILTER selects; any report fails the tool's run.
      log "sanitize"
      CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
      if [ -z "$CS" ]; then
        echo "no compute-sanitizer on this machine" | tee -a "$OUT/log.txt"
      else
        for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
          extra=""
          [ "$tool" = memcheck ] && extra="--leak-check full"
          echo "---- $tool" >> "$OUT/sanitize.txt"
          timeout "${SANITIZE_SECONDS:-240}" "$CS" --tool "$tool" $extra --error-exitcode 9 \
            "$G/bin/xopt_cuda_tests" --gtest_color=no --gtest_filter="${SANITIZE_FILTER:-*}" \
            >> "$OUT/sanitize.txt" 2>&1
          echo "exit $?" >> "$OUT/sanitize.txt"
        done
        grep -E "^----|^exit|ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/sanitize.txt" \
          | tee -a "$OUT/log.txt"
      fi ;;
    lowp)
      # Each model in fp16 and bf16: convert (the precision pass), then two validations on the
      # GPU: (1) GPU vs the CPU executor on the same converted model, (2) GPU running the converted
      # model vs the CPU running the fp32 original, on the same seeded random inputs. Tolerances
      # (relative to max|ref|): fp16 1e-2 / 3e-2, bf16 5e-2 / 1e-1 (same precision / vs fp32).
      log "lowp"
      need_models
      : > "$OUT/lowp.txt"
      echo "| model | type | convert | GPU vs CPU (same type) | GPU vs fp32 | worst rel (same) | worst rel (fp32) |" > "$OUT/lowp.md"
      echo "|---|---|---|---|---|---|---|" >> "$OUT/lowp.md"
      models=${LOWP_MODELS:-"$(cd "$G/shared/models" && ls -d */ | tr -d /) resnet50 bert_base"}
      for m in $models; do
        src="$G/shared/models/$m/model.onnx"
        [ -f "$src" ] || src="$W/models/$m/model.onnx"
        [ -f "$src" ] || { echo "---- $m: no model" >> "$OUT/lowp.txt"; continue; }
        for mode in ${LOWP_MODES:-fp16 bf16}; do
          case $mode in fp16 | mixed) same=1e-2; vs32=3e-2 ;; *) same=5e-2; vs32=1e-1 ;; esac
          dst="$W/$m.$mode.opt.onnx"
          echo "---- $m $mode" >> "$OUT/lowp.txt"
          "$X" --passes=fold,fuse,precision,plan --precision "$mode" --device cuda --batch 1 \
            "$src" -o "$dst" >> "$OUT/lowp.txt" 2>&1
          conv=$?; echo "exit $conv (convert)" >> "$OUT/lowp.txt"
          r1=skipped r2=skipped w1=- w2=-
          if [ $conv -eq 0 ]; then
            "$X" validate --device cuda "$dst" --random-inputs --batch 1 --rtol "$same" --atol 0 \
              > "$W/lowp_same.txt" 2>&1
            r1=$?; cat "$W/lowp_same.txt" >> "$OUT/lowp.txt"; echo "exit $r1 (same)" >> "$OUT/lowp.txt"
            "$X" validate --device cuda "$src" "$dst" --random-inputs --batch 1 --rtol "$vs32" \
              --atol 0 > "$W/lowp_32.txt" 2>&1
            r2=$?; cat "$W/lowp_32.txt" >> "$OUT/lowp.txt"; echo "exit $r2 (fp32)" >> "$OUT/lowp.txt"
            # The worst "max rel" (4th column of validate's table rows) of the GPU comparisons.
            worst() { awk '$NF == "ok" || /MISMATCH/ {print $4}' "$1" | grep -v '^-$' | sort -g | tail -n 1; }
            w1=$(worst "$W/lowp_same.txt"); w2=$(worst "$W/lowp_32.txt")
            r1=$([ "$r1" = 0 ] && echo "pass ($same)" || echo "FAIL ($r1)")
            r2=$([ "$r2" = 0 ] && echo "pass ($vs32)" || echo "FAIL ($r2)")
          fi
          echo "| $m | $mode | exit $conv | $r1 | $r2 | ${w1:--} | ${w2:--} |" >> "$OUT/lowp.md"
        done
      done
      cat "$OUT/lowp.md" | tee -a "$OUT/log.txt" ;;
    convert)
      log "convert"
      need_models
      echo "| model | precision | exit | seconds | peak RSS MiB | model file MiB |" > "$OUT/convert.md"
      echo "|---|---|---|---|---|---|" >> "$OUT/convert.md"
      for m in resnet50 bert_base; do
        src="$W/models/$m/model.onnx"
        for p in fp32 fp16 bf16 mixed; do
          python3 - "$X" "$src" "$p" "$W/$m.conv.$p.onnx" "$m" >> "$OUT/convert.md" 2>> "$OUT/convert.txt" <<'PY'
import os, resource, subprocess, sys, time
x, src, p, dst, m = sys.argv[1:]
t = time.time()
r = subprocess.run([x, "--passes=fold,fuse,precision,plan", "--precision", p, "--batch", "1",
                    src, "-o", dst],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
dt = time.time() - t
sys.stderr.write(f"---- {m} {p}\n" + r.stderr[-3000:])
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"| {m} | {p} | {r.returncode} | {dt:.2f} | {rss:.1f} | {os.path.getsize(src) / 2**20:.1f} |")
PY
        done
      done
      cat "$OUT/convert.md" | tee -a "$OUT/log.txt" ;;
    python)
      log "python"
      need_models
      export LD_LIBRARY_PATH=$G/pylib/lib:$G/lib PYTHONPATH=$G/python
      PYTHONUNBUFFERED=1 python3 bench/gpu/python_dlpack.py --models "$W/models" \
        --out "$OUT/python_dlpack.json" > "$OUT/python.txt" 2>&1
      echo "exit $?" >> "$OUT/python.txt"
      XOPT_SOURCE_DIR=$ROOT XOPT_CLI=$X XVIZ_CLI=/bin/false python3 -m pytest -q -p no:cacheprovider tests/python/test_xopt.py \
        -k "cuda" >> "$OUT/python.txt" 2>&1
      echo "exit $?" >> "$OUT/python.txt"
      tail -n 12 "$OUT/python.txt" | tee -a "$OUT/log.txt" ;;
    *) echo "unknown step $step" ;;
  esac
  echo "   ($step: $(( $(date +%s) - t0 )) s)" | tee -a "$OUT/log.txt"
done
