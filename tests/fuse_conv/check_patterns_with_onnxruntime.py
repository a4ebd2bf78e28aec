#!/usr/bin/env python3
"""Runs xopt --passes=fold,fuse on small models covering every rewrite of the fold and conv/gemm
fusion passes (and the activation, Pad, Cast and FusedMatMul fusions), and checks each result with onnx's checker and onnxruntime (CPU, its own graph
optimizations off) against the original: same outputs within rtol 1e-4 of their scale / atol 1e-5
(close() below), the expected fused ops present, and no more nodes than onnxruntime's own
extended optimization leaves.

Usage: check_patterns_with_onnxruntime.py PATH/TO/xopt [WORK_DIR]
"""
import collections
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import onnxruntime as ort
from ort_compare_rule import close  # noqa: E402 (beside this script)

rng = np.random.default_rng(0)


def init(name, shape, lo=-1.0, hi=1.0):
    return numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name)


def bn_inits(p, c):
    return [init(p + "s", [c], 0.5, 2.0), init(p + "b", [c]), init(p + "m", [c]),
            init(p + "v", [c], 0.1, 2.0)]


def bn(p, x, y):
    return helper.make_node("BatchNormalization", [x, p + "s", p + "b", p + "m", p + "v"], [y])


def model(name, nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m)  # fills in the outputs' shapes


