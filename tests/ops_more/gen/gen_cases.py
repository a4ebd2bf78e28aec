"""Generates tests/ops_more/data/: one-node cases for issue 13's op families, covering attribute
combinations the ONNX node tests leave out.

Each case is a one-node model plus test_data_set_0/{input_N,output_N}.pb in the layout of the ONNX
backend node tests. Expected outputs come from onnxruntime's CPU provider (1.32) where it has the
kernel at that opset, else from the ONNX reference evaluator (onnx 1.23's numpy implementation);
the case's name says which (`_ort` / `_ref`; a case asked of onnxruntime falls back to the
reference when onnxruntime has no kernel for its types). Shapes are tiny so the checked-in data stays small.

    python3 tests/ops_more/gen/gen_cases.py              # every case, anew
    python3 tests/ops_more/gen/gen_cases.py flex_attention   # (re)writes one section's cases only
"""

import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
rng = np.random.default_rng(1313)


def randn(*shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def ints(lo, hi, shape, dtype=np.int64):
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def case(name, op, inputs, outputs, opset, ref="ort", initializers=(), domain="", **attrs):
    """inputs: list of (name, array or None for an omitted optional input); outputs: names ("" omits).
    ref: "ort" (onnxruntime) or "onnx" (the reference evaluator). domain: the op's domain (opset
    1 of it is imported beside the standard `opset`)."""
    inputs = [(n, np.asarray(a) if a is not None else None) for n, a in inputs]
    in_names = [n if a is not None else "" for n, a in inputs]
    while in_names and in_names[-1] == "":
        in_names.pop()
    node = helper.make_node(op, in_names, outputs, domain=domain or None, **attrs)
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
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8 if opset < 21 else 10
    if ref == "onnx":
        results = ReferenceEvaluator(model).run(None, feeds)
    else:
        try:
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            results = sess.run(None, feeds)
        except Exception:  # no onnxruntime kernel for this type or opset: the reference evaluator
            ref = "onnx"
            results = ReferenceEvaluator(model).run(None, feeds)
    results = [np.asarray(r) for r in results]
    for o, r in zip(graph.output, results):
        o.CopyFrom(helper.make_tensor_value_info(o.name, helper.np_dtype_to_tensor_dtype(r.dtype), r.shape))
    d = os.path.join(ROOT, f"{name}_{ref if ref == 'onnx' else 'ort'}".replace("_onnx", "_ref"))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate((n, a) for n, a in inputs if a is not None and n not in initializers):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for i, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r, [o for o in outputs if o][i]).SerializeToString())


def attention():
    b, s, p, d = 2, 3, 2, 4
    # 3-D GQA, causal, with a past cache and all outputs.
    case("attention_3d_gqa_causal_past", "Attention",
         [("Q", randn(b, s, 4 * d)), ("K", randn(b, s, 2 * d)), ("V", randn(b, s, 2 * 5)),
          ("attn_mask", None), ("past_key", randn(b, 2, p, d)), ("past_value", randn(b, 2, p, 5))],
         ["Y", "present_key", "present_value", "qk"], 23, ref="onnx",
         is_causal=1, q_num_heads=4, kv_num_heads=2, qk_matmul_output_mode=2)
    # Bool 2-D mask shorter than the keys (padded with False), softcap, explicit scale, mode 3.
    mask = rng.random((s, p + s - 1)) > 0.3
    mask[:, 0] = True
    case("attention_4d_boolmask_short_softcap_mode3", "Attention",
         [("Q", randn(b, 2, s, d)), ("K", randn(b, 2, s, d)), ("V", randn(b, 2, s, d)),
          ("attn_mask", mask), ("past_key", randn(b, 2, p, d)), ("past_value", randn(b, 2, p, d))],
         ["Y", "", "", "qk"], 23, ref="onnx", softcap=1.5, scale=0.3, qk_matmul_output_mode=3)
    # Float mask of rank 3 broadcast over batch, mode 0 with softcap, softmax in double.
    case("attention_4d_mask3d_mode0_precision", "Attention",
         [("Q", randn(b, 2, s, d)), ("K", randn(b, 2, 5, d)), ("V", randn(b, 2, 5, d)),
          ("attn_mask", randn(2, s, 5))],
         ["Y", "", "", "qk"], 23, ref="onnx", softcap=2.0, softmax_precision=11)
    # Opset 24: nonpad_kv_seqlen without causal.
    case("attention_4d_nonpad_nocausal", "Attention",
         [("Q", randn(b, 2, s, d)), ("K", randn(b, 2, 5, d)), ("V", randn(b, 2, 5, d)),
          ("attn_mask", None), ("past_key", None), ("past_value", None),
          ("nonpad_kv_seqlen", np.array([3, 5], dtype=np.int64))],
         ["Y"], 24, ref="onnx")


