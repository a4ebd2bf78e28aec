"""Generates the tensor-kernel test cases in tests/kernels_tensor/data/.

The ONNX backend node tests cover few older opsets, element types and attribute combinations of the
tensor-manipulation, shape, reduction and softmax ops; these cases fill the gaps. Each case is a
one-node model plus test_data_set_0/{input_N,output_N}.pb in the layout of the node tests. Expected
outputs come from onnxruntime's CPU provider, or from the ONNX reference evaluator where onnxruntime
has no kernel for the type or opset (data/SOURCES.txt says which). Shapes are tiny so the checked-in
data stays small. Re-run after changing a case:

    python3 tests/kernels_tensor/gen/gen_cases.py
"""

import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
rng = np.random.default_rng(20261129)
sources = []

ORT_LOG = ort.SessionOptions()
ORT_LOG.log_severity_level = 4


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def randi(lo, hi, *shape, dtype=np.int64):
    return rng.integers(lo, hi, size=shape).astype(dtype)


def strings(*shape):
    words = ["a", "bc", "", "def", "xyz", "hello", "q", "zz"]
    return np.array([words[i % len(words)] + str(i) for i in range(int(np.prod(shape)))],
                    dtype=object).reshape(shape)


def bf16(a):
    """float32 array -> the ONNX bfloat16 numpy type (onnx's ml_dtypes)."""
    import ml_dtypes
    return a.astype(ml_dtypes.bfloat16)


def tensor_type(a):
    if a.dtype == object:
        return onnx.TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(a.dtype)


def case(name, op, inputs, n_outputs=1, opset=18, source="auto", expected=None, **attrs):
    """inputs: list of (name, array, or None for an omitted optional input). source: "auto" (onnxruntime,
    else the reference evaluator), "ort", "ref", or "numpy" with the outputs given as `expected`."""
    in_names = [n if a is not None else "" for n, a in inputs]
    out_names = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op, in_names, out_names, **attrs)
    vi, feeds = [], {}
    for n, a in inputs:
        if a is None:
            continue
        vi.append(helper.make_tensor_value_info(n, tensor_type(a), a.shape))
        feeds[n] = a
    outs = [onnx.ValueInfoProto(name=n) for n in out_names]
    graph = helper.make_graph([node], name, vi, outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    results, used = None, None
    if source == "numpy":
        results, used = expected, "numpy"
    if source in ("auto", "ort"):
        try:
            sess = ort.InferenceSession(model.SerializeToString(), ORT_LOG,
                                        providers=["CPUExecutionProvider"])
            results, used = sess.run(None, feeds), "onnxruntime"
        except Exception as e:  # no kernel for the type / opset
            if source == "ort":
                raise
            why = str(e).splitlines()[0][:100]
    if results is None:
        results = ReferenceEvaluator(model).run(None, feeds)
        used = "onnx.reference" + ("" if source == "ref" else f" (onnxruntime: {why})")
    results = [np.asarray(r) for r in results]
    for o, r in zip(graph.output, results):
        o.CopyFrom(helper.make_tensor_value_info(o.name, tensor_type(r), r.shape))
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate((n, a) for n, a in inputs if a is not None):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for i, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r, out_names[i]).SerializeToString())
    sources.append(f"{name}: {used}")


def i64(*v):
    return np.array(v, dtype=np.int64)