def cases():
    N = helper.make_node
    yield "conv_bn_act", model("conv_bn_act", [
        N("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], group=2),
        bn("n1", "c1", "y1"),
        N("Relu", ["y1"], ["r1"]),
        N("ConvTranspose", ["r1", "w2"], ["c2"], group=2, strides=[2, 2], pads=[1, 1, 1, 1],
          output_padding=[1, 1]),
        bn("n2", "c2", "y2"),
        N("MaxPool", ["y2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        bn("n3", "p", "q"),
        N("Conv", ["q", "w3"], ["c3"], group=2),
        N("Add", ["c3", "k3"], ["a3"]),
        N("Clip", ["a3", "lo", "hi"], ["out1"]),
        N("Conv", ["x", "w4"], ["c4"], pads=[1, 1, 1, 1]),
        N("Add", ["c4", "r1"], ["a4"]),
        N("LeakyRelu", ["a4"], ["out2"], alpha=0.2),
        N("Conv", ["x", "w5", "b5"], ["c5"]),
        N("HardSigmoid", ["c5"], ["out3"], alpha=0.3, beta=0.4),
        N("Conv", ["x", "w6"], ["c6"]),
        N("Sigmoid", ["c6"], ["out4"]),
        N("Conv", ["x", "w7"], ["c7"]),
        N("Tanh", ["c7"], ["out5"]),
    ], [("x", [2, 4, 6, 6])], ["out1", "out2", "out3", "out4", "out5"],
        [init("w1", [6, 2, 3, 3]), init("b1", [6])] + bn_inits("n1", 6) +
        [init("w2", [6, 3, 2, 2])] + bn_inits("n2", 6) + bn_inits("n3", 6) +
        [init("w3", [6, 3, 1, 1]), init("k3", [1, 6, 1, 1]),
         numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
         numpy_helper.from_array(np.array(0.5, np.float32), "hi"),
         init("w4", [6, 4, 3, 3]), init("w5", [3, 4, 1, 1]), init("b5", [3]),
         init("w6", [3, 4, 1, 1]), init("w7", [3, 4, 1, 1])]), {
        "com.microsoft.FusedConv": 6, "BatchNormalization": 0}

    # Residual Adds: alone (FusedConv with Z and no activation, which onnxruntime reads as
    # identity), after a BN, with a constant Z, before a Relu (one FusedConv with it); an Add that
    # broadcasts stays.
    yield "conv_residual", model("conv_residual", [
        N("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        bn("n1", "c1", "y1"),
        N("Add", ["y1", "x"], ["out1"]),
        N("Conv", ["out1", "w2", "b2"], ["c2"]),
        N("Add", ["x", "c2"], ["a2"]),
        N("Relu", ["a2"], ["out2"]),
        N("Conv", ["x", "w3"], ["c3"], group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
        N("Add", ["c3", "z3"], ["out3"]),
        N("Conv", ["x", "w4"], ["c4"]),
        N("Add", ["c4", "s"], ["out4"]),
    ], [("x", [2, 4, 6, 6]), ("s", [1, 4, 1, 1])], ["out1", "out2", "out3", "out4"],
        [init("w1", [4, 4, 3, 3])] + bn_inits("n1", 4) +
        [init("w2", [4, 4, 1, 1]), init("b2", [4]), init("w3", [4, 2, 3, 3]), init("z3", [2, 4, 3, 3]),
         init("w4", [4, 4, 1, 1])]), {
        "com.microsoft.FusedConv": 3, "Conv": 1, "Add": 1, "Relu": 0, "BatchNormalization": 0}

    acts = [("Relu", {}), ("Tanh", {}), ("Sigmoid", {}), ("LeakyRelu", {"alpha": 0.3}),
            ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("Elu", {"alpha": 0.7}), ("Selu", {}),
            ("ThresholdedRelu", {"alpha": 0.1}), ("Softplus", {}), ("Softsign", {})]
    nodes, outs = [], []
    for i, (op, attrs) in enumerate(acts):
        # Distinct alphas keep cse from merging the Gemms into one with many readers.
        nodes += [N("Gemm", ["a", "gw", "gb"], [f"g{i}"], transB=1, alpha=0.5 + i, beta=2.0),
                  N(op, [f"g{i}"], [f"o{i}"], **attrs)]
        outs.append(f"o{i}")
    yield "gemm_act", model("gemm_act", nodes, [("a", [5, 7])], outs,
                            [init("gw", [3, 7]), init("gb", [3])]), {
        "com.microsoft.FusedGemm": len(acts), "Gemm": 0}

    yield "gemm_bn_matmul", model("gemm_bn_matmul", [
        N("Gemm", ["a", "gw", "gc"], ["g"], transB=1, beta=0.5),
        bn("n1", "g", "o1"),
        N("MatMul", ["a", "mw"], ["m"]),
        bn("n2", "m", "o2"),
        N("MatMul", ["a", "mw2"], ["m2"]),
        N("Add", ["mb", "m2"], ["o3"]),
        N("Transpose", ["a"], ["at"], perm=[1, 0]),
        N("Transpose", ["tw"], ["twt"]),
        N("MatMul", ["twt", "at"], ["o4"]),
    ], [("a", [5, 7])], ["o1", "o2", "o3", "o4"],
        [init("gw", [3, 7]), init("gc", [5, 1])] + bn_inits("n1", 3) +
        [init("mw", [7, 4])] + bn_inits("n2", 4) +
        [init("mw2", [7, 4]), init("mb", [4]), init("tw", [7, 2])]), {
        "BatchNormalization": 0, "MatMul": 0, "Gemm": 4}

    yield "shapes", model("shapes", [
        N("Transpose", ["x"], ["t1"], perm=[0, 2, 3, 1]),
        N("Transpose", ["t1"], ["o1"], perm=[2, 0, 3, 1]),
        N("Shape", ["x"], ["s"]),
        N("Reshape", ["x", "s1"], ["r1"]),
        N("Reshape", ["r1", "s2"], ["o2"]),
        N("Identity", ["k"], ["k2"]),
        N("Mul", ["k2", "half"], ["k3"]),
        N("Add", ["o2", "k3"], ["o3"]),
    ], [("x", [2, 3, 4, 5])], ["o1", "o3"],
        [numpy_helper.from_array(np.array([6, 4, 5], np.int64), "s1"),
         numpy_helper.from_array(np.array([0, -1], np.int64), "s2"),
         init("k", [20]), numpy_helper.from_array(np.array(0.5, np.float32), "half")]), {
        "Transpose": 1, "Reshape": 1, "Identity": 0, "Mul": 0}

    # ShuffleNet's unit: x[:, :4] and x[:, 4:] (one Split), the channel shuffle of the Concat
    # (Concat on the next axis + one Reshape).
    yield "channel_shuffle_split", model("channel_shuffle_split", [
        N("Slice", ["x", "z", "four", "one"], ["a"]),
        N("Slice", ["x", "four", "big", "one"], ["b"]),
        N("Relu", ["b"], ["rb"]),
        N("Concat", ["a", "rb"], ["c"], axis=1),
        N("Reshape", ["c", "s5"], ["r"]),
        N("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
        N("Reshape", ["t", "s4"], ["o"]),
    ], [("x", [2, 8, 3, 5])], ["o"],
        [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in [
            ("z", [0]), ("four", [4]), ("one", [1]), ("big", [2**63 - 1]),
            ("s5", [2, 2, 4, 3, 5]), ("s4", [2, 8, 3, 5])]]), {
        "Slice": 0, "Split": 1, "Transpose": 0, "Reshape": 1, "Concat": 1}

    # Swish / SiLU after a Conv and CLIP's x * sigmoid(1.702 x): com.microsoft.QuickGelu.
    yield "swish", model("swish", [
        N("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        N("Sigmoid", ["c1"], ["s1"]),
        N("Mul", ["c1", "s1"], ["out1"]),
        N("Mul", ["x", "k"], ["t"]),
        N("Sigmoid", ["t"], ["s2"]),
        N("Mul", ["s2", "x"], ["out2"]),
    ], [("x", [2, 4, 6, 6])], ["out1", "out2"],
        [init("w1", [3, 4, 3, 3]), init("b1", [3]),
         numpy_helper.from_array(np.array(1.702, np.float32), "k")], opset=13), {
        "com.microsoft.QuickGelu": 2, "Sigmoid": 0, "Mul": 0}

    # HardSwish written out (Paddle2ONNX; opset 14: one HardSwish; opset 12: raised to 14, one
    # HardSwish; opset 11 with a Softmax over channels, which opset 13 changed: HardSigmoid + Mul)
    # and the hard-sigmoid gate Clip(x + 3, 0, 6) * (1/6) (HardSigmoid, which joins the Conv).
    def hard_swish(opset, softmax_axis=None):
        extra = [] if softmax_axis is None else [N("Softmax", ["out1"], ["out3"], axis=softmax_axis)]
        c = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
        return model(f"hard_swish_{opset}", [
            N("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
            N("Add", ["c1", "three"], ["a1"]),
            N("Clip", ["a1", "zero", "six"], ["r1"]),
            N("Mul", ["c1", "r1"], ["m1"]),
            N("Div", ["m1", "six"], ["out1"]),
            N("Conv", ["x", "w2"], ["c2"]),
            N("Add", ["three", "c2"], ["a2"]),
            N("Clip", ["a2", "zero", "six"], ["r2"]),
            N("Mul", ["r2", "sixth"], ["out2"]),
        ] + extra, [("x", [2, 4, 6, 6])], ["out1", "out2"] + (["out3"] if extra else []),
            [init("w1", [3, 4, 3, 3], -2, 2), init("b1", [3]), init("w2", [3, 4, 1, 1], -2, 2),
             c("three", 3.0), c("zero", 0.0), c("six", 6.0), c("sixth", 1 / 6)], opset=opset)
    yield "hard_swish_14", hard_swish(14), {
        "HardSwish": 1, "com.microsoft.FusedConv": 1, "Clip": 0, "Div": 0, "Add": 0}
    yield "hard_swish_12", hard_swish(12), {
        "HardSwish": 1, "com.microsoft.FusedConv": 1, "Clip": 0, "Div": 0, "Add": 0}
    yield "hard_swish_11", hard_swish(11, softmax_axis=1), {
        "HardSigmoid": 1, "Mul": 1, "com.microsoft.FusedConv": 1, "Clip": 0, "Div": 0, "Add": 0}

    # Cast chains: float -> double -> float (gone), float -> float (gone), bool -> int32 -> float
    # (one Cast).
    yield "casts", model("casts", [
        N("Relu", ["x"], ["r"]),
        N("Cast", ["r"], ["d"], to=TensorProto.DOUBLE),
        N("Cast", ["d"], ["f"], to=TensorProto.FLOAT),
        N("Cast", ["f"], ["g"], to=TensorProto.FLOAT),
        N("Greater", ["x", "zero"], ["b"]),
        N("Cast", ["b"], ["i"], to=TensorProto.INT32),
        N("Cast", ["i"], ["bf"], to=TensorProto.FLOAT),
        N("Mul", ["g", "bf"], ["out"]),
    ], [("x", [3, 5])], ["out"], [numpy_helper.from_array(np.array(0.1, np.float32), "zero")]), {
        "Cast": 1, "Relu": 1, "Greater": 1, "Mul": 1}

    # Attention-style scores without a Softmax: Q . K^T / sqrt(d) and a scaled, transposed A.
    yield "matmul_scale", model("matmul_scale", [
        N("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        N("MatMul", ["q", "kt"], ["m"]),
        N("Div", ["m", "sq"], ["out1"]),
        N("Mul", ["q", "s"], ["qs"]),
        N("Transpose", ["qs"], ["qt"], perm=[0, 1, 3, 2]),
        N("MatMul", ["qt", "k"], ["out2"]),
    ], [("q", [2, 3, 5, 8]), ("k", [2, 3, 5, 8])], ["out1", "out2"],
        [numpy_helper.from_array(np.array(2.8284271, np.float32), "sq"),
         numpy_helper.from_array(np.array(0.7, np.float32), "s")]), {
        "com.microsoft.FusedMatMul": 2, "MatMul": 0, "Transpose": 0}

    # Pad folded into Conv, MaxPool (after Relu: x >= 0; and with the lowest float as the value)
    # and AveragePool (count_include_pad set, and one that already counts its own pads).
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    yield "pad", model("pad", [
        N("Pad", ["x", "p"], ["xp"]),
        N("Conv", ["xp", "w1", "b1"], ["out1"], pads=[0, 1, 0, 0]),
        N("Relu", ["x"], ["r"]),
        N("Pad", ["r", "p"], ["rp"]),
        N("MaxPool", ["rp"], ["out2"], kernel_shape=[3, 3], strides=[3, 2]),
        N("Pad", ["x", "p", "low"], ["xl"]),
        N("MaxPool", ["xl"], ["out3"], kernel_shape=[3, 3], strides=[3, 2]),
        N("Pad", ["x", "p"], ["x3"]),
        N("AveragePool", ["x3"], ["out4"], kernel_shape=[4, 4]),
        N("Pad", ["x", "p"], ["x4"]),
        N("AveragePool", ["x4"], ["out5"], kernel_shape=[3, 3], strides=[3, 2], pads=[1, 0, 0, 1],
          count_include_pad=1),
    ], [("x", [2, 4, 7, 6])], ["out1", "out2", "out3", "out4", "out5"],
        [i64("p", [0, 0, 1, 2, 0, 0, 2, 1]), init("w1", [3, 4, 3, 3]), init("b1", [3]),
         numpy_helper.from_array(np.array(np.finfo(np.float32).min, np.float32), "low")]), {
        "Pad": 0, "com.microsoft.FusedConv": 0, "Conv": 1, "MaxPool": 2, "AveragePool": 2}

    # LayerNorm written out at opset 12: the model is raised to opset 17 (Squeeze's and Split's
    # attributes become inputs, the Softmax over the last axis says so) and LayerNormalization used.
    f32 = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
    yield "layernorm_opset12", model("layernorm_opset12", [
        N("ReduceMean", ["x"], ["mean"], axes=[-1]),
        N("Sub", ["x", "mean"], ["d"]),
        N("Pow", ["d", "two"], ["p"]),
        N("ReduceMean", ["p"], ["var"], axes=[-1]),
        N("Add", ["var", "eps"], ["ve"]),
        N("Sqrt", ["ve"], ["sd"]),
        N("Div", ["d", "sd"], ["n"]),
        N("Mul", ["n", "gamma"], ["g"]),
        N("Add", ["g", "beta"], ["out1"]),
        N("ReduceMax", ["x"], ["u"], axes=[1]),
        N("Squeeze", ["u"], ["out2"], axes=[1]),
        N("Softmax", ["out1"], ["out3"], axis=2),
        N("Split", ["out1"], ["out4", "out5"], axis=2, split=[3, 5]),
    ], [("x", [2, 3, 8])], ["out1", "out2", "out3", "out4", "out5"],
        [f32("two", 2.0), f32("eps", 1e-5), init("gamma", [8]), init("beta", [8])], opset=12), {
        "LayerNormalization": 1, "ReduceMean": 0, "Squeeze": 1, "Softmax": 1, "Split": 1}

    # The fusions together in a Paddle2ONNX-style recognizer block at opset 11: Pad + Conv + BN +
    # hard_swish, a hard-sigmoid SE gate, a written-out LayerNorm (the model is raised to 17), a
    # scaled attention (fuse-attention keeps it), a Swish MLP and a float -> double -> float Cast.
    C, H, W, D = 8, 4, 16, 8
    yield "ocr_block", model("ocr_block", [
        N("Pad", ["x", "pads"], ["xp"]),
        N("Conv", ["xp", "w1"], ["c1"]),
        bn("n1", "c1", "bn"),
        N("Add", ["bn", "three"], ["a1"]), N("Clip", ["a1", "zero", "six"], ["r1"]),
        N("Mul", ["bn", "r1"], ["m1"]), N("Div", ["m1", "six"], ["hs"]),
        N("GlobalAveragePool", ["hs"], ["gp"]), N("Conv", ["gp", "w2", "b2"], ["se"]),
        N("Add", ["se", "three"], ["a2"]), N("Clip", ["a2", "zero", "six"], ["r2"]),
        N("Div", ["r2", "six"], ["gate"]), N("Mul", ["hs", "gate"], ["f"]),
        N("Reshape", ["f", "shape"], ["seq0"]), N("Transpose", ["seq0"], ["seq"], perm=[0, 2, 1]),
        N("ReduceMean", ["seq"], ["mu"], axes=[-1]), N("Sub", ["seq", "mu"], ["d"]),
        N("Pow", ["d", "two"], ["d2"]), N("ReduceMean", ["d2"], ["var"], axes=[-1]),
        N("Add", ["var", "eps"], ["ve"]), N("Sqrt", ["ve"], ["sd"]), N("Div", ["d", "sd"], ["nrm"]),
        N("Mul", ["nrm", "g"], ["ng"]), N("Add", ["ng", "be"], ["ln"]),
        N("MatMul", ["ln", "wq"], ["q"]), N("MatMul", ["ln", "wk"], ["k"]),
        N("MatMul", ["ln", "wv"], ["vv"]),
        N("Transpose", ["k"], ["kt"], perm=[0, 2, 1]), N("MatMul", ["q", "kt"], ["qk"]),
        N("Mul", ["qk", "scale"], ["qks"]), N("Softmax", ["qks"], ["p"], axis=2),
        N("MatMul", ["p", "vv"], ["att"]), N("Add", ["att", "seq"], ["res"]),
        N("MatMul", ["res", "wf"], ["h1"]), N("Sigmoid", ["h1"], ["sg"]),
        N("Mul", ["h1", "sg"], ["sw"]),
        N("Cast", ["sw"], ["sd64"], to=TensorProto.DOUBLE),
        N("Cast", ["sd64"], ["out"], to=TensorProto.FLOAT),
    ], [("x", [1, 3, H, W])], ["out"],
        [i64("pads", [0, 0, 1, 1, 0, 0, 1, 1]), init("w1", [C, 3, 3, 3])] + bn_inits("n1", C) +
        [f32("three", 3.0), f32("zero", 0.0), f32("six", 6.0), init("w2", [C, C, 1, 1]),
         init("b2", [C]), i64("shape", [1, C, H * W]), f32("two", 2.0), f32("eps", 1e-5),
         init("g", [C]), init("be", [C]), init("wq", [C, D]), init("wk", [C, D]),
         init("wv", [C, C]), f32("scale", 1 / np.sqrt(D)), init("wf", [C, C])], opset=11), {
        "Pad": 0, "BatchNormalization": 0, "HardSwish": 1, "LayerNormalization": 1,
        "com.microsoft.MultiHeadAttention": 1, "com.microsoft.QuickGelu": 1, "Cast": 0}


def ort_extended_nodes(path, out_path):
    """Node count of onnxruntime's own offline optimization (ORT_ENABLE_EXTENDED, CPU)."""
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = out_path
    opts.log_severity_level = 3
    ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return len(onnx.load(out_path).graph.node)


def run(path, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def main():
    xopt = sys.argv[1]
    work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
    failed = False
    for name, m, expect in cases():
        src = os.path.join(work, name + ".onnx")
        dst = os.path.join(work, name + ".opt.onnx")
        onnx.checker.check_model(m)
        onnx.save(m, src)
        subprocess.run([xopt, "--passes=fold,fuse", "--verify-each", "-q", src, "-o", dst],
                       check=True, stdout=subprocess.DEVNULL)
        opt = onnx.load(dst)
        onnx.checker.check_model(opt)
        ops = collections.Counter((n.domain + "." if n.domain else "") + n.op_type
                                  for n in opt.graph.node)
        feeds = {i.name: rng.uniform(-1, 1, [d.dim_value for d in i.type.tensor_type.shape.dim])
                 .astype(np.float32) for i in m.graph.input}
        want, got = run(src, feeds), run(dst, feeds)
        same = all(close(g, w) for g, w in zip(got, want))
        diff = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
        fused = all(ops.get(op, 0) == n for op, n in expect.items())
        ort_nodes = ort_extended_nodes(src, os.path.join(work, name + ".ort.onnx"))
        opset = {o.domain or "ai.onnx": o.version for o in opt.opset_import}["ai.onnx"]
        at_most_ort = len(opt.graph.node) <= ort_nodes
        print(f"{name}: {len(m.graph.node)} -> {len(opt.graph.node)} nodes {dict(ops)}, opset {opset} "
              f"(onnxruntime extended: {ort_nodes}{'' if at_most_ort else ', FEWER: xopt left more'}); "
              f"onnxruntime {'matches' if same else 'DIFFERS'} (max abs diff {diff:.3g})"
              f"{'' if fused else '; UNEXPECTED op counts, wanted ' + str(expect)}")
        failed = failed or not same or not fused or not at_most_ort
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