def transformer_misc():
    # RotaryEmbedding: 4-D, interleaved, partial rotation, position ids.
    case("rotary_4d_interleaved_partial_pos", "RotaryEmbedding",
         [("X", randn(2, 3, 4, 8)), ("cos", randn(10, 3)), ("sin", randn(10, 3)),
          ("pos", ints(0, 9, (2, 4)))], ["Y"], 23, rotary_embedding_dim=6, interleaved=1)
    case("rotary_3d_halves_no_pos", "RotaryEmbedding",
         [("X", randn(2, 3, 2 * 6)), ("cos", randn(2, 3, 3)), ("sin", randn(2, 3, 3))],
         ["Y"], 23, num_heads=2)
    case("rms_norm_axis1_scale_bcast", "RMSNormalization",
         [("X", randn(2, 3, 4)), ("scale", randn(3, 1))], ["Y"], 23, axis=1, epsilon=1e-3)
    case("rms_norm_fp16", "RMSNormalization",
         [("X", randn(3, 8, dtype=np.float16)), ("scale", randn(8, dtype=np.float16))], ["Y"], 23, ref="onnx")
    case("group_norm_21_per_channel", "GroupNormalization",
         [("X", randn(2, 6, 3, 2)), ("scale", randn(6)), ("bias", randn(6))], ["Y"], 21,
         num_groups=3, epsilon=1e-3)
    case("group_norm_18_per_group", "GroupNormalization",
         [("X", randn(2, 4, 5)), ("scale", randn(2)), ("bias", randn(2))], ["Y"], 18, ref="onnx",
         num_groups=2)
    case("swiglu_alpha", "SwiGLU", [("A", randn(3, 4)), ("B", randn(3, 4))], ["Y"], 28, ref="onnx", alpha=1.7)
    case("swish_alpha", "Swish", [("X", randn(3, 4))], ["Y"], 24, ref="onnx", alpha=0.6)
    case("mish_fp16", "Mish", [("X", randn(3, 4, dtype=np.float16))], ["Y"], 22, ref="onnx")
    case("shrink_int", "Shrink", [("X", ints(-5, 5, (10,), np.int32))], ["Y"], 9, lambd=1.5, bias=1.0)
    case("hardmax_11_axis1_3d", "Hardmax", [("X", randn(2, 3, 4))], ["Y"], 11, axis=1)
    case("hardmax_13_axis0_ties", "Hardmax", [("X", np.array([[1, 2], [1, 2], [0, 3]], np.float32))],
         ["Y"], 13, axis=0)
    case("lp_norm_p1_axis0", "LpNormalization", [("X", randn(3, 4))], ["Y"], 22, axis=0, p=1)
    case("lp_norm_p2_zero_row", "LpNormalization", [("X", np.array([[0, 0, 0], [3, 4, 0]], np.float32))],
         ["Y"], 22)
    case("mvn_axes_1", "MeanVarianceNormalization", [("X", randn(2, 3, 4))], ["Y"], 13, axes=[1])