def reshape_family():
    x = randn(2, 3, 4)
    case("reshape_opset5_zero_minus1", "Reshape", [("x", x), ("s", i64(0, -1))], opset=5)
    case("reshape_opset13_int8", "Reshape", [("x", randi(-9, 9, 2, 6, dtype=np.int8)), ("s", i64(3, 4))],
         opset=13)
    case("reshape_allowzero_empty", "Reshape",
         [("x", np.zeros((0, 3), np.float32)), ("s", i64(3, 0))], opset=14, allowzero=1)
    case("reshape_string", "Reshape", [("x", strings(2, 3)), ("s", i64(-1))], opset=14)
    case("reshape_bool", "Reshape", [("x", randn(4, 2) > 0), ("s", i64(2, 2, 2))], opset=19)
    case("flatten_opset9_axis0", "Flatten", [("x", x)], opset=9, axis=0)
    case("flatten_opset11_axis_rank", "Flatten", [("x", x)], opset=11, axis=3)
    case("flatten_string_neg", "Flatten", [("x", strings(2, 2, 3))], opset=13, axis=-2)
    case("flatten_float16", "Flatten", [("x", randn(2, 3, 2).astype(np.float16))], opset=13)
    case("squeeze_opset11_attr_neg", "Squeeze", [("x", randn(1, 3, 1, 2))], opset=11, axes=[-2])
    case("squeeze_opset11_all", "Squeeze", [("x", randn(1, 3, 1, 2))], opset=11)
    case("squeeze_opset13_input", "Squeeze", [("x", randn(1, 3, 1, 2)), ("a", i64(0, 2))], opset=13)
    case("squeeze_opset13_no_axes_uint16", "Squeeze",
         [("x", randi(0, 9, 1, 2, 1, dtype=np.uint16))], opset=13)
    case("squeeze_string", "Squeeze", [("x", strings(1, 3)), ("a", i64(0))], opset=13)
    case("unsqueeze_opset11_attr", "Unsqueeze", [("x", randn(3, 2))], opset=11, axes=[0, -1])
    case("unsqueeze_opset13_scalar", "Unsqueeze", [("x", np.array(2.5, np.float32)), ("a", i64(0, 1))],
         opset=13)
    case("unsqueeze_double_unsorted", "Unsqueeze", [("x", randn(2, 3, dtype=np.float64)), ("a", i64(3, 0))],
         opset=13)
    case("unsqueeze_string", "Unsqueeze", [("x", strings(2)), ("a", i64(-1))], opset=13)


def transpose_concat_split():
    x = randn(2, 3, 4, 5)
    case("transpose_4d_0312", "Transpose", [("x", x)], opset=13, perm=[0, 3, 1, 2])
    case("transpose_4d_2031", "Transpose", [("x", x)], opset=13, perm=[2, 0, 3, 1])
    case("transpose_default_int64", "Transpose", [("x", randi(-5, 5, 2, 3, 4))], opset=7)
    case("transpose_float16", "Transpose", [("x", randn(3, 4).astype(np.float16))], opset=13)
    case("transpose_bfloat16", "Transpose", [("x", bf16(randn(3, 2, 2)))], opset=13, perm=[1, 2, 0])
    case("transpose_string", "Transpose", [("x", strings(2, 3, 2))], opset=13, perm=[2, 0, 1])
    case("transpose_bool_5d", "Transpose", [("x", randn(2, 1, 3, 2, 2) > 0)], opset=13,
         perm=[4, 2, 0, 3, 1])
    case("concat_opset4_axis1", "Concat", [("a", randn(2, 1)), ("b", randn(2, 3))], opset=4, axis=1)
    case("concat_empty_input", "Concat", [("a", randn(0, 3)), ("b", randn(2, 3))], opset=13, axis=0)
    case("concat_string_neg", "Concat", [("a", strings(2, 2)), ("b", strings(2, 1))], opset=13, axis=-1)
    case("concat_uint8_three", "Concat",
         [("a", randi(0, 255, 1, 2, dtype=np.uint8)), ("b", randi(0, 255, 3, 2, dtype=np.uint8)),
          ("c", randi(0, 255, 2, 2, dtype=np.uint8))], opset=13, axis=0)
    case("split_opset2_attr", "Split", [("x", randn(6, 2))], n_outputs=3, opset=2, split=[1, 2, 3])
    case("split_opset11_equal_neg", "Split", [("x", randn(2, 6))], n_outputs=2, opset=11, axis=-1)
    case("split_opset13_input", "Split", [("x", randn(5, 2)), ("s", i64(2, 3))], n_outputs=2, opset=13)
    case("split_opset18_uneven", "Split", [("x", randi(0, 9, 2, 10))], n_outputs=4, opset=18, axis=1,
         num_outputs=4)
    case("split_opset18_more_parts_than_elements", "Split", [("x", randn(3, 2))], n_outputs=3, opset=18,
         axis=1, num_outputs=3)
    case("split_opset18_5_in_4", "Split", [("x", randi(0, 9, 5))], n_outputs=4, opset=18, num_outputs=4)
    case("split_string", "Split", [("x", strings(4, 2))], n_outputs=2, opset=13)
    case("split_float16_zero_part", "Split",
         [("x", randn(3, 2).astype(np.float16)), ("s", i64(0, 3))], n_outputs=2, opset=13)


