"""Generates extra ONNX-domain NN kernel cases in tests/kernels_nn/data/onnx/.

The ONNX backend node tests leave some attribute combinations and element types of the NN ops
uncovered (double/float16 convolution, grouped/dilated ConvTranspose, MaxPool storage_order,
integer MatMul/Gemm, Resize-10 / Upsample, per-activation BatchNormalization, ...). These cases
fill the gaps; the expected outputs come from onnxruntime's CPU provider, or from numpy where
onnxruntime has no kernel for the type (integer Gemm/MatMul). Same layout as the node tests.

    python3 tests/kernels_nn/gen/gen_onnx.py
"""

import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "onnx")
rng = np.random.default_rng(4321)


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def case(name, op, inputs, opset, n_outputs=1, output_names=None, ref=None, use_onnx_reference=False, **attrs):
    in_names = [n if a is not None else "" for n, a in inputs]
    out_names = output_names or [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op, in_names, out_names, **attrs)
    vi, feeds = [], {}
    for n, a in inputs:
        if a is None:
            continue
        vi.append(helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
        feeds[n] = a
    graph = helper.make_graph([node], name, vi, [onnx.ValueInfoProto(name=n) for n in out_names if n])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    if ref is not None:
        results = ref(*[a for _, a in inputs if a is not None])
        results = results if isinstance(results, (list, tuple)) else [results]
        source = "numpy"
    elif use_onnx_reference:
        results = ReferenceEvaluator(model).run(None, feeds)
        source = "onnx.reference (onnxruntime differs)"
    else:
        try:
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            results = sess.run(None, feeds)
            source = "onnxruntime"
        except Exception as e:  # no onnxruntime kernel for this type: the ONNX reference evaluator
            if "NOT_IMPLEMENTED" not in str(e):
                raise
            results = ReferenceEvaluator(model).run(None, feeds)
            source = "onnx.reference"
    with open(os.path.join(OUT, "SOURCES.txt"), "a") as f:
        f.write(f"{name}: {source}\n")
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
            f.write(numpy_helper.from_array(np.asarray(r), out_names[i]).SerializeToString())


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)

    # Conv: dtypes, N-D, groups, dilations, asymmetric pads, auto_pad.
    case("conv_double_group_dilation", "Conv",
         [("x", randn(2, 4, 7, 6, dtype=np.float64)), ("w", randn(6, 2, 3, 2, dtype=np.float64)),
          ("b", randn(6, dtype=np.float64))], 17, group=2, dilations=[2, 1], strides=[1, 2], pads=[1, 0, 2, 1])
    case("conv_float16", "Conv", [("x", randn(1, 3, 5, 5, dtype=np.float16)), ("w", randn(2, 3, 3, 3, dtype=np.float16))],
         17, pads=[1, 1, 1, 1],
         ref=lambda x, w: conv_ref(x.astype(np.float32), w.astype(np.float32), pads=[1, 1, 1, 1]).astype(np.float16))
    case("conv_3d_group_stride_pads", "Conv",
         [("x", randn(1, 4, 5, 6, 5)), ("w", randn(4, 2, 3, 2, 3)), ("b", randn(4))], 17,
         group=2, strides=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1])
    case("conv_1d_same_lower_stride", "Conv", [("x", randn(2, 3, 9)), ("w", randn(5, 3, 4))], 17,
         auto_pad="SAME_LOWER", strides=[2])
    case("conv_2d_valid_depthwise", "Conv", [("x", randn(1, 3, 8, 7)), ("w", randn(3, 1, 3, 3)), ("b", randn(3))], 11,
         auto_pad="VALID", group=3, strides=[2, 2])
    case("conv_pointwise", "Conv", [("x", randn(2, 5, 4, 4)), ("w", randn(7, 5, 1, 1)), ("b", randn(7))], 11)

    # ConvTranspose: output_padding, groups, dilations, pads, 1-D and 3-D, auto_pad.
    case("convtranspose_group_dilation_outpad", "ConvTranspose",
         [("x", randn(1, 4, 3, 4)), ("w", randn(4, 3, 3, 2)), ("b", randn(6))], 17,
         group=2, strides=[2, 3], dilations=[2, 1], output_padding=[1, 2], pads=[1, 0, 0, 1])
    case("convtranspose_1d_pads_stride", "ConvTranspose", [("x", randn(2, 3, 5)), ("w", randn(3, 2, 4))], 17,
         strides=[3], pads=[1, 2])
    case("convtranspose_3d_group", "ConvTranspose",
         [("x", randn(1, 2, 3, 3, 2)), ("w", randn(2, 2, 2, 2, 3)), ("b", randn(4))], 17, group=2, strides=[1, 2, 2])
    for ap, shape in [("NOTSET", [6, 8]), ("SAME_UPPER", [6, 8]), ("SAME_LOWER", [5, 8])]:
        case(f"convtranspose_output_shape_{ap.lower()}", "ConvTranspose",
             [("x", randn(1, 2, 3, 3)), ("w", randn(2, 2, 3, 3)), ("b", randn(2))], 17, strides=[2, 2],
             output_shape=shape, **({} if ap == "NOTSET" else {"auto_pad": ap}))
    case("convtranspose_double", "ConvTranspose",
         [("x", randn(1, 2, 3, 3, dtype=np.float64)), ("w", randn(2, 3, 3, 3, dtype=np.float64))], 17, strides=[2, 2])

    # Pooling.
    case("maxpool_storage_order_indices", "MaxPool", [("x", randn(2, 2, 5, 6))], 12, n_outputs=2,
         kernel_shape=[2, 3], strides=[2, 2], storage_order=1, pads=[1, 1, 0, 1])
    case("maxpool_3d_indices_dilation_ceil", "MaxPool", [("x", randn(1, 2, 5, 6, 7))], 12, n_outputs=2,
         kernel_shape=[2, 2, 3], strides=[2, 2, 2], dilations=[2, 1, 2], ceil_mode=1)
    case("maxpool_int8", "MaxPool", [("x", rng.integers(-128, 127, (1, 2, 6, 6)).astype(np.int8))], 12,
         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    case("maxpool_double_1d_same", "MaxPool", [("x", randn(2, 3, 9, dtype=np.float64))], 12,
         kernel_shape=[4], strides=[2], auto_pad="SAME_UPPER")
    case("averagepool_1d_ceil_include_pad", "AveragePool", [("x", randn(2, 3, 10))], 19,
         kernel_shape=[3], strides=[3], pads=[1, 1], ceil_mode=1, count_include_pad=1)
    case("averagepool_3d_strides_pads", "AveragePool", [("x", randn(1, 2, 5, 5, 6))], 11,
         kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1])
    case("averagepool_double_same_lower", "AveragePool", [("x", randn(1, 2, 7, 6, dtype=np.float64))], 11,
         kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_LOWER")
    case("lppool_2d_p3", "LpPool", [("x", randn(1, 2, 6, 6))], 18, kernel_shape=[3, 2], strides=[2, 2], p=3,
         pads=[1, 0, 1, 1])
    case("globallppool", "GlobalLpPool", [("x", randn(2, 3, 4, 5))], 7, p=3)
    case("globalaveragepool_3d_double", "GlobalAveragePool", [("x", randn(2, 3, 2, 3, 4, dtype=np.float64))], 7)
    case("globalmaxpool_1d", "GlobalMaxPool", [("x", randn(2, 3, 7))], 7)
    case("lrn_even_size_3d", "LRN", [("x", randn(2, 6, 3, 4, 2))], 13, size=4, alpha=0.002, beta=0.6, bias=1.5,
         ref=lambda x: lrn_ref(x, 4, 0.002, 0.6, 1.5))
    case("lrn_odd_size", "LRN", [("x", randn(1, 5, 3, 3))], 13, size=3, alpha=0.01, beta=0.7, bias=2.0)

    # Normalization.
    c = 3
    stats = lambda: [("s", randn(c)), ("b", randn(c)), ("m", randn(c)), ("v", np.abs(randn(c)) + 0.5)]
    case("batchnorm_double_3d", "BatchNormalization",
         [("x", randn(2, c, 4, dtype=np.float64))] + [(n, a.astype(np.float64)) for n, a in stats()], 15, epsilon=1e-3)
    case("batchnorm_opset9_5d", "BatchNormalization", [("x", randn(1, c, 2, 3, 2))] + stats(), 9)
    case("batchnorm_training_opset15", "BatchNormalization", [("x", randn(3, c, 4, 2))] + stats(), 15,
         n_outputs=3, training_mode=1, momentum=0.8, epsilon=1e-4,
         ref=lambda x, s, b, m, v: bn_train_ref(x, s, b, m, v, 0.8, 1e-4))
    case("instancenorm_3d_double", "InstanceNormalization",
         [("x", randn(2, c, 3, 2, 4, dtype=np.float64)), ("s", randn(c, dtype=np.float64)),
          ("b", randn(c, dtype=np.float64))], 7, epsilon=1e-3)
    case("layernorm_axis1_stats", "LayerNormalization", [("x", randn(2, 3, 4)), ("s", randn(3, 4)), ("b", randn(3, 4))],
         17, n_outputs=3, axis=1, epsilon=1e-3)
    case("layernorm_double_bcast_scale", "LayerNormalization",
         [("x", randn(2, 3, 4, dtype=np.float64)), ("s", randn(4, dtype=np.float64))], 17, axis=-2)

    # Gemm / MatMul: integer types (numpy reference), broadcasting, scalars.
    case("gemm_double_c_row", "Gemm", [("a", randn(3, 4, dtype=np.float64)), ("b", randn(5, 4, dtype=np.float64)),
                                       ("c", randn(1, 5, dtype=np.float64))], 13, transB=1, alpha=0.5, beta=2.0)
    case("gemm_int32", "Gemm", [("a", rng.integers(-5, 5, (3, 4)).astype(np.int32)),
                                ("b", rng.integers(-5, 5, (4, 2)).astype(np.int32)),
                                ("c", rng.integers(-5, 5, (2,)).astype(np.int32))], 13,
         ref=lambda a, b, c: (a @ b + c).astype(np.int32))
    case("gemm_float16_transa", "Gemm", [("a", randn(4, 3, dtype=np.float16)), ("b", randn(4, 2, dtype=np.float16))],
         13, transA=1, alpha=1.5,
         ref=lambda a, b: (1.5 * (a.astype(np.float32).T @ b.astype(np.float32))).astype(np.float16))
    case("matmul_int64_bcast", "MatMul", [("a", rng.integers(-9, 9, (2, 1, 3, 4)).astype(np.int64)),
                                          ("b", rng.integers(-9, 9, (3, 4, 2)).astype(np.int64))], 13,
         ref=lambda a, b: np.matmul(a, b))
    case("matmul_uint32_1d_2d", "MatMul", [("a", rng.integers(0, 9, (4,)).astype(np.uint32)),
                                           ("b", rng.integers(0, 9, (2, 4, 3)).astype(np.uint32))], 13,
         ref=lambda a, b: np.matmul(a, b))
    case("matmul_int32_3d_1d", "MatMul", [("a", rng.integers(-9, 9, (2, 3, 4)).astype(np.int32)),
                                          ("b", rng.integers(-9, 9, (4,)).astype(np.int32))], 13,
         ref=lambda a, b: np.matmul(a, b))
    case("matmul_double_bcast_both", "MatMul", [("a", randn(3, 1, 2, 4, dtype=np.float64)),
                                                ("b", randn(1, 5, 4, 3, dtype=np.float64))], 13)
    case("matmul_float16", "MatMul", [("a", randn(2, 3, 4, dtype=np.float16)), ("b", randn(4, 5, dtype=np.float16))], 13)

    # Resize / Upsample at the older opsets, and Resize-11 modes the node tests skip.
    x4 = randn(1, 2, 4, 5)
    case("resize10_nearest_down", "Resize", [("x", x4), ("s", np.array([1, 1, 0.6, 0.7], np.float32))], 10)
    case("resize10_nearest_up", "Resize", [("x", x4), ("s", np.array([1, 1, 1.5, 2.3], np.float32))], 10)
    case("resize10_linear_mixed", "Resize", [("x", x4), ("s", np.array([1, 1, 0.5, 1.7], np.float32))], 10,
         mode="linear")
    case("upsample7_nearest_attr", "Upsample", [("x", x4)], 7, scales=[1.0, 1.0, 2.0, 3.0])
    case("upsample9_linear", "Upsample", [("x", x4), ("s", np.array([1, 1, 2.5, 1.5], np.float32))], 9,
         mode="linear")
    case("resize11_cubic_asymmetric_sizes", "Resize",
         [("x", x4), ("roi", None), ("s", None), ("sz", np.array([1, 2, 7, 3], np.int64))], 13,
         mode="cubic", coordinate_transformation_mode="asymmetric")
    case("resize11_linear_pytorch_half_pixel_up", "Resize",
         [("x", x4), ("roi", None), ("s", np.array([1, 1, 1.5, 2.0], np.float32))], 13,
         mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
    case("resize11_nearest_ceil_half_pixel_down", "Resize",
         [("x", x4), ("roi", np.array([], np.float32)), ("s", np.array([1, 1, 0.5, 0.6], np.float32))], 11,
         mode="nearest", nearest_mode="ceil")
    case("resize13_linear_3d_align_corners", "Resize",
         [("x", randn(1, 1, 3, 4, 2)), ("roi", None), ("s", np.array([1, 1, 2, 0.5, 1.5], np.float32))], 13,
         mode="linear", coordinate_transformation_mode="align_corners")
    case("resize13_nearest_uint8", "Resize",
         [("x", rng.integers(0, 255, (1, 1, 3, 3)).astype(np.uint8)), ("roi", None),
          ("s", np.array([1, 1, 2, 1.5], np.float32))], 13, mode="nearest")

    # Appended cases (new ones go last so the data of earlier cases stays byte-identical).
    # Integer results are rounded half to even and saturated, as the ONNX reference does;
    # onnxruntime truncates instead.
    case("resize13_linear_uint8_round", "Resize",
         [("x", rng.integers(0, 255, (1, 1, 3, 4)).astype(np.uint8)), ("roi", None),
          ("s", np.array([1, 1, 1.7, 1.3], np.float32))], 13, mode="linear", use_onnx_reference=True)
    case("resize18_linear_antialias_up_down", "Resize",
         [("x", randn(1, 2, 6, 5)), ("roi", None), ("s", np.array([1, 1, 0.4, 1.6], np.float32))], 18,
         mode="linear", antialias=1)
    case("resize18_cubic_antialias_sizes", "Resize",
         [("x", randn(1, 1, 7, 6)), ("roi", None), ("s", None), ("sz", np.array([3, 9], np.int64))], 18,
         mode="cubic", antialias=1, axes=[2, 3])
    case("resize18_axes_not_smaller_nearest", "Resize",
         [("x", randn(1, 2, 4, 6)), ("roi", None), ("s", None), ("sz", np.array([5, 5], np.int64))], 18,
         mode="nearest", axes=[3, 2], keep_aspect_ratio_policy="not_smaller", nearest_mode="floor")
    case("resize19_half_pixel_symmetric_nearest", "Resize",
         [("x", randn(1, 1, 5, 4)), ("roi", None), ("s", np.array([1, 1, 1.3, 0.7], np.float32))], 19,
         mode="nearest", coordinate_transformation_mode="half_pixel_symmetric")
    case("resize18_tf_crop_axes_extrapolate", "Resize",
         [("x", randn(1, 2, 5, 5)), ("roi", np.array([0.2, -0.1, 0.9, 1.2], np.float32)), ("s", None),
          ("sz", np.array([4, 6], np.int64))], 18,
         mode="linear", axes=[2, 3], coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-3.0)
    case("batchnorm_opset7_spatial0", "BatchNormalization",
         [("x", randn(2, 2, 3)), ("s", randn(2, 3)), ("b", randn(2, 3)), ("m", randn(2, 3)),
          ("v", np.abs(randn(2, 3)) + 0.5)], 7, spatial=0,
         ref=lambda x, s, b, m, v: (s * (x - m) / np.sqrt(v + 1e-5) + b).astype(np.float32))
    case("layernorm_float16_stats", "LayerNormalization",
         [("x", randn(2, 3, 8, dtype=np.float16)), ("s", randn(8, dtype=np.float16)), ("b", randn(8, dtype=np.float16))],
         17, n_outputs=3)
    case("maxpool_float16_indices", "MaxPool", [("x", randn(1, 2, 5, 5, dtype=np.float16))], 12, n_outputs=2,
         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    case("averagepool_float16", "AveragePool", [("x", randn(1, 2, 5, 5, dtype=np.float16))], 11,
         kernel_shape=[2, 2], strides=[1, 2])
    case("matmul_k0", "MatMul", [("a", randn(2, 0)), ("b", randn(0, 3))], 13)


def conv_ref(x, w, pads):
    x = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    y = np.zeros((n, m, h - kh + 1, wd - kw + 1), np.float32)
    for i in range(y.shape[2]):
        for j in range(y.shape[3]):
            y[:, :, i, j] = np.einsum("nchw,mchw->nm", x[:, :, i:i + kh, j:j + kw], w)
    return y


def lrn_ref(x, size, alpha, beta, bias):
    # The spec: the square sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)].
    c = x.shape[1]
    sq = np.zeros_like(x, dtype=np.float64)
    for i in range(c):
        lo, hi = max(0, i - (size - 1) // 2), min(c - 1, i + (size - 1 + 1) // 2)
        sq[:, i] = (x[:, lo:hi + 1].astype(np.float64) ** 2).sum(axis=1)
    return (x / (bias + alpha / size * sq) ** beta).astype(x.dtype)


def bn_train_ref(x, s, b, m, v, momentum, eps):
    axes = (0, 2, 3)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    sh = (1, -1, 1, 1)
    y = s.reshape(sh) * (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) + b.reshape(sh)
    return [y.astype(np.float32), (m * momentum + mean * (1 - momentum)).astype(np.float32),
            (v * momentum + var * (1 - momentum)).astype(np.float32)]


if __name__ == "__main__":
    main()
