"""Generates tests/recurrent_quant/data/qoperator/: onnxruntime's com.microsoft quantized operators
in QOperator form (QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearSigmoid,
QLinearConcat, QLinearSoftmax, QGemm) and QLinearConv, with onnxruntime 1.32's outputs (x86-64,
its MLAS kernels).

Bit-exactness is decided by a few elements in a million (a tie broken by the order of two fused
multiply-adds, a product rounded in float instead of double), which random tiny tensors never
hit. So the elementwise and 1x1-convolution cases are mined: a large random input goes through
onnxruntime, the elements where a plausible other formula (the ONNX reference's, the other FMA
order, double instead of float) gives another integer are kept, with a few ordinary ones, and the
case is that small tensor (the script prints how many it found). Breaking QLinearAdd's FMA order
or QLinearSoftmax's floor(1 / y_scale) fails a case; the Sigmoid table through std::exp and the
pool's scale in another order give the same integers on these cases.

    python3 tests/recurrent_quant/gen/gen_qoperator.py
"""

import os
import shutil

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import gen_cases
from gen_cases import case

SUB = "qoperator"
MS = "com.microsoft"
rng = np.random.default_rng(20261207)
f32 = np.float32


def run_one(node, feeds, inits, out_type):
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in feeds.items()]
    from onnx import numpy_helper
    graph = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("y", out_type, None)],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def fma(a, b, c):
    """float32 fused multiply-add through float64 (a float32 product is exact there)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(f32)


def qrange(dt):
    i = np.iinfo(dt)
    return i.min, i.max


def mine(want, others, n_plain=6):
    """Indices where any of `others` differs from `want`, plus a few where none does."""
    diff = np.zeros(want.shape, bool)
    for o in others:
        diff |= o != want
    hit = np.flatnonzero(diff)[:24]
    plain = np.flatnonzero(~diff)
    keep = np.concatenate([hit, rng.choice(plain, size=min(n_plain, plain.size), replace=False)])
    return keep, hit.size


def binary(op, dt):
    """Tries scales until some element tells the formulas apart (at most 40 tries)."""
    for attempt in range(40):
        found = binary_try(op, dt, force=attempt == 39)
        if found:
            break
    print(op, dt.__name__, "elements that tell the formulas apart:", found)


def binary_try(op, dt, force):
    lo, hi = qrange(dt)
    n = 1 << 18
    a = rng.integers(lo, hi + 1, n).astype(dt)
    b = rng.integers(lo, hi + 1, n).astype(dt)
    sa, sb = f32(10 ** rng.uniform(-4, 0)), f32(10 ** rng.uniform(-4, 0))
    za, zb, zc = (dt(rng.integers(lo, hi + 1)) for _ in range(3))
    sc = f32((sa + sb) * rng.uniform(0.8, 1.6)) if op == "QLinearAdd" else f32(sa * sb * rng.uniform(60, 200))
    consts = dict(a_scale=np.array(sa), a_zero_point=np.array(za), b_scale=np.array(sb),
                  b_zero_point=np.array(zb), c_scale=np.array(sc), c_zero_point=np.array(zc))
    names = ["A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "c_scale", "c_zero_point"]
    node = helper.make_node(op, names, ["y"], domain=MS)
    want = run_one(node, dict(A=a, B=b), consts, helper.np_dtype_to_tensor_dtype(np.dtype(dt)))
    da, db = a.astype(np.float64) - int(za), b.astype(np.float64) - int(zb)
    if op == "QLinearAdd":
        ref = np.rint((sa * da + sb * db) / sc) + int(zc)  # the ONNX-style formula, in double
        ra, rb = f32(sa / sc), f32(sb / sc)
        fixed = f32(f32(zc) - f32(f32(ra * f32(za)) + f32(rb * f32(zb))))
        swapped = np.rint(fma(b.astype(f32), rb, fma(a.astype(f32), ra, fixed)))
        others = [np.clip(ref, lo, hi), np.clip(swapped, lo, hi)]
        label = "ties_of_the_fma_order"
    else:
        ref = np.rint(da * db * (float(sa) * float(sb) / float(sc))) + int(zc)  # in double
        others = [np.clip(ref, lo, hi)]
        label = "ratio_in_float"
    keep, hits = mine(want, others)
    if hits == 0 and not force:
        return 0
    case(SUB, f"{op.lower()}_{dt.__name__}_{label}", op,
         [("A", a[keep]), ("a_scale", consts["a_scale"]), ("a_zero_point", consts["a_zero_point"]),
          ("B", b[keep]), ("b_scale", consts["b_scale"]), ("b_zero_point", consts["b_zero_point"]),
          ("c_scale", consts["c_scale"]), ("c_zero_point", consts["c_zero_point"])], ["y"], 17, domain=MS)
    # Broadcast: B constant along the innermost run ([1, C, 1, 1]), and A a scalar.
    bshape = [("per_channel", (2, 3, 4, 5), (1, 3, 1, 1)), ("scalar_first", (), (2, 3, 4)),
              ("rows", (4, 5), (5,))]
    for tag, sa_shape, sb_shape in bshape:
        case(SUB, f"{op.lower()}_{dt.__name__}_broadcast_{tag}", op,
             [("A", rng.integers(lo, hi + 1, sa_shape).astype(dt)), ("a_scale", consts["a_scale"]),
              ("a_zero_point", consts["a_zero_point"]), ("B", rng.integers(lo, hi + 1, sb_shape).astype(dt)),
              ("b_scale", consts["b_scale"]), ("b_zero_point", consts["b_zero_point"]),
              ("c_scale", consts["c_scale"]), ("c_zero_point", consts["c_zero_point"])], ["y"], 17, domain=MS)
    return hits


def qlinear_conv_requantize():
    """1x1 convolutions with biases that take acc + B past 2^24, where MlasRequantizeOutput's
    float(acc) drops low bits; kept are the pixels where requantizing the exact sum in double differs
    (none, with onnxruntime 1.32 on this shape: the case then only covers large biases; the
    double-versus-float difference showed on PP-OCR's quantized classifier, in the corpus)."""
    c, m, p = 16, 8, 1 << 14
    x = rng.integers(0, 256, (1, c, 1, p)).astype(np.uint8)
    w = rng.integers(-128, 128, (m, c, 1, 1)).astype(np.int8)
    xs, ws = f32(0.02), (10 ** rng.uniform(-3.2, -2.8, m)).astype(f32)
    ys = f32(6.0)
    bias = rng.integers(-3 * 10**7, 3 * 10**7, m).astype(np.int32)
    xz, yz = np.uint8(rng.integers(0, 256)), np.uint8(128)
    consts = dict(x_scale=np.array(xs), x_zero_point=np.array(xz), w=w, w_scale=ws,
                  w_zero_point=np.zeros(m, np.int8), y_scale=np.array(ys), y_zero_point=np.array(yz), B=bias)
    names = ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point", "B"]
    node = helper.make_node("QLinearConv", names, ["y"])
    want = run_one(node, dict(x=x), consts, TensorProto.UINT8)
    acc = np.einsum("mc,cp->mp", w[:, :, 0, 0].astype(np.int64), x[0, :, 0, :].astype(np.int64) - int(xz))
    acc += bias[:, None]
    mult = (xs * ws / ys).astype(f32).astype(np.float64)
    double = np.clip(np.rint(acc * mult[:, None]) + int(yz), 0, 255)
    diff = (double != want[0, :, 0, :]).any(axis=0)
    print("QLinearConv pixels that tell the formulas apart:", int(diff.sum()), "of", p)
    keep = np.concatenate([np.flatnonzero(diff)[:16], rng.choice(np.flatnonzero(~diff), 8, replace=False)])
    case(SUB, "qlinear_conv_bias_past_2_24", "QLinearConv",
         [("x", x[:, :, :, keep])] + [(k, consts[k]) for k in names[1:]], ["y"], 17)


def unary(dt):
    lo, hi = qrange(dt)
    every = np.arange(256).astype(np.uint8).view(dt).reshape(16, 16)
    for k in range(3):
        zx = dt(rng.integers(lo, hi + 1))
        ins = [("X", every), ("x_scale", np.array(f32(rng.uniform(0.01, 0.1)))), ("x_zero_point", np.array(zx)),
               ("y_scale", np.array(f32(1 / 256 if dt == np.uint8 else 1 / 255))),
               ("y_zero_point", np.array(dt(lo)))]
        case(SUB, f"qlinear_sigmoid_{dt.__name__}_{k}", "QLinearSigmoid", ins, ["y"], 17, domain=MS)
    for k, last in enumerate((0, 1, 0)):
        xs = f32(10 ** rng.uniform(-2, 0))
        ins = [("X", rng.integers(lo, hi + 1, (2, 6, 5, 7)).astype(dt)), ("x_scale", np.array(xs)),
               ("x_zero_point", np.array(dt(rng.integers(lo, hi + 1)))),
               ("y_scale", np.array(f32(xs * rng.uniform(0.02, 0.2)))), ("y_zero_point", np.array(dt(0)))]
        case(SUB, f"qlinear_global_average_pool_{dt.__name__}_{'nhwc' if last else 'nchw'}_{k}",
             "QLinearGlobalAveragePool", ins, ["y"], 17, domain=MS, channels_last=last)
    for k in range(2):
        ys, yz = f32(10 ** rng.uniform(-2, 0)), dt(rng.integers(lo, hi + 1))
        ins = [("y_scale", np.array(ys)), ("y_zero_point", np.array(yz))]
        for i, (same, shape) in enumerate(((False, (2, 3, 5)), (True, (2, 4, 5)), (False, (2, 1, 5)))):
            s = ys if same else f32(10 ** rng.uniform(-2, 0))
            z = yz if same else dt(rng.integers(lo, hi + 1))
            ins += [(f"X{i}", rng.integers(lo, hi + 1, shape).astype(dt)), (f"s{i}", np.array(s)), (f"z{i}", np.array(z))]
        case(SUB, f"qlinear_concat_{dt.__name__}_copy_and_requantize_{k}", "QLinearConcat", ins, ["y"], 17,
             domain=MS, axis=1)


def softmax():
    for k, (opset, axis, shape, ys) in enumerate([(11, 1, (3, 10), 1 / 256), (11, 1, (2, 3, 4), 0.0039),
                                                  (13, 1, (2, 5, 3), 0.0041), (13, -1, (4, 100), 1 / 256),
                                                  (13, 0, (6, 2), 0.0037)]):
        ins = [("X", rng.integers(0, 256, shape).astype(np.uint8)), ("x_scale", np.array(f32(rng.uniform(0.02, 0.3)))),
               ("x_zero_point", np.array(np.uint8(rng.integers(0, 256)))), ("y_scale", np.array(f32(ys))),
               ("y_zero_point", np.array(np.uint8(k)))]
        case(SUB, f"qlinear_softmax_uint8_opset{opset}_axis{axis}_{k}", "QLinearSoftmax", ins, ["y"], 17,
             domain=MS, axis=axis, node_attrs={"opset": opset})


def qgemm():
    for ta_t, tb_t in ((np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)):
        for k, (ta, tb, per_col, quant, bias) in enumerate([(0, 0, False, True, True), (1, 0, True, True, False),
                                                            (0, 1, True, False, True), (0, 0, False, False, False)]):
            lo, hi = qrange(ta_t)
            blo, bhi = qrange(tb_t)
            m, kk, n = 3, 32, 5
            ins = [("A", rng.integers(lo, hi + 1, (kk, m) if ta else (m, kk)).astype(ta_t)),
                   ("a_scale", np.array(f32(10 ** rng.uniform(-2, -1)))),
                   ("a_zero_point", np.array(ta_t(rng.integers(lo, hi + 1)))),
                   ("B", rng.integers(blo, bhi + 1, (n, kk) if tb else (kk, n)).astype(tb_t)),
                   ("b_scale", (10 ** rng.uniform(-3, -1, n)).astype(f32) if per_col else np.array(f32(0.01))),
                   ("b_zero_point", (np.zeros(n, tb_t) if tb_t == np.int8 else rng.integers(0, 256, n).astype(tb_t))
                    if per_col else np.array(tb_t(0 if tb_t == np.int8 else 128))),
                   ("C", rng.integers(-3000, 3000, n).astype(np.int32) if bias else None)]
            if quant:
                ins += [("y_scale", np.array(f32(rng.uniform(0.5, 3)))), ("y_zero_point", np.array(ta_t(rng.integers(lo, hi + 1))))]
            name = f"qgemm_{ta_t.__name__}_{tb_t.__name__}_ta{ta}_tb{tb}{'_per_column' if per_col else ''}" \
                   f"{'_requantized' if quant else '_float'}{'_bias' if bias else ''}"
            case(SUB, name, "QGemm", ins, ["y"], 17, domain=MS, initializers=("B",), transA=ta, transB=tb,
                 alpha=float(rng.uniform(0.5, 2)))


def main():
    d = os.path.join(gen_cases.ROOT, SUB)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    for dt in (np.uint8, np.int8):
        binary("QLinearAdd", dt)
        binary("QLinearMul", dt)
        unary(dt)
    qlinear_conv_requantize()
    softmax()
    qgemm()


if __name__ == "__main__":
    main()