def slice_cases():
    x = randn(4, 5, 6)
    case("slice_opset1_attrs", "Slice", [("x", x)], opset=1, starts=[1, -4], ends=[3, 1000], axes=[0, 2])
    case("slice_opset9_no_axes", "Slice", [("x", x)], opset=9, starts=[0, 1], ends=[-1, 4])
    case("slice_opset10_inputs", "Slice", [("x", x), ("s", i64(1)), ("e", i64(-1)), ("a", i64(1))],
         opset=10)
    case("slice_neg_steps_all_axes", "Slice",
         [("x", x), ("s", i64(-1, 10, 5)), ("e", i64(-100, 0, -7)), ("a", i64(0, 1, 2)), ("st", i64(-1, -2, -3))],
         opset=13)
    case("slice_step_past_end", "Slice",
         [("x", x), ("s", i64(1)), ("e", i64(6)), ("a", i64(-1)), ("st", i64(10))], opset=13)
    case("slice_int32_indices", "Slice",
         [("x", randi(0, 99, 6, 4, dtype=np.int32)), ("s", np.array([4], np.int32)),
          ("e", np.array([0], np.int32)), ("a", np.array([0], np.int32)), ("st", np.array([-2], np.int32))],
         opset=13)
    case("slice_string", "Slice", [("x", strings(5, 3)), ("s", i64(1, 0)), ("e", i64(5, 2)),
                                   ("a", i64(0, 1)), ("st", i64(2, 1))], opset=13)
    case("slice_empty_result", "Slice", [("x", x), ("s", i64(3)), ("e", i64(3)), ("a", i64(0))], opset=13)
    case("slice_int64_extremes", "Slice",
         [("x", x), ("s", i64(np.iinfo(np.int64).max)), ("e", i64(np.iinfo(np.int64).min)), ("a", i64(2)),
          ("st", i64(-1))], opset=13)


def gather_scatter():
    x = randn(5, 4, 3)
    case("gather_opset1_axis1", "Gather", [("x", x), ("i", i64(3, 0, 3))], opset=1, axis=1)
    case("gather_neg_axis_2d_idx", "Gather", [("x", x), ("i", np.array([[-1, 0], [2, -3]], np.int32))],
         opset=13, axis=-1)
    case("gather_scalar_index", "Gather", [("x", x), ("i", np.array(-2, np.int64))], opset=13, axis=0)
    # onnxruntime 1.32 returns "" for all but the first column of a string Gather: reference instead.
    case("gather_string", "Gather", [("x", strings(4, 2)), ("i", i64(3, 1, 3))], opset=13, source="ref")
    case("gather_bool_empty_idx", "Gather", [("x", randn(3, 2) > 0), ("i", np.zeros((0,), np.int64))],
         opset=13, axis=0)
    case("gather_float16", "Gather", [("x", randn(4, 3).astype(np.float16)), ("i", i64(1, 1))], opset=13,
         axis=1)
    case("gather_elements_axis1_int32", "GatherElements",
         [("x", randn(3, 4)), ("i", np.array([[0, -1], [3, 2], [-4, 1]], np.int32))], opset=13, axis=1)
    case("gather_elements_3d_axis0", "GatherElements", [("x", x), ("i", randi(-5, 5, 2, 4, 3))], opset=13,
         axis=0)
    case("gather_elements_3d_neg_axis_smaller", "GatherElements", [("x", x), ("i", randi(0, 3, 4, 2, 2))],
         opset=11, axis=-1)
    data = randn(4, 3, 2)
    case("scatternd_opset11_slices", "ScatterND", [("x", data), ("i", i64(3, 1).reshape(2, 1)),
                                                   ("u", randn(2, 3, 2))], opset=11)
    case("scatternd_opset16_add_dupes", "ScatterND",
         [("x", data), ("i", np.array([[0, 1], [0, 1], [3, 2]], np.int64)), ("u", randn(3, 2))], opset=16,
         reduction="add")
    case("scatternd_opset16_mul_int32", "ScatterND",
         [("x", randi(1, 5, 3, 3, dtype=np.int32)), ("i", np.array([[1], [1]], np.int64)),
          ("u", randi(1, 5, 2, 3, dtype=np.int32))], opset=16, reduction="mul")
    case("scatternd_opset18_max", "ScatterND",
         [("x", data), ("i", np.array([[[1, 0, 1]], [[1, 0, 1]]], np.int64)), ("u", randn(2, 1))], opset=18,
         reduction="max")
    case("scatternd_opset18_min_neg_index", "ScatterND",
         [("x", data), ("i", np.array([[-1, -3]], np.int64)), ("u", randn(1, 2))], opset=18, reduction="min")
    case("scatternd_string", "ScatterND",
         [("x", strings(3, 2)), ("i", np.array([[2], [0]], np.int64)), ("u", strings(2, 2))], opset=13)
    case("scatternd_full_index_double", "ScatterND",
         [("x", randn(2, 2, dtype=np.float64)), ("i", np.array([[1, 1], [0, 1]], np.int64)),
          ("u", randn(2, dtype=np.float64))], opset=13)