def indexing():
    case("gather_nd_batch1", "GatherND", [("data", randn(2, 3, 4)), ("indices", ints(0, 2, (2, 2, 1)))],
         ["Y"], 13, batch_dims=1)
    case("gather_nd_neg_full", "GatherND", [("data", randn(3, 4)), ("indices", np.array([[-1, -2], [0, 3]]))],
         ["Y"], 13)
    case("scatter_elements_axis1_neg_min", "ScatterElements",
         [("data", randn(3, 4)), ("indices", np.array([[-1, 0], [1, 1], [2, -4]])), ("updates", randn(3, 2))],
         ["Y"], 18, axis=1, reduction="min")
    case("scatter_elements_mul_int", "ScatterElements",
         [("data", ints(1, 4, (4, 2), np.int32)), ("indices", np.array([[0, 1], [0, 1]])),
          ("updates", ints(1, 3, (2, 2), np.int32))], ["Y"], 16, reduction="mul")
    case("nonzero_int", "NonZero", [("X", ints(-1, 1, (3, 4), np.int32))], ["Y"], 13)
    case("onehot_axis0_neg", "OneHot",
         [("indices", np.array([[-1, 2], [-4, 0]], np.int64)), ("depth", np.array(4, np.int64)),
          ("values", np.array([-2, 5], np.int32))], ["Y"], 11, axis=0)
    case("compress_no_axis_short", "Compress",
         [("X", randn(2, 3)), ("cond", np.array([True, False, True, True]))], ["Y"], 11)
    case("unique_unsorted_axis1", "Unique", [("X", np.array([[1, 0, 1, 2], [3, 0, 3, 4]], np.float32))],
         ["Y", "idx", "inv", "cnt"], 11, sorted=0, axis=1)
    case("unique_sorted_int", "Unique", [("X", np.array([5, 1, 5, 2, 1, 9], np.int64))],
         ["Y", "idx", "inv", "cnt"], 11, sorted=0)
    case("cumprod_exclusive_reverse", "CumProd", [("X", randn(2, 4)), ("axis", np.array(1, np.int64))],
         ["Y"], 26, ref="onnx", exclusive=1, reverse=1)
    case("eyelike_k_neg_dtype", "EyeLike", [("X", randn(3, 4))], ["Y"], 22, k=-1, dtype=7)
    case("reverse_sequence_batch0", "ReverseSequence",
         [("X", randn(3, 4, 2)), ("lens", np.array([1, 4, 2], np.int64))], ["Y"], 10, batch_axis=0, time_axis=1)
    case("center_crop_pad_axes", "CenterCropPad",
         [("X", randn(3, 5, 2)), ("shape", np.array([6, 2], np.int64))], ["Y"], 18, ref="onnx", axes=[0, -2])
    case("tensor_scatter_circular", "TensorScatter",
         [("past", randn(2, 2, 4, 3)), ("update", randn(2, 2, 3, 3)), ("wi", np.array([2, 0], np.int64))],
         ["Y"], 24, ref="onnx", mode="circular")
    case("bitshift_bcast_left", "BitShift",
         [("X", ints(0, 200, (2, 3), np.uint16)), ("Y", np.array([1, 3, 9], np.uint16))], ["Z"], 11,
         direction="LEFT")
    case("bitcast_f32_i32", "BitCast", [("X", randn(2, 3))], ["Y"], 26, ref="onnx", to=6)
    case("det_batch", "Det", [("X", randn(2, 3, 3))], ["Y"], 22)
    case("einsum_batch_matmul", "Einsum", [("A", randn(2, 3, 4)), ("B", randn(2, 4, 5))], ["Y"], 12,
         equation="bij,bjk->bik")
    case("einsum_diag", "Einsum", [("A", randn(4, 4))], ["Y"], 12, equation="ii->i")
    case("einsum_ellipsis_bcast", "Einsum", [("A", randn(2, 1, 3, 4)), ("B", randn(5, 4, 2))], ["Y"], 12,
         equation="...ij,...jk->...ik")
    case("einsum_implicit_3ops", "Einsum", [("A", randn(2, 3)), ("B", randn(3, 4)), ("C", randn(4))],
         ["Y"], 12, equation="ij,jk,k")
    case("einsum_sum_all", "Einsum", [("A", randn(3, 4))], ["Y"], 12, equation="ij->")


