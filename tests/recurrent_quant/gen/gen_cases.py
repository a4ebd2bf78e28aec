"""Generates the recurrent and quantized kernel cases in tests/recurrent_quant/data/{recurrent,quant}/.

Each case is a one-node model plus test_data_set_0/{input_N,output_N}.pb in the layout of the ONNX
backend node tests; expected outputs come from onnxruntime's CPU provider (1.32). The cases cover
the attribute combinations the ONNX node tests leave out: directions, activations with alpha/beta,
clip, layout 1, sequence_lens, initial states, peepholes, input_forget, linear_before_reset,
omitted outputs; per-axis and blocked quantization, 16-bit types, saturation and ties, per-channel
zero points, the com.microsoft integer ops. Shapes are tiny so the checked-in data stays small.

    python3 tests/recurrent_quant/gen/gen_cases.py
"""

import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
rng = np.random.default_rng(20240613)


def randn(*shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def randint(lo, hi, shape, dtype):
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def case(sub, name, op, inputs, outputs, opset, domain="", initializers=(), ref="ort", node_attrs=None, **attrs):
    """inputs: list of (name, array or None for an omitted optional input); outputs: names ("" omits).
    initializers: names among inputs stored as initializers instead of fed. node_attrs: attributes
    whose names clash with these parameters (QLinearSoftmax's `opset`)."""
    attrs.update(node_attrs or {})
    inputs = [(n, np.asarray(a) if a is not None else None) for n, a in inputs]
    in_names = [n if a is not None else "" for n, a in inputs]
    node = helper.make_node(op, in_names, outputs, domain=domain, **attrs)
    vi, inits, feeds = [], [], {}
    for n, a in inputs:
        if a is None:
            continue
        if n in initializers:
            inits.append(numpy_helper.from_array(a, n))
            continue
        vi.append(helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
        feeds[n] = a
    outs = [onnx.ValueInfoProto(name=n) for n in outputs if n]
    graph = helper.make_graph([node], name, vi, outs, initializer=inits)
    imports = [helper.make_opsetid("", opset)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 8 if opset < 21 else 10
    if ref == "onnx":  # onnxruntime lacks the kernel (GRU in double): the ONNX reference evaluator
        from onnx.reference import ReferenceEvaluator
        results = ReferenceEvaluator(model).run(None, feeds)
    elif attrs.get("layout", 0) == 1:
        results = batchwise_reference(model, feeds, outputs)
    else:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        results = sess.run(None, feeds)
    for o, r in zip(graph.output, results):
        o.CopyFrom(helper.make_tensor_value_info(o.name, helper.np_dtype_to_tensor_dtype(r.dtype), r.shape))
    d = os.path.join(ROOT, sub, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate((n, a) for n, a in inputs if a is not None and n not in initializers):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for i, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r, [o for o in outputs if o][i]).SerializeToString())


def batchwise_reference(model, feeds, outputs):
    """onnxruntime has no layout=1 recurrent kernels: run the layout-0 model on transposed inputs and
    transpose its outputs back."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    node = m.graph.node[0]
    attrs = [a for a in node.attribute if a.name != "layout"]
    del node.attribute[:]
    node.attribute.extend(attrs)
    t_in = {"X": (1, 0, 2), "initial_h": (1, 0, 2), "initial_c": (1, 0, 2)}
    f = {k: (np.transpose(v, t_in[k]) if k in t_in else v) for k, v in feeds.items()}
    for vi in m.graph.input:
        if vi.name in t_in:
            vi.CopyFrom(helper.make_tensor_value_info(vi.name, vi.type.tensor_type.elem_type, f[vi.name].shape))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    res = sess.run(None, f)
    names = [o for o in outputs if o]
    return [np.ascontiguousarray(np.transpose(r, (2, 0, 1, 3) if outputs.index(n) == 0 else (1, 0, 2)))
            for n, r in zip(names, res)]


def rnn_inputs(gates, dirs, seq, batch, inp, hidden, layout=0, bias=True, lens=None, h0=False, c0=False,
               peep=False, dtype=np.float32):
    x = randn(*((seq, batch, inp) if layout == 0 else (batch, seq, inp)), dtype=dtype)
    state = (dirs, batch, hidden) if layout == 0 else (batch, dirs, hidden)
    ins = [("X", x), ("W", randn(dirs, gates * hidden, inp, dtype=dtype, scale=0.5)),
           ("R", randn(dirs, gates * hidden, hidden, dtype=dtype, scale=0.5)),
           ("B", randn(dirs, 2 * gates * hidden, dtype=dtype, scale=0.5) if bias else None),
           ("sequence_lens", np.array(lens, dtype=np.int32) if lens is not None else None),
           ("initial_h", randn(*state, dtype=dtype) if h0 else None)]
    if gates == 4:
        ins += [("initial_c", randn(*state, dtype=dtype) if c0 else None),
                ("P", randn(dirs, 3 * hidden, dtype=dtype, scale=0.5) if peep else None)]
    while ins[-1][1] is None:
        ins.pop()
    return ins


def recurrent():
    s = "recurrent"
    # RNN
    case(s, "rnn_reverse_bias", "RNN", rnn_inputs(1, 1, 4, 2, 3, 5), ["Y", "Y_h"], 14,
         hidden_size=5, direction="reverse")
    case(s, "rnn_bidirectional_seqlens_h0", "RNN", rnn_inputs(1, 2, 5, 3, 3, 4, lens=[5, 2, 3], h0=True),
         ["Y", "Y_h"], 14, hidden_size=4, direction="bidirectional")
    case(s, "rnn_layout1_relu_only_yh", "RNN", rnn_inputs(1, 1, 3, 2, 4, 3, layout=1, h0=True), ["", "Y_h"], 14,
         hidden_size=3, layout=1, activations=["Relu"])
    case(s, "rnn_leakyrelu_alpha_clip", "RNN", rnn_inputs(1, 2, 3, 2, 3, 4), ["Y", "Y_h"], 14,
         hidden_size=4, direction="bidirectional", activations=["LeakyRelu", "Affine"],
         activation_alpha=[0.3, 0.7], activation_beta=[0.2], clip=0.8)
    case(s, "rnn_opset7_no_bias", "RNN", rnn_inputs(1, 1, 3, 2, 3, 4, bias=False), ["Y"], 7, hidden_size=4)
    # GRU
    case(s, "gru_lbr_bidirectional_seqlens", "GRU",
         rnn_inputs(3, 2, 4, 3, 3, 5, lens=[4, 1, 3], h0=True), ["Y", "Y_h"], 14, hidden_size=5,
         direction="bidirectional", linear_before_reset=1)
    case(s, "gru_reverse_no_lbr_seqlens", "GRU", rnn_inputs(3, 1, 4, 3, 2, 3, lens=[2, 4, 3]), ["Y", "Y_h"], 14,
         hidden_size=3, direction="reverse")
    case(s, "gru_layout1_hardsigmoid_softsign", "GRU", rnn_inputs(3, 1, 3, 2, 4, 3, layout=1, h0=True),
         ["Y", "Y_h"], 14, hidden_size=3, layout=1, activations=["HardSigmoid", "Softsign"],
         activation_alpha=[0.3], activation_beta=[0.4])
    case(s, "gru_clip_lbr", "GRU", rnn_inputs(3, 1, 3, 2, 3, 4), ["Y"], 14, hidden_size=4, clip=0.5,
         linear_before_reset=1)
    case(s, "gru_bidirectional_activations", "GRU", rnn_inputs(3, 2, 3, 2, 3, 3), ["Y", "Y_h"], 14,
         hidden_size=3, direction="bidirectional",
         activations=["Sigmoid", "Tanh", "HardSigmoid", "Elu"], activation_alpha=[0.25, 0.9],
         activation_beta=[0.45])
    case(s, "gru_double", "GRU", rnn_inputs(3, 1, 3, 2, 3, 4, dtype=np.float64, h0=True), ["Y", "Y_h"], 14,
         ref="onnx", hidden_size=4)
    # LSTM
    case(s, "lstm_bidirectional_peepholes_seqlens", "LSTM",
         rnn_inputs(4, 2, 5, 3, 3, 4, lens=[5, 3, 1], h0=True, c0=True, peep=True), ["Y", "Y_h", "Y_c"], 14,
         hidden_size=4, direction="bidirectional")
    case(s, "lstm_reverse_only_yc", "LSTM", rnn_inputs(4, 1, 4, 2, 3, 3, c0=True), ["", "", "Y_c"], 14,
         hidden_size=3, direction="reverse")
    case(s, "lstm_layout1_initial_states", "LSTM", rnn_inputs(4, 2, 3, 2, 4, 3, layout=1, h0=True, c0=True),
         ["Y", "Y_h", "Y_c"], 14, hidden_size=3, layout=1, direction="bidirectional")
    case(s, "lstm_clip_input_forget", "LSTM", rnn_inputs(4, 1, 4, 2, 3, 4, peep=True), ["Y", "Y_h", "Y_c"], 14,
         hidden_size=4, clip=0.6, input_forget=1)
    case(s, "lstm_activations_alpha_beta", "LSTM", rnn_inputs(4, 1, 3, 2, 3, 3), ["Y", "Y_h", "Y_c"], 14,
         hidden_size=3, activations=["HardSigmoid", "ScaledTanh", "Affine"], activation_alpha=[0.3, 0.8, 0.5],
         activation_beta=[0.45, 1.2, 0.1])
    case(s, "lstm_activations_defaults", "LSTM", rnn_inputs(4, 2, 3, 2, 3, 3), ["Y", "Y_h"], 14,
         hidden_size=3, direction="bidirectional",
         activations=["Sigmoid", "Softsign", "ThresholdedRelu", "HardSigmoid", "Elu", "Softplus"])
    case(s, "lstm_relu_leakyrelu", "LSTM", rnn_inputs(4, 1, 3, 2, 3, 3), ["Y", "Y_h", "Y_c"], 14,
         hidden_size=3, activations=["Sigmoid", "LeakyRelu", "Relu"], activation_alpha=[0.2])
    case(s, "lstm_double_opset7", "LSTM", rnn_inputs(4, 1, 3, 2, 3, 3, dtype=np.float64, h0=True, c0=True),
         ["Y", "Y_h", "Y_c"], 7, ref="onnx", hidden_size=3)
    case(s, "lstm_no_hidden_size_attr", "LSTM", rnn_inputs(4, 1, 2, 1, 3, 2), ["Y"], 14, ref="onnx")


def quantized():
    s = "quant"
    x = np.array([[-3.0, -1.5, -0.5, 0.0, 0.5, 1.5], [2.5, 3.5, 100.0, -100.0, 0.25, 7.0]], np.float32)
    # QuantizeLinear: ties (±0.5, 1.5, 2.5 round to even), saturation, per axis, blocked, 16 bit.
    case(s, "quantize_uint8_ties_saturate", "QuantizeLinear",
         [("x", x), ("s", np.float32(1.0)), ("z", np.uint8(3))], ["y"], 13)
    case(s, "quantize_int8_per_axis0", "QuantizeLinear",
         [("x", x), ("s", np.array([0.5, 0.25], np.float32)), ("z", np.array([-2, 5], np.int8))], ["y"], 13,
         axis=0)
    case(s, "quantize_int8_per_axis_last", "QuantizeLinear",
         [("x", randn(2, 3, 4) * 3), ("s", np.array([0.1, 0.2, 0.05, 0.3], np.float32)),
          ("z", np.array([0, 1, -1, 2], np.int8))], ["y"], 13, axis=-1)
    case(s, "quantize_no_zero_point_uint8", "QuantizeLinear", [("x", randn(3, 4) * 20), ("s", np.float32(0.2))],
         ["y"], 13)
    case(s, "quantize_int16_per_axis", "QuantizeLinear",
         [("x", randn(3, 5) * 1000), ("s", np.array([0.01, 0.5, 0.03], np.float32)),
          ("z", np.array([-7, 0, 300], np.int16))], ["y"], 21, axis=0)
    case(s, "quantize_uint16", "QuantizeLinear",
         [("x", randn(4, 3) * 500), ("s", np.float32(0.02)), ("z", np.uint16(30000))], ["y"], 21)
    case(s, "quantize_blocked_int8", "QuantizeLinear",
         [("x", randn(2, 6, 3) * 4), ("s", np.abs(randn(2, 3, 3)) * 0.05 + 0.01),
          ("z", randint(-5, 5, (2, 3, 3), np.int8))], ["y"], 21, axis=1, block_size=2)
    case(s, "quantize_blocked_uneven_uint8", "QuantizeLinear",
         [("x", randn(5, 4) * 4), ("s", np.abs(randn(2, 4)) * 0.05 + 0.01),
          ("z", randint(100, 150, (2, 4), np.uint8))], ["y"], 21, axis=0, block_size=3)
    case(s, "quantize_float16_input", "QuantizeLinear",
         [("x", randn(3, 4, dtype=np.float16) * 4), ("s", np.float16(0.05)), ("z", np.int8(-3))], ["y"], 19)
    case(s, "quantize_output_dtype_int8", "QuantizeLinear", [("x", randn(3, 4) * 4), ("s", np.float32(0.05))],
         ["y"], 21, output_dtype=TensorProto.INT8)
    # DequantizeLinear
    case(s, "dequantize_int8_per_axis", "DequantizeLinear",
         [("x", randint(-128, 127, (2, 3, 4), np.int8)), ("s", np.array([0.1, 0.02, 0.5], np.float32)),
          ("z", np.array([0, -3, 7], np.int8))], ["y"], 13, axis=1)
    case(s, "dequantize_int32", "DequantizeLinear",
         [("x", randint(-100000, 100000, (3, 4), np.int32)), ("s", np.float32(0.001))], ["y"], 13)
    case(s, "dequantize_uint8_no_zero_point_opset10", "DequantizeLinear",
         [("x", randint(0, 255, (3, 4), np.uint8)), ("s", np.float32(0.3))], ["y"], 10)
    case(s, "dequantize_float16_scale", "DequantizeLinear",
         [("x", randint(0, 255, (3, 4), np.uint8)), ("s", np.float16(0.0625)), ("z", np.uint8(128))], ["y"], 19)
    case(s, "dequantize_blocked_int16", "DequantizeLinear",
         [("x", randint(-30000, 30000, (4, 6), np.int16)), ("s", np.abs(randn(4, 2)) * 0.01 + 0.001),
          ("z", randint(-50, 50, (4, 2), np.int16))], ["y"], 21, axis=1, block_size=3)
    case(s, "dequantize_uint16_per_axis", "DequantizeLinear",
         [("x", randint(0, 65535, (2, 3), np.uint16)), ("s", np.array([0.001, 0.002], np.float32)),
          ("z", np.array([32768, 100], np.uint16))], ["y"], 21, axis=0)
    # DynamicQuantizeLinear
    case(s, "dynamic_quantize_all_negative", "DynamicQuantizeLinear", [("x", -np.abs(randn(3, 4)))],
         ["y", "y_scale", "y_zero_point"], 11)
    case(s, "dynamic_quantize_all_positive", "DynamicQuantizeLinear", [("x", np.abs(randn(3, 4)))],
         ["y", "y_scale", "y_zero_point"], 11)
    case(s, "dynamic_quantize_mixed", "DynamicQuantizeLinear", [("x", randn(2, 3, 5) * 7)],
         ["y", "y_scale", "y_zero_point"], 11)
    # MatMulInteger
    case(s, "matmul_integer_uint8_int8_per_column", "MatMulInteger",
         [("A", randint(0, 255, (3, 4), np.uint8)), ("B", randint(-128, 127, (4, 5), np.int8)),
          ("a_zp", np.uint8(12)), ("b_zp", randint(-4, 4, (5,), np.int8))], ["Y"], 10)
    case(s, "matmul_integer_batched_int8", "MatMulInteger",
         [("A", randint(-128, 127, (2, 3, 4), np.int8)), ("B", randint(-128, 127, (4, 2), np.int8)),
          ("a_zp", np.int8(-5))], ["Y"], 10)
    case(s, "matmul_integer_no_zero_points", "MatMulInteger",
         [("A", randint(0, 255, (2, 2, 3), np.uint8)), ("B", randint(0, 255, (2, 3, 4), np.uint8))], ["Y"], 10)
    # ConvInteger
    case(s, "conv_integer_per_channel_w_zp_group", "ConvInteger",
         [("x", randint(0, 255, (1, 4, 5, 5), np.uint8)), ("w", randint(0, 255, (4, 2, 3, 3), np.uint8)),
          ("x_zp", np.uint8(100)), ("w_zp", np.array([1, 2, 3, 4], np.uint8))], ["y"], 10, ref="onnx", group=2,
         pads=[1, 1, 1, 1])
    case(s, "conv_integer_strides_dilations", "ConvInteger",
         [("x", randint(0, 255, (2, 3, 7, 6), np.uint8)), ("w", randint(0, 255, (2, 3, 2, 2), np.uint8)),
          ("x_zp", np.uint8(128))], ["y"], 10, strides=[2, 1], dilations=[2, 2])
    case(s, "conv_integer_1d_same_upper", "ConvInteger",
         [("x", randint(0, 255, (1, 2, 9), np.uint8)), ("w", randint(0, 255, (3, 2, 4), np.uint8)),
          ("x_zp", np.uint8(3)), ("w_zp", np.uint8(130))], ["y"], 10, auto_pad="SAME_UPPER", strides=[2])
    # QLinearConv
    case(s, "qlinear_conv_per_channel_bias", "QLinearConv",
         [("x", randint(0, 255, (1, 3, 6, 6), np.uint8)), ("xs", np.float32(0.02)), ("xz", np.uint8(120)),
          ("w", randint(-127, 127, (4, 3, 3, 3), np.int8)), ("ws", np.array([0.01, 0.02, 0.005, 0.03], np.float32)),
          ("wz", np.zeros(4, np.int8)), ("ys", np.float32(0.15)), ("yz", np.uint8(110)),
          ("B", randint(-500, 500, (4,), np.int32))], ["y"], 10, pads=[1, 1, 1, 1], strides=[2, 2])
    case(s, "qlinear_conv_int8_depthwise", "QLinearConv",
         [("x", randint(-128, 127, (1, 4, 5, 5), np.int8)), ("xs", np.float32(0.05)), ("xz", np.int8(-3)),
          ("w", randint(-127, 127, (4, 1, 3, 3), np.int8)), ("ws", np.float32(0.01)), ("wz", np.int8(0)),
          ("ys", np.float32(0.2)), ("yz", np.int8(5))], ["y"], 10, group=4, auto_pad="SAME_LOWER")
    # QLinearMatMul
    case(s, "qlinear_matmul_int8_batched", "QLinearMatMul",
         [("a", randint(-128, 127, (2, 3, 4), np.int8)), ("as", np.float32(0.03)), ("az", np.int8(2)),
          ("b", randint(-128, 127, (4, 5), np.int8)), ("bs", np.float32(0.02)), ("bz", np.int8(-1)),
          ("ys", np.float32(0.4)), ("yz", np.int8(-7))], ["y"], 10)
    case(s, "qlinear_matmul_uint8_per_column_b", "QLinearMatMul",
         [("a", randint(0, 255, (3, 4), np.uint8)), ("as", np.float32(0.03)), ("az", np.uint8(130)),
          ("b", randint(0, 255, (4, 2), np.uint8)), ("bs", np.array([0.02, 0.05], np.float32)),
          ("bz", np.array([120, 128], np.uint8)), ("ys", np.float32(0.3)), ("yz", np.uint8(128))], ["y"], 10)
    # com.microsoft
    ms = "com.microsoft"
    case(s, "dynamic_quantize_matmul_per_column_bias", "DynamicQuantizeMatMul",
         [("A", randn(2, 3, 4)), ("B", randint(-128, 127, (4, 5), np.int8)),
          ("bs", np.abs(randn(5)) * 0.01 + 0.001), ("bz", np.zeros(5, np.int8)), ("bias", randn(5))],
         ["Y"], 17, domain=ms)
    case(s, "dynamic_quantize_matmul_uint8_zp", "DynamicQuantizeMatMul",
         [("A", randn(3, 4) * 3), ("B", randint(0, 255, (4, 3), np.uint8)), ("bs", np.float32(0.02)),
          ("bz", np.uint8(128))], ["Y"], 17, domain=ms)
    case(s, "matmul_integer_to_float_bias", "MatMulIntegerToFloat",
         [("A", randint(0, 255, (2, 3, 4), np.uint8)), ("B", randint(-128, 127, (4, 5), np.int8)),
          ("as", np.float32(0.02)), ("bs", np.abs(randn(5)) * 0.01 + 0.001), ("az", np.uint8(125)),
          ("bz", np.zeros(5, np.int8)), ("bias", randn(5))], ["Y"], 17, domain=ms)
    case(s, "matmul_integer_to_float_scalar", "MatMulIntegerToFloat",
         [("A", randint(0, 255, (3, 4), np.uint8)), ("B", randint(0, 255, (4, 2), np.uint8)),
          ("as", np.float32(0.1)), ("bs", np.float32(0.05))], ["Y"], 17, domain=ms)
    # DynamicQuantizeLSTM: W [dirs, input, 4H], R [dirs, H, 4H], int8, scales per direction or per column.
    def dq_lstm(name, dirs, seq, batch, inp, hidden, per_col, lens=None, peep=False, states=False, **attrs):
        cols = 4 * hidden
        shape = (dirs, cols) if per_col else (dirs,)
        ins = [("X", randn(seq, batch, inp)), ("W", randint(-127, 127, (dirs, inp, cols), np.int8)),
               ("R", randint(-127, 127, (dirs, hidden, cols), np.int8)), ("B", randn(dirs, 8 * hidden, scale=0.3)),
               ("sequence_lens", np.array(lens, np.int32) if lens else None),
               ("initial_h", randn(dirs, batch, hidden) if states else None),
               ("initial_c", randn(dirs, batch, hidden) if states else None),
               ("P", randn(dirs, 3 * hidden, scale=0.3) if peep else None),
               ("W_scale", (np.abs(randn(*shape)) * 0.005 + 0.002).astype(np.float32)),
               ("W_zero_point", np.zeros(shape, np.int8)),
               ("R_scale", (np.abs(randn(*shape)) * 0.005 + 0.002).astype(np.float32)),
               ("R_zero_point", np.zeros(shape, np.int8))]
        case(s, name, "DynamicQuantizeLSTM", ins, ["Y", "Y_h", "Y_c"], 17, domain=ms,
             initializers=("W", "R", "W_scale", "W_zero_point", "R_scale", "R_zero_point"), hidden_size=hidden,
             **attrs)
    dq_lstm("dynamic_quantize_lstm_forward", 1, 4, 2, 3, 4, False)
    dq_lstm("dynamic_quantize_lstm_bidirectional_per_column", 2, 3, 2, 5, 3, True, peep=True, states=True,
            direction="bidirectional")
    dq_lstm("dynamic_quantize_lstm_bidirectional", 2, 3, 2, 5, 3, False, direction="bidirectional")
    dq_lstm("dynamic_quantize_lstm_reverse", 1, 3, 2, 5, 3, False, direction="reverse")
    dq_lstm("dynamic_quantize_lstm_per_column", 1, 3, 2, 5, 3, True)
    dq_lstm("dynamic_quantize_lstm_peepholes_states", 1, 3, 2, 5, 3, False, peep=True, states=True)


def main():
    for sub, fn in (("recurrent", recurrent), ("quant", quantized)):
        d = os.path.join(ROOT, sub)
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        fn()


if __name__ == "__main__":
    main()