def expand_tile_pad():
    case("expand_rank_grow", "Expand", [("x", randn(3, 1)), ("s", i64(2, 1, 4))], opset=8)
    case("expand_shape_smaller", "Expand", [("x", randn(2, 1, 3)), ("s", i64(4, 1))], opset=13)
    case("expand_scalar_int8", "Expand", [("x", np.array(7, np.int8)), ("s", i64(2, 3))], opset=13)
    case("expand_string", "Expand", [("x", strings(1, 2)), ("s", i64(3, 1))], opset=13)
    case("expand_zero_dim", "Expand", [("x", randn(1, 3)), ("s", i64(0, 3))], opset=13)
    case("tile_3d_bool", "Tile", [("x", randn(2, 1, 2) > 0), ("r", i64(1, 3, 2))], opset=13)
    case("tile_opset6_double", "Tile", [("x", randn(2, 3, dtype=np.float64)), ("r", i64(2, 1))], opset=6)
    case("tile_string", "Tile", [("x", strings(2)), ("r", i64(3))], opset=13)
    case("tile_zero_repeat", "Tile", [("x", randn(2, 2)), ("r", i64(0, 2))], opset=13)
    x = randn(2, 3, 4)
    case("pad_opset2_reflect", "Pad", [("x", x)], opset=2, mode="reflect", pads=[0, 1, 2, 0, 2, 1])
    case("pad_opset2_constant_value", "Pad", [("x", x)], opset=2, pads=[1, 0, 0, 0, 1, 1], value=2.5)
    case("pad_opset11_edge", "Pad", [("x", x), ("p", i64(0, 2, 3, 1, 0, 2))], opset=11, mode="edge")
    case("pad_opset11_no_value_int32", "Pad", [("x", randi(-9, 9, 2, 3, dtype=np.int32)),
                                                ("p", i64(1, 1, 1, 1))], opset=11)
    case("pad_opset13_negative_constant", "Pad",
         [("x", x), ("p", i64(-1, 1, -1, 0, -1, 2)), ("v", np.array(9.0, np.float32))], opset=13)
    case("pad_opset18_axes_reflect", "Pad", [("x", x), ("p", i64(2, 1, 1, 0)), ("v", None), ("a", i64(-1, 1))],
         opset=18, mode="reflect")
    case("pad_opset19_wrap_axes", "Pad", [("x", x), ("p", i64(3, 1)), ("v", None), ("a", i64(2))], opset=19,
         mode="wrap")
    case("pad_opset19_wrap_all", "Pad", [("x", randn(3, 2)), ("p", i64(1, 2, 2, 1))], opset=19, mode="wrap")
    case("pad_edge_negative_crop", "Pad", [("x", randn(4, 5)), ("p", i64(-1, 2, 1, -2))], opset=13,
         mode="edge")
    case("pad_reflect_negative_crop", "Pad", [("x", randn(5, 6)), ("p", i64(1, -2, -1, 2))], opset=13,
         mode="reflect")
    case("pad_string_constant", "Pad", [("x", strings(2, 2)), ("p", i64(1, 0, 0, 1)),
                                        ("v", np.array("pad", dtype=object))], opset=13, source="ref")
    case("pad_bool_edge", "Pad", [("x", randn(2, 3) > 0), ("p", i64(0, 1, 1, 0))], opset=13, mode="edge")
    case("pad_float16_reflect", "Pad", [("x", randn(3, 4).astype(np.float16)), ("p", i64(1, 2, 1, 1))],
         opset=13, mode="reflect")
    case("pad_uint8_constant_value", "Pad", [("x", randi(0, 200, 2, 2, dtype=np.uint8)),
                                             ("p", i64(0, 1, 1, 0)), ("v", np.array(255, np.uint8))],
         opset=13)


