# CI's time budget, sourced by the scripts .ci/run calls. XOPT_CI_START (set by .ci/run) is when CI
# began; CI stops at 90 minutes, and the scripts plan to end by 85.
#   ci_seconds_left: seconds to the 85-minute mark (prints nothing outside CI)
#   ci_full_build_seconds: one full build of the tree on CI's two cores (gcc RelWithDebInfo with
#     CUDA measured at 38 min on 2026-12-02, rounded up)
ci_full_build_seconds=$((40 * 60))
ci_seconds_left() {
  [[ -n "${XOPT_CI_START:-}" ]] && echo $((XOPT_CI_START + 85 * 60 - $(date +%s)))
  return 0
}
