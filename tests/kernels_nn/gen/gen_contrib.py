"""Generates the com.microsoft kernel test cases in tests/kernels_nn/data/contrib/.

Each case is a one-node model plus test_data_set_0/{input_N,output_N}.pb in the layout of the ONNX
backend node tests; the expected outputs are computed by onnxruntime's CPU provider. Shapes are kept
tiny so the checked-in data stays small. Re-run after changing a case:

    python3 tests/kernels_nn/gen/gen_contrib.py
"""

import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "contrib")
rng = np.random.default_rng(1234)


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def case(name, op, inputs, n_outputs=1, output_names=None, **attrs):
    """inputs: list of (name, array or None for an omitted optional input)."""
    in_names = [n if a is not None else "" for n, a in inputs]
    out_names = output_names or [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op, in_names, out_names, domain="com.microsoft", **attrs)
    vi = []
    feeds = {}
    for n, a in inputs:
        if a is None:
            continue
        vi.append(helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
        feeds[n] = a
    outs = [onnx.ValueInfoProto(name=n) for n in out_names if n]
    graph = helper.make_graph([node], name, vi, outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results = sess.run(None, feeds)
    # Declare the output types ORT produced so the model is complete.
    for o, r in zip(graph.output, results):
        o.CopyFrom(helper.make_tensor_value_info(o.name, helper.np_dtype_to_tensor_dtype(r.dtype), r.shape))
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate((n, a) for n, a in inputs if a is not None):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for i, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r, out_names[i]).SerializeToString())


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)

    # FusedConv: every activation, Z, groups, strides, dilations, 1-D and 3-D.
    x = randn(1, 4, 6, 6)
    case("fused_conv_relu_bias_pads", "FusedConv", [("X", x), ("W", randn(3, 4, 3, 3)), ("B", randn(3))],
         activation="Relu", pads=[1, 1, 1, 1])
    case("fused_conv_leakyrelu_z_group_stride", "FusedConv",
         [("X", x), ("W", randn(4, 2, 3, 3)), ("B", randn(4)), ("Z", randn(1, 4, 3, 3))],
         activation="LeakyRelu", activation_params=[0.1], group=2, strides=[2, 2], pads=[1, 1, 1, 1])
    case("fused_conv_clip_nobias_dilation", "FusedConv", [("X", x), ("W", randn(2, 4, 2, 2))],
         activation="Clip", activation_params=[-0.5, 0.5], dilations=[2, 2])
    case("fused_conv_hardsigmoid_same_upper", "FusedConv", [("X", x), ("W", randn(2, 4, 3, 3)), ("B", randn(2))],
         activation="HardSigmoid", activation_params=[0.2, 0.5], auto_pad="SAME_UPPER", strides=[2, 2])
    case("fused_conv_sigmoid_1d", "FusedConv", [("X", randn(2, 3, 7)), ("W", randn(4, 3, 3)), ("B", randn(4))],
         activation="Sigmoid")
    case("fused_conv_tanh_3d_z", "FusedConv",
         [("X", randn(1, 2, 4, 4, 4)), ("W", randn(2, 2, 2, 2, 2)), ("B", randn(2)), ("Z", randn(1, 2, 3, 3, 3))],
         activation="Tanh")
    case("fused_conv_depthwise_relu", "FusedConv", [("X", x), ("W", randn(4, 1, 3, 3)), ("B", randn(4))],
         activation="Relu", group=4, pads=[1, 1, 1, 1])

    # FusedGemm: transposes, alpha/beta, C broadcast, every activation.
    a, b = randn(3, 5), randn(5, 4)
    acts = [("Relu", {}), ("Tanh", {}), ("Sigmoid", {}), ("LeakyRelu", {"activation_alpha": 0.2}),
            ("Elu", {"activation_alpha": 0.7}), ("HardSigmoid", {"activation_alpha": 0.3, "activation_beta": 0.4}),
            ("Selu", {"activation_alpha": 1.6, "activation_gamma": 1.05}),
            ("ThresholdedRelu", {"activation_alpha": 0.25}), ("Softplus", {}), ("Softsign", {}),
            ("ScaledTanh", {"activation_alpha": 0.8, "activation_beta": 1.3}),
            ("ParametricSoftplus", {"activation_alpha": 0.9, "activation_beta": 1.1})]
    for act, params in acts:
        case(f"fused_gemm_{act.lower()}", "FusedGemm", [("A", a), ("B", b), ("C", randn(4))],
             activation=act, alpha=0.7, beta=1.3, **params)
    case("fused_gemm_trans_matrix_c", "FusedGemm", [("A", randn(5, 3)), ("B", randn(4, 5)), ("C", randn(3, 4))],
         activation="LeakyRelu", activation_alpha=0.05, transA=1, transB=1)
    case("fused_gemm_no_c_col_c", "FusedGemm", [("A", a), ("B", b), ("C", randn(3, 1))], activation="Relu")

    # FusedMatMul: transA/transB, alpha, transBatchA/B, broadcasting, 1-D.
    case("fused_matmul_alpha_transb", "FusedMatMul", [("A", randn(2, 3, 4)), ("B", randn(2, 5, 4))],
         alpha=0.5, transB=1)
    case("fused_matmul_transa_bcast", "FusedMatMul", [("A", randn(2, 1, 4, 3)), ("B", randn(3, 4, 5))],
         transA=1)
    case("fused_matmul_transbatch_a", "FusedMatMul", [("A", randn(2, 3, 4)), ("B", randn(3, 4, 5))],
         transBatchA=1)
    case("fused_matmul_transbatch_a_transa", "FusedMatMul", [("A", randn(2, 3, 6, 4)), ("B", randn(3, 6, 2, 5))],
         transBatchA=1, transA=1, alpha=2.0)
    case("fused_matmul_transbatch_b_transb", "FusedMatMul", [("A", randn(3, 5, 7, 6)), ("B", randn(2, 3, 5, 6))],
         transBatchB=1, transB=1, alpha=0.25)
    case("fused_matmul_transbatch_both", "FusedMatMul", [("A", randn(4, 2, 3)), ("B", randn(3, 2, 5))],
         transBatchA=1, transBatchB=1)
    case("fused_matmul_2d_1d", "FusedMatMul", [("A", randn(3, 4)), ("B", randn(4))], alpha=3.0)

    # SkipLayerNormalization: all outputs, optional beta/bias, broadcast skip, 2-D input.
    bsh = (2, 3, 8)
    case("skip_layer_norm_all_outputs", "SkipLayerNormalization",
         [("input", randn(*bsh)), ("skip", randn(*bsh)), ("gamma", randn(8)), ("beta", randn(8)), ("bias", randn(8))],
         n_outputs=4, epsilon=1e-5)
    case("skip_layer_norm_no_beta_bias", "SkipLayerNormalization",
         [("input", randn(*bsh)), ("skip", randn(*bsh)), ("gamma", randn(8))])
    case("skip_layer_norm_bias_only_sum", "SkipLayerNormalization",
         [("input", randn(*bsh)), ("skip", randn(*bsh)), ("gamma", randn(8)), ("beta", None), ("bias", randn(8))],
         output_names=["y0", "", "", "y3"], epsilon=1e-6)
    case("skip_layer_norm_broadcast_skip", "SkipLayerNormalization",
         [("input", randn(*bsh)), ("skip", randn(3, 8)), ("gamma", randn(8)), ("beta", randn(8))])
    case("skip_layer_norm_2d", "SkipLayerNormalization",
         [("input", randn(4, 8)), ("skip", randn(4, 8)), ("gamma", randn(8)), ("beta", randn(8))], n_outputs=3)

    # MultiHeadAttention: separate Q/K/V with optional bias, masks, attention_bias, causal.
    B, S, L, N, H = 2, 3, 4, 2, 4
    D = N * H
    q, k, v = randn(B, S, D), randn(B, L, D), randn(B, L, D)
    case("mha_qkv", "MultiHeadAttention", [("q", q), ("k", k), ("v", v)], num_heads=N)
    case("mha_qkv_bias", "MultiHeadAttention", [("q", q), ("k", k), ("v", v), ("bias", randn(3 * D))], num_heads=N)
    case("mha_scale_vdim", "MultiHeadAttention", [("q", q), ("k", k), ("v", randn(B, L, 2 * D))],
         num_heads=N, scale=0.3)
    case("mha_key_padding_2d", "MultiHeadAttention",
         [("q", q), ("k", k), ("v", v), ("bias", randn(3 * D)),
          ("mask", np.array([[1, 1, 1, 0], [1, 0, 1, 1]], np.int32))], num_heads=N)
    case("mha_key_padding_lengths", "MultiHeadAttention",
         [("q", q), ("k", k), ("v", v), ("bias", None), ("mask", np.array([2, 4], np.int32))], num_heads=N)
    case("mha_attention_bias", "MultiHeadAttention",
         [("q", q), ("k", k), ("v", v), ("bias", randn(3 * D)), ("mask", None), ("ab", randn(1, N, S, L))],
         num_heads=N)
    case("mha_attention_bias_batch", "MultiHeadAttention",
         [("q", q), ("k", k), ("v", v), ("bias", None), ("mask", None), ("ab", randn(B, 1, S, L))], num_heads=N)
    qs, ks, vs = randn(B, L, D), randn(B, L, D), randn(B, L, D)
    case("mha_causal", "MultiHeadAttention", [("q", qs), ("k", ks), ("v", vs)], num_heads=N, unidirectional=1)
    case("mha_causal_bias_mask", "MultiHeadAttention",
         [("q", qs), ("k", ks), ("v", vs), ("bias", randn(3 * D)),
          ("mask", np.array([[1, 1, 1, 0], [1, 1, 1, 1]], np.int32)), ("ab", randn(1, N, L, L))],
         num_heads=N, unidirectional=1, mask_filter_value=-1000.0)
    case("mha_present_kv", "MultiHeadAttention", [("q", q), ("k", k), ("v", v), ("bias", randn(3 * D))],
         n_outputs=3, num_heads=N)

    # FusedConv without an activation attribute (identity, what a residual Add alone fuses to),
    # with Z; appended last so the cases above keep their random values.
    case("fused_conv_identity_z", "FusedConv",
         [("X", x), ("W", randn(4, 4, 3, 3)), ("B", randn(4)), ("Z", randn(1, 4, 6, 6))], pads=[1, 1, 1, 1])
    case("fused_conv_identity_z_nobias_group", "FusedConv",
         [("X", x), ("W", randn(4, 2, 1, 1)), ("B", None), ("Z", randn(1, 4, 3, 3))], group=2, strides=[2, 2])

    # QuickGelu: x * sigmoid(alpha * x), the default alpha (1.702) and alpha 1 (Swish / SiLU, what
    # fuse-swish emits). Inputs within +-6: further out onnxruntime's approximate logistic (MLAS)
    # is off by more than the runner's tolerance from the exact value our kernel computes.
    case("quick_gelu_default_alpha", "QuickGelu", [("X", np.clip(3 * randn(2, 3, 5), -6, 6))])
    case("quick_gelu_swish", "QuickGelu", [("X", np.clip(3 * randn(3, 7), -6, 6))], alpha=1.0)


if __name__ == "__main__":
    main()