def detection():
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                       [0, 100, 1, 101]]], np.float32)
    center = np.stack([boxes[..., 1] + 0.5, boxes[..., 0] + 0.5, np.ones_like(boxes[..., 0]),
                       np.ones_like(boxes[..., 0])], -1).astype(np.float32)
    scores = rng.random((1, 2, 6)).astype(np.float32)
    case("nms_center_threshold_2classes", "NonMaxSuppression",
         [("boxes", center), ("scores", scores), ("max", np.array([2], np.int64)),
          ("iou", np.array([0.4], np.float32)), ("score", np.array([0.2], np.float32))], ["Y"], 11,
         center_point_box=1)
    x = randn(2, 2, 6, 5)
    rois = np.array([[0.5, 0.5, 3.5, 4.0], [1, 0, 4.8, 5.9], [0, 1, 2, 2]], np.float32)
    case("roi_align_max_output_half_pixel", "RoiAlign",
         [("X", x), ("rois", rois), ("bi", np.array([0, 1, 1], np.int64))], ["Y"], 16,
         mode="max", coordinate_transformation_mode="output_half_pixel", output_height=2, output_width=3,
         sampling_ratio=2, spatial_scale=0.9)
    case("roi_align_avg_adaptive", "RoiAlign",
         [("X", x), ("rois", rois), ("bi", np.array([1, 0, 1], np.int64))], ["Y"], 16,
         output_height=3, output_width=2, spatial_scale=1.0)
    grid = rng.uniform(-1.3, 1.3, (2, 3, 4, 2)).astype(np.float32)
    img = randn(2, 2, 4, 5)
    case("grid_sample_cubic_border", "GridSample", [("X", img), ("grid", grid)], ["Y"], 20,
         mode="cubic", padding_mode="border")
    case("grid_sample_nearest_reflection_align", "GridSample", [("X", img), ("grid", grid)], ["Y"], 20,
         mode="nearest", padding_mode="reflection", align_corners=1)
    case("grid_sample_linear_reflection", "GridSample", [("X", img), ("grid", grid)], ["Y"], 16,
         mode="bilinear", padding_mode="reflection")
    case("affine_grid_3d_no_align", "AffineGrid",
         [("theta", randn(2, 3, 4)), ("size", np.array([2, 1, 2, 3, 4], np.int64))], ["Y"], 20, ref="onnx")
    case("deform_conv_groups_mask", "DeformConv",
         [("X", randn(1, 4, 5, 5)), ("W", randn(4, 2, 2, 2)), ("offset", randn(1, 2 * 2 * 2 * 2, 4, 4)),
          ("B", randn(4)), ("mask", rng.random((1, 2 * 2 * 2, 4, 4)).astype(np.float32))], ["Y"], 22,
         ref="onnx", group=2, offset_group=2)
    case("deform_conv_stride_pad_dil", "DeformConv",
         [("X", randn(1, 2, 6, 6)), ("W", randn(3, 2, 2, 2)), ("offset", randn(1, 8, 3, 3, scale=0.5))],
         ["Y"], 22, ref="onnx", strides=[2, 2], pads=[1, 1, 1, 1], dilations=[2, 2])
    case("col2im_strides_dil_pads", "Col2Im",
         [("X", randn(1, 2 * 4, 4)), ("image", np.array([5, 6], np.int64)), ("block", np.array([2, 2], np.int64))],
         ["Y"], 18, ref="onnx", strides=[2, 3], dilations=[2, 1], pads=[0, 1, 1, 0])
    case("max_unpool_output_shape", "MaxUnpool",
         [("X", randn(1, 1, 2, 2)), ("I", np.array([[[[0, 3], [9, 15]]]], np.int64)),
          ("shape", np.array([1, 1, 5, 5], np.int64))], ["Y"], 22, ref="onnx", kernel_shape=[2, 2],
         strides=[2, 2])


def signal_and_losses():
    case("dft_inverse_onesided_len", "DFT",
         [("X", randn(2, 4, 2)), ("len", np.array(7, np.int64)), ("axis", np.array(1, np.int64))], ["Y"], 20,
         ref="onnx", inverse=1, onesided=1)
    case("dft_complex_axis2_pad", "DFT",
         [("X", randn(2, 3, 4, 2)), ("len", np.array(6, np.int64)), ("axis", np.array(-2, np.int64))], ["Y"],
         20, ref="onnx")
    case("dft17_real_onesided_axis1", "DFT", [("X", randn(3, 5, 1))], ["Y"], 17, ref="onnx", onesided=1)
    case("stft_complex_window", "STFT",
         [("X", randn(1, 16, 2)), ("step", np.array(3, np.int64)), ("w", randn(6)),
          ("len", np.array(6, np.int64))], ["Y"], 17, ref="onnx", onesided=0)
    case("hann_symmetric_double", "HannWindow", [("n", np.array(7, np.int64))], ["Y"], 17, ref="onnx",
         periodic=0, output_datatype=11)
    case("blackman_periodic", "BlackmanWindow", [("n", np.array(9, np.int32))], ["Y"], 17, ref="onnx")
    case("mel_weight_matrix_double", "MelWeightMatrix",
         [("bins", np.array(6, np.int64)), ("dft", np.array(32, np.int64)), ("rate", np.array(8000, np.int64)),
          ("lo", np.array(20.0, np.float32)), ("hi", np.array(3000.0, np.float32))], ["Y"], 17, ref="onnx",
         output_datatype=11)
    x = randn(3, 4, 2)
    t = np.array([[0, 3], [1, -1], [2, 1]], np.int64)
    case("nll_weight_ignore_none", "NegativeLogLikelihoodLoss", [("x", x), ("t", t), ("w", randn(4))],
         ["L"], 13, reduction="none", ignore_index=-1)
    case("nll_ignore_mean", "NegativeLogLikelihoodLoss", [("x", x), ("t", t)], ["L"], 22, ignore_index=-1)
    case("sce_logprob_sum_weight", "SoftmaxCrossEntropyLoss",
         [("x", x), ("t", np.array([[0, 3], [1, 2], [2, 1]], np.int64)), ("w", rng.random(4).astype(np.float32))],
         ["L", "logp"], 13, reduction="sum")
    case("causal_conv_silu_past", "CausalConvWithState",
         [("x", randn(2, 3, 5)), ("w", randn(3, 1, 3)), ("b", randn(3)), ("past", randn(2, 3, 2))],
         ["y", "state"], 27, ref="onnx", activation="silu")
    case("linear_attention_gated_delta_gqa", "LinearAttention",
         [("q", randn(1, 3, 4 * 2)), ("k", randn(1, 3, 2 * 2, scale=0.5)), ("v", randn(1, 3, 2 * 3)),
          ("past", randn(1, 2, 2, 3)), ("decay", randn(1, 3, 2 * 2, scale=0.1) - 0.2),
          ("beta", rng.random((1, 3, 2)).astype(np.float32))], ["o", "state"], 27, ref="onnx",
         q_num_heads=4, kv_num_heads=2, update_rule="gated_delta")


