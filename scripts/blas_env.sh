# Sourced by the test scripts. Debian's OpenBLAS (0.3.21) picks its Haswell kernels on AVX2 AMD
# EPYC virtual machines and computes wrong results there: the ONNX light_squeezenet model's
# softmax comes out all 0 instead of 0.001, and equal GEMMs differ in the last bit between two
# runs of one model (seen 2026-12-02; both right with OPENBLAS_CORETYPE=Sandybridge). Workplaces
# that know the processor set OPENBLAS_CORETYPE themselves; a value already set is kept as it is.
if [[ -z "${OPENBLAS_CORETYPE:-}" ]] && grep -q 'AMD EPYC' /proc/cpuinfo 2>/dev/null; then
  export OPENBLAS_CORETYPE=Sandybridge
  echo "blas_env: OPENBLAS_CORETYPE unset on an AMD EPYC: using OpenBLAS's Sandybridge kernels" >&2
fi
