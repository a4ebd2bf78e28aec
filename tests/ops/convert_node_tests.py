# Test tooling (not run by CTest): converts the ONNX node tests down to older opsets with
# onnx.version_converter, so the registry's older signatures (attribute axes, Slice/Pad/Clip
# attributes, Resize-10, ...) are checked against the same expected outputs:
#
#   python3 tests/ops/convert_node_tests.py 7 9 10 11 12 13      # writes /tmp/opsconv/<opset>/
#   XOPT_OPS_EXTRA_DIRS=/tmp/opsconv/7:/tmp/opsconv/13 \
#     build/tests/ops/xopt_ops_tests --gtest_filter=OpsConformance.ExtraDirsFromEnvironment
import onnx, os, sys, glob
from onnx import version_converter
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../shared/onnx-conformance/node')
out = '/tmp/opsconv'
targets = [int(x) for x in sys.argv[1:]] or [7, 9, 10, 11, 12, 13]
ok = {t: 0 for t in targets}
for d in sorted(glob.glob(src + '/test_*')):
    try:
        m = onnx.load(d + '/model.onnx')
    except Exception:
        continue
    if any(n.domain not in ('', 'ai.onnx') for n in m.graph.node):
        continue
    v = [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')][0]
    for t in targets:
        if t >= v:
            continue
        try:
            c = version_converter.convert_version(m, t)
            onnx.checker.check_model(c)
        except Exception:
            continue
        od = f'{out}/{t}/{os.path.basename(d)}'
        os.makedirs(od, exist_ok=True)
        onnx.save(c, od + '/model.onnx')
        if not os.path.exists(od + '/test_data_set_0'):
            os.symlink(d + '/test_data_set_0', od + '/test_data_set_0')
        ok[t] += 1
print(ok)