def shape_cases():
    x = randn(2, 3, 4, 5)
    case("shape_opset1", "Shape", [("x", x)], opset=1)
    case("shape_start_neg_end_neg", "Shape", [("x", x)], opset=15, start=-3, end=-1)
    case("shape_scalar", "Shape", [("x", np.array(1.0, np.float32))], opset=15)
    case("shape_string", "Shape", [("x", strings(3, 1))], opset=15, start=1)
    case("size_scalar", "Size", [("x", np.array(1, np.int32))], opset=13)
    case("size_empty_bool", "Size", [("x", np.zeros((3, 0), bool))], opset=13)
    case("constantofshape_default", "ConstantOfShape", [("s", i64(2, 3))], opset=9)
    case("constantofshape_int32", "ConstantOfShape", [("s", i64(3))], opset=9,
         value=numpy_helper.from_array(np.array([-7], np.int32)))
    case("constantofshape_bool_scalar", "ConstantOfShape", [("s", np.zeros((0,), np.int64))], opset=9,
         value=numpy_helper.from_array(np.array([True])))
    case("constantofshape_float16", "ConstantOfShape", [("s", i64(2, 2))], opset=20,
         value=numpy_helper.from_array(np.array([1.5], np.float16)))
    case("constantofshape_uint64_zero_dim", "ConstantOfShape", [("s", i64(2, 0))], opset=9,
         value=numpy_helper.from_array(np.array([5], np.uint64)))
    for t, s, l, d in [(np.int16, 2, -7, -3), (np.int32, -5, 20, 4), (np.int64, 10, 10, 1),
                       (np.float64, 0.5, 2.0, 0.25), (np.float32, 1.0, -1.0, -0.3), (np.int64, 0, 5, -1)]:
        name = f"range_{np.dtype(t).name}_{'neg' if d < 0 else 'pos'}_{abs(int((l - s) * 100))}"
        case(name, "Range", [("s", np.array(s, t)), ("l", np.array(l, t)), ("d", np.array(d, t))], opset=11)