def flex_attention():
    """ai.onnx.preview.FlexAttention beyond the node tests: softmax_precision given for float16
    inputs, GQA with a value head size of its own and an explicit scale, and both modifiers reading
    constants (the reference evaluator expands the op's function body; it cannot resolve a
    modifier's outer-scope reads, which tests/ops_more/flex_attention_test.cc checks instead)."""
    pre = "ai.onnx.preview"
    def mod(name, body, dtype=onnx.TensorProto.FLOAT, shape=("B", "H", "L", "S")):
        return helper.make_graph(body, name, [helper.make_tensor_value_info("x", dtype, shape)],
                                 [helper.make_tensor_value_info("y", dtype, shape)])
    half = np.float16
    case("flex_attention_fp16_precision_gqa_scale", "FlexAttention",
         [("Q", randn(1, 4, 3, 8, dtype=half)), ("K", randn(1, 2, 5, 8, dtype=half)),
          ("V", randn(1, 2, 5, 6, dtype=half))], ["Y"], 23, ref="onnx", domain=pre,
         softmax_precision=onnx.TensorProto.FLOAT, scale=0.3)
    # A causal band in score_mod (keys j > i get -inf) and probabilities squared in prob_mod.
    band = np.where(np.arange(4)[None, :] > np.arange(3)[:, None], -np.inf, 0).astype(np.float32)
    score_mod = mod("band", [
        helper.make_node("Constant", [], ["m"], value=numpy_helper.from_array(band)),
        helper.make_node("Add", ["x", "m"], ["y"])])
    prob_mod = mod("square", [helper.make_node("Mul", ["x", "x"], ["y"])])
    case("flex_attention_band_score_mod_square_prob_mod", "FlexAttention",
         [("Q", randn(2, 2, 3, 4)), ("K", randn(2, 2, 4, 4)), ("V", randn(2, 2, 4, 3))], ["Y"], 23,
         ref="onnx", domain=pre, score_mod=score_mod, prob_mod=prob_mod)
    # Double inputs, softmax in float32 (softmax_precision = 1) with a float score_mod.
    case("flex_attention_double_in_float_softmax", "FlexAttention",
         [("Q", randn(1, 2, 2, 4, dtype=np.float64)), ("K", randn(1, 1, 3, 4, dtype=np.float64)),
          ("V", randn(1, 1, 3, 2, dtype=np.float64))], ["Y"], 23, ref="onnx", domain=pre,
         softmax_precision=onnx.TensorProto.FLOAT,
         score_mod=mod("halve", [
             helper.make_node("Constant", [], ["h"], value_float=0.5),
             helper.make_node("Mul", ["x", "h"], ["y"])]))


def main():
    sections = [attention, transformer_misc, indexing, detection, signal_and_losses, flex_attention]
    chosen = sys.argv[1:]
    if not chosen:
        shutil.rmtree(ROOT, ignore_errors=True)
    for f in sections:
        if not chosen or f.__name__ in chosen:
            f()


if __name__ == "__main__":
    main()