def misc_cases():
    case("cumsum_3d_axis1_int64_axis", "CumSum", [("x", randn(2, 3, 4)), ("a", np.array(1, np.int64))],
         opset=11)
    case("cumsum_exclusive_reverse_neg_axis", "CumSum", [("x", randn(3, 4)), ("a", np.array(-1, np.int32))],
         opset=14, exclusive=1, reverse=1)
    case("cumsum_uint32_reverse", "CumSum", [("x", randi(0, 9, 5, dtype=np.uint32)), ("a", np.array(0, np.int32))],
         opset=14, reverse=1)
    case("cumsum_double_exclusive", "CumSum",
         [("x", randn(2, 3, dtype=np.float64)), ("a", np.array(0, np.int64))], opset=14, exclusive=1)
    case("cumsum_float16", "CumSum", [("x", randn(4, 2).astype(np.float16)), ("a", np.array(0, np.int64))],
         opset=14)
    x = randn(2, 8, 2, 3)
    case("depthtospace_opset1", "DepthToSpace", [("x", x)], opset=1, blocksize=2)
    case("depthtospace_crd_b2", "DepthToSpace", [("x", x)], opset=13, blocksize=2, mode="CRD")
    case("depthtospace_dcr_int32", "DepthToSpace", [("x", randi(0, 99, 1, 9, 2, 2, dtype=np.int32))], opset=13,
         blocksize=3)
    case("spacetodepth_b2_double", "SpaceToDepth", [("x", randn(2, 3, 4, 6, dtype=np.float64))], opset=13,
         blocksize=2)
    case("spacetodepth_opset1_b3", "SpaceToDepth", [("x", randn(1, 2, 3, 6))], opset=1, blocksize=3)
    case("spacetodepth_opset28_crd", "SpaceToDepth", [("x", randn(2, 3, 4, 6))], opset=28, blocksize=2,
         mode="CRD", source="ref")
    case("depthtospace_opset28_crd_string", "DepthToSpace", [("x", strings(1, 8, 2, 1))], opset=28,
         blocksize=2, mode="CRD", source="ref")
    case("trilu_lower_k_neg_int64", "Trilu", [("x", randi(-9, 9, 2, 4, 5)), ("k", np.array(-1, np.int64))],
         opset=14, upper=0)
    case("trilu_upper_k_big", "Trilu", [("x", randn(3, 4)), ("k", np.array(10, np.int64))], opset=14)
    case("trilu_upper_bool", "Trilu", [("x", randn(4, 3) > -1), ("k", np.array(1, np.int64))], opset=14)
    case("trilu_lower_double_wide", "Trilu", [("x", randn(3, 6, dtype=np.float64))], opset=14, upper=0)
    v = np.array([[3, 1, 3, 2, 3, 1], [0, 0, -1, 5, 5, 4]], np.float32)
    case("topk_opset1_attr_k", "TopK", [("x", v)], n_outputs=2, opset=1, k=3)
    case("topk_opset10_input_k_axis0", "TopK", [("x", randn(4, 3)), ("k", i64(2))], n_outputs=2, opset=10,
         axis=0)
    case("topk_smallest_ties_int32", "TopK", [("x", v.astype(np.int32)), ("k", i64(4))], n_outputs=2,
         opset=11, largest=0)
    case("topk_largest_ties_double_middle", "TopK", [("x", np.round(randn(2, 5, 3, dtype=np.float64))),
                                                      ("k", i64(3))], n_outputs=2, opset=11, axis=1)
    case("topk_k0", "TopK", [("x", randn(2, 3)), ("k", i64(0))], n_outputs=2, opset=11)
    case("topk_uint8_full", "TopK", [("x", randi(0, 4, 7, dtype=np.uint8)), ("k", i64(7))], n_outputs=2,
         opset=11)
    case("topk_float16", "TopK", [("x", randn(2, 6).astype(np.float16)), ("k", i64(2))], n_outputs=2,
         opset=11, largest=0)


def reduce_cases():
    x = randn(2, 3, 4)
    xi = randi(-5, 6, 2, 3, 4, dtype=np.int32)
    for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]:
        low = op[6:].lower()
        data = np.abs(x) + 0.5 if op == "ReduceLogSum" else x
        case(f"reduce_{low}_opset11_axes_0_2", op, [("x", data)], opset=11, axes=[0, 2], keepdims=0)
        case(f"reduce_{low}_opset11_default", op, [("x", data)], opset=11)
        input_since = 13 if op == "ReduceSum" else 18
        case(f"reduce_{low}_opset{input_since}_axes_input_neg", op, [("x", data), ("a", i64(-1, 0))],
             opset=input_since, keepdims=1)
        case(f"reduce_{low}_opset{input_since}_empty_axes_noop", op, [("x", data), ("a", i64())],
             opset=input_since, noop_with_empty_axes=1)
        case(f"reduce_{low}_opset{input_since}_empty_axes_reduce_all", op, [("x", data), ("a", i64())],
             opset=input_since, keepdims=0)
        # The spec leaves the mean of nothing undefined (onnxruntime says 0): numpy's NaN is kept.
        case(f"reduce_{low}_empty_set", op, [("x", np.zeros((2, 0, 3), np.float32)), ("a", i64(1))],
             opset=input_since, source="ref" if op == "ReduceMean" else "auto")
        if op not in ("ReduceLogSum", "ReduceLogSumExp"):
            case(f"reduce_{low}_int32_axis1", op, [("x", xi)], opset=13 if op != "ReduceSum" else 11,
                 axes=[1], keepdims=0)
        case(f"reduce_{low}_double_scalar_in", op, [("x", np.array(1.5, np.float64))], opset=13)
    case("reduce_max_opset20_bool", "ReduceMax", [("x", randn(3, 4) > 0.5), ("a", i64(1))], opset=20)
    case("reduce_min_opset20_bool_empty", "ReduceMin", [("x", np.zeros((2, 0), bool)), ("a", i64(1))], opset=20)
    case("reduce_max_int8", "ReduceMax", [("x", randi(-100, 100, 3, 4, dtype=np.int8))], opset=13, axes=[0])
    case("reduce_min_uint8_empty", "ReduceMin", [("x", np.zeros((0, 4), np.uint8))], opset=13, axes=[0])
    case("reduce_max_int64_empty", "ReduceMax", [("x", np.zeros((3, 0), np.int64))], opset=13, axes=[1])
    case("reduce_sum_float16", "ReduceSum", [("x", randn(4, 8).astype(np.float16)), ("a", i64(1))], opset=13)
    # bfloat16: the mean computed exactly and rounded once (the reference accumulates in bfloat16).
    xb = bf16(randn(3, 4))
    case("reduce_mean_bfloat16", "ReduceMean", [("x", xb), ("a", i64(0))], opset=18, source="numpy",
         expected=[bf16(xb.astype(np.float64).mean(axis=0, keepdims=True))])
    case("reduce_sum_uint64", "ReduceSum", [("x", randi(0, 100, 3, 2, dtype=np.uint64))], opset=11,
         axes=[0])
    case("reduce_prod_int64_keep", "ReduceProd", [("x", randi(-3, 4, 2, 5))], opset=13, axes=[1])
    case("reduce_sum_4d_alternating", "ReduceSum", [("x", randn(2, 3, 4, 5)), ("a", i64(0, 2))], opset=13)
    case("reduce_mean_middle_keep", "ReduceMean", [("x", randn(3, 5, 4))], opset=13, axes=[1])
    for op in ["ArgMax", "ArgMin"]:
        low = op.lower()
        y = np.round(randn(3, 4, 5)).astype(np.float32)
        case(f"{low}_opset11_axis1_keep", op, [("x", y)], opset=11, axis=1)
        case(f"{low}_opset12_last_index_neg", op, [("x", y)], opset=12, axis=-1, select_last_index=1,
             keepdims=0)
        case(f"{low}_int32_axis0", op, [("x", randi(-2, 3, 4, 3, dtype=np.int32))], opset=13, axis=0)
        case(f"{low}_uint8_last", op, [("x", randi(0, 3, 2, 6, dtype=np.uint8))], opset=13, axis=1,
             select_last_index=1)
        case(f"{low}_double", op, [("x", randn(5, dtype=np.float64))], opset=13, keepdims=0)
        case(f"{low}_float16", op, [("x", randn(3, 4).astype(np.float16))], opset=13, axis=1)


def softmax_cases():
    x = randn(2, 3, 4) * 3
    for op in ["Softmax", "LogSoftmax"]:
        low = op.lower()
        case(f"{low}_opset11_axis0", op, [("x", x)], opset=11, axis=0)
        case(f"{low}_opset11_default_axis1", op, [("x", x)], opset=11)
        case(f"{low}_opset11_axis_neg1", op, [("x", x)], opset=11, axis=-1)
        case(f"{low}_opset1_axis2", op, [("x", x)], opset=1, axis=2)
        case(f"{low}_opset13_axis1", op, [("x", x)], opset=13, axis=1)
        case(f"{low}_opset13_axis0_double", op, [("x", x.astype(np.float64))], opset=13, axis=0)
        case(f"{low}_float16", op, [("x", x.astype(np.float16))], opset=13)
        case(f"{low}_large_values", op, [("x", np.array([[1000, 1001, 999], [-1000, -1e4, -999]], np.float32))],
             opset=13)


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    reshape_family()
    transpose_concat_split()
    slice_cases()
    gather_scatter()
    expand_tile_pad()
    shape_cases()
    misc_cases()
    reduce_cases()
    softmax_cases()
    with open(os.path.join(OUT, "SOURCES.txt"), "w") as f:
        f.write("\n".join(sources) + "\n")
    print(f"{len(sources)} cases written to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
