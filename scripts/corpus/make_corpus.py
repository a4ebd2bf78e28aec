#!/usr/bin/env python3
"""Builds the third-party model corpus (issue 29) outside the repository.

Every model here was written by someone else's exporter: either shipped inside a PyPI package (the
package is installed by name with pip; nothing is fetched from a model hub) or exported here with
the exporter a user has (skl2onnx, spox, onnxruntime's quantize_dynamic / quantize_static). Each
lands in OUT/NAME/ as

    model.onnx                     the model as shipped / exported
    test_data_set_0/input_K.pb     fixed inputs (seeded)
    test_data_set_0/output_K.pb    onnxruntime's outputs on them (CPU, graph optimizations off)
    meta.json                      source, exporter, input shapes

so `xopt validate OUT/NAME/model.onnx` compares against onnxruntime. scripts/corpus/check_corpus.py
runs the pipeline on all of them and prints the table.

Packages it needs (pip install NAME): silero-vad and rapidocr-onnxruntime (both with --no-deps:
only their .onnx files are used), spox, skl2onnx, scikit-learn. A model whose package is missing is
skipped with a line saying so.

Usage: python3 scripts/corpus/make_corpus.py [--out /work/corpus] [--only NAME,NAME]
"""
import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    return os.path.dirname(spec.origin)


def ort_run(model_path, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return names, sess.run(None, feeds)


def write_case(out_dir, name, model, feeds, source, exporter, note=""):
    d = os.path.join(out_dir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    path = os.path.join(d, "model.onnx")
    if isinstance(model, str):
        shutil.copyfile(model, path)
    else:
        onnx.save(model, path)
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i.name for i in m.graph.input if i.name not in inits]
    for k, iname in enumerate(inputs):
        t = numpy_helper.from_array(feeds[iname], iname)
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    names, outs = ort_run(path, {k: v for k, v in feeds.items() if k in inputs})
    for k, (oname, v) in enumerate(zip(names, outs)):
        t = numpy_helper.from_array(np.asarray(v), oname)
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    meta = {
        "name": name,
        "source": source,
        "exporter": exporter,
        "note": note,
        "inputs": {k: list(feeds[k].shape) for k in inputs},
        "input_dtypes": {k: str(feeds[k].dtype) for k in inputs},
        "outputs": {n: list(np.asarray(v).shape) for n, v in zip(names, outs)},
    }
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"corpus: {name}: {len(m.graph.node)} nodes, inputs {meta['inputs']}")


# ---------------------------------------------------------------------------------------------
# Models shipped inside packages


def silero_feeds(rng, batch=1, samples=512, with_sr=True, state=True, hc=False):
    f = {"input": (rng.standard_normal((batch, samples)) * 0.1).astype(np.float32)}
    if state:
        f["state"] = (rng.standard_normal((2, batch, 128)) * 0.1).astype(np.float32)
    if with_sr:
        f["sr"] = np.array(16000, dtype=np.int64)
    if hc:
        f["h"] = np.zeros((1, 1, 128), np.float32)
        f["c"] = np.zeros((1, 1, 128), np.float32)
    return f


def silero_models(out, rng):
    d = package_dir("silero_vad")
    if d is None:
        print("corpus: skip silero-vad (pip install --no-deps silero-vad)")
        return
    data = os.path.join(d, "data")
    src = "PyPI silero-vad"
    write_case(out, "silero_vad", os.path.join(data, "silero_vad.onnx"), silero_feeds(rng), src,
               "spox (no initializers: Constants in nested If branches, If on int64 sr)")
    write_case(out, "silero_vad_16k_op15", os.path.join(data, "silero_vad_16k_op15.onnx"),
               silero_feeds(rng), src, "torch.onnx TorchScript (12 If, 2 LSTM)")
    half = silero_feeds(rng, with_sr=False)
    write_case(out, "silero_vad_half", os.path.join(data, "silero_vad_half.onnx"), half, src,
               "torch.onnx TorchScript (half variant)")
    seq = {"input": (rng.standard_normal((4, 576)) * 0.1).astype(np.float32),
           "h": np.zeros((1, 1, 128), np.float32), "c": np.zeros((1, 1, 128), np.float32)}
    write_case(out, "silero_vad_16k_sequence", os.path.join(data, "silero_vad_16k_sequence.onnx"),
               seq, src, "torch.onnx TorchScript (sequence, LSTM)")
    write_case(out, "silero_vad_op18_ifless", os.path.join(data, "silero_vad_op18_ifless.onnx"),
               silero_feeds(rng), src, "torch.onnx (opset 18, LSTM unrolled to Gemm)")
    ov = silero_feeds(rng, samples=576, with_sr=False)
    write_case(out, "silero_vad_openvino_16k", os.path.join(data, "silero_vad_openvino_16k.onnx"),
               ov, src, "torch.onnx TorchScript (static shapes, LSTM)")


def rapidocr_models(out, rng):
    d = package_dir("rapidocr_onnxruntime")
    if d is None:
        print("corpus: skip rapidocr-onnxruntime (pip install --no-deps rapidocr-onnxruntime)")
        return
    models = os.path.join(d, "models")
    src = "PyPI rapidocr-onnxruntime"
    img = lambda h, w: {"x": rng.uniform(-1, 1, (1, 3, h, w)).astype(np.float32)}
    write_case(out, "ppocr_v4_det", os.path.join(models, "ch_PP-OCRv4_det_infer.onnx"),
               img(96, 128), src, "Paddle2ONNX")
    write_case(out, "ppocr_v4_rec", os.path.join(models, "ch_PP-OCRv4_rec_infer.onnx"),
               img(48, 160), src, "Paddle2ONNX")
    write_case(out, "ppocr_mobile_v2_cls", os.path.join(models, "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
               img(48, 192), src, "Paddle2ONNX")


# ---------------------------------------------------------------------------------------------
# Models exported here


def quantized_models(out, rng):
    """onnxruntime.quantization on the package models above: dynamic (com.microsoft
    DynamicQuantizeLSTM, ConvInteger, MatMulInteger, DynamicQuantizeLinear) and static (QDQ and
    QOperator), calibrated on seeded inputs."""
    from onnxruntime import quantization as q

    def case_dir(name):
        return os.path.join(out, name)

    def load_feeds(name):
        d = os.path.join(case_dir(name), "test_data_set_0")
        m = onnx.load(os.path.join(case_dir(name), "model.onnx"), load_external_data=False)
        inits = {i.name for i in m.graph.initializer}
        inputs = [i.name for i in m.graph.input if i.name not in inits]
        feeds = {}
        for k, n in enumerate(inputs):
            t = onnx.TensorProto()
            with open(os.path.join(d, f"input_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            feeds[n] = numpy_helper.to_array(t)
        return feeds

    tmp = tempfile.mkdtemp()
    for base, name, kw in [
        ("silero_vad_openvino_16k", "silero_vad_openvino_qdyn", {}),
        ("silero_vad_16k_sequence", "silero_vad_sequence_qdyn", {}),
        ("ppocr_v4_rec", "ppocr_v4_rec_qdyn", {}),
        ("ppocr_mobile_v2_cls", "ppocr_mobile_v2_cls_qdyn", {}),
    ]:
        src = os.path.join(case_dir(base), "model.onnx")
        if not os.path.exists(src):
            continue
        # quant_pre_process (onnxruntime's basic optimization and shape inference) first, as
        # onnxruntime's docs say: it turns the exporters' Constant weights into initializers,
        # without which quantize_dynamic refuses them.
        pre = os.path.join(tmp, name + ".pre.onnx")
        q.quant_pre_process(src, pre, skip_symbolic_shape=True)
        dst = os.path.join(tmp, name + ".onnx")
        q.quantize_dynamic(pre, dst, weight_type=q.QuantType.QUInt8, **kw)
        write_case(out, name, dst, load_feeds(base), "corpus " + base,
                   "onnxruntime quantize_dynamic (QUInt8)")

    class Reader(q.CalibrationDataReader):
        def __init__(self, feeds_list):
            self.it = iter(feeds_list)

        def get_next(self):
            return next(self.it, None)

    for base, shape in [("ppocr_mobile_v2_cls", (1, 3, 48, 192)), ("ppocr_v4_det", (1, 3, 96, 128))]:
        src = os.path.join(case_dir(base), "model.onnx")
        if not os.path.exists(src):
            continue
        pre = os.path.join(tmp, base + ".pre.onnx")
        q.quant_pre_process(src, pre, skip_symbolic_shape=True)
        for fmt, tag in [(q.QuantFormat.QDQ, "qdq"), (q.QuantFormat.QOperator, "qop")]:
            calib = [{"x": rng.uniform(-1, 1, shape).astype(np.float32)} for _ in range(4)]
            dst = os.path.join(tmp, f"{base}_{tag}.onnx")
            q.quantize_static(pre, dst, Reader(calib), quant_format=fmt,
                              activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)
            write_case(out, f"{base}_static_{tag}", dst, load_feeds(base), "corpus " + base,
                       f"onnxruntime quantize_static ({tag.upper()}, U8 activations, S8 weights)")
    shutil.rmtree(tmp, ignore_errors=True)


def spox_models(out, rng):
    try:
        import spox.opset.ai.onnx.v17 as op
        from spox import Tensor, argument, build
    except ImportError:
        print("corpus: skip spox (pip install spox)")
        return
    # The silero_vad.onnx pattern in small: no initializers, every weight a Constant inside the
    # branches of an If on an int64 scalar input, an LSTM in each branch.
    x = argument(Tensor(np.float32, ("T", 1, 8)))
    sr = argument(Tensor(np.int64, ()))

    def branch(hidden, seed):
        r = np.random.default_rng(seed)

        def body():
            w = op.constant(value=r.standard_normal((1, 4 * hidden, 8)).astype(np.float32) * 0.3)
            rr = op.constant(value=r.standard_normal((1, 4 * hidden, hidden)).astype(np.float32) * 0.3)
            b = op.constant(value=r.standard_normal((1, 8 * hidden)).astype(np.float32) * 0.1)
            y, yh, _ = op.lstm(x, w, rr, b, hidden_size=hidden)
            s = op.shape(yh)
            flat = op.reshape(yh, op.concat([op.slice(s, op.const([1]), op.const([2])),
                                             op.const([-1])], axis=0))
            return [op.sigmoid(op.reduce_mean(flat, axes=[1], keepdims=0))]
        return body

    cond = op.equal(sr, op.const(np.int64(16000)))
    (y,) = op.if_(cond, then_branch=branch(16, 1), else_branch=branch(16, 2))
    model = build({"x": x, "sr": sr}, {"y": y})
    feeds = {"x": rng.standard_normal((6, 1, 8)).astype(np.float32), "sr": np.array(16000, np.int64)}
    write_case(out, "spox_if_lstm", model, feeds, "exported here", "spox 0.18 (If + LSTM, Constants only)")

    # Plain spox MLP with a Where/Cast mix: weights as Constants at top level.
    a = argument(Tensor(np.float32, ("N", 16)))
    r = np.random.default_rng(3)
    h = op.relu(op.add(op.matmul(a, op.const(r.standard_normal((16, 32)).astype(np.float32))),
                       op.const(r.standard_normal(32).astype(np.float32))))
    h2 = op.matmul(h, op.const(r.standard_normal((32, 4)).astype(np.float32)))
    o = op.softmax(op.where(op.greater(h2, op.const(np.float32(0))), h2, op.mul(h2, op.const(np.float32(0.1)))))
    model = build({"a": a}, {"o": o})
    write_case(out, "spox_mlp", model, {"a": rng.standard_normal((3, 16)).astype(np.float32)},
               "exported here", "spox 0.18 (MLP, Constants)")


def sklearn_models(out, rng):
    try:
        from skl2onnx import to_onnx
        from sklearn.decomposition import PCA
        from sklearn.linear_model import LinearRegression, LogisticRegression
        from sklearn.neural_network import MLPClassifier, MLPRegressor
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        print("corpus: skip skl2onnx (pip install skl2onnx scikit-learn)")
        return
    X = rng.standard_normal((64, 10)).astype(np.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)
    yr = (X @ rng.standard_normal(10)).astype(np.float32)
    feeds = {"X": X[:5]}
    src = "exported here"
    exp = "skl2onnx 1.20"
    mlp = MLPRegressor(hidden_layer_sizes=(16, 8), max_iter=200, random_state=0).fit(X, yr)
    write_case(out, "skl_mlp_regressor", to_onnx(mlp, X[:1], target_opset=17), feeds, src, exp)
    mlpc = MLPClassifier(hidden_layer_sizes=(12,), max_iter=200, random_state=0).fit(X, y)
    write_case(out, "skl_mlp_classifier",
               to_onnx(mlpc, X[:1], target_opset={"": 17, "ai.onnx.ml": 3},
                       options={id(mlpc): {"zipmap": False}}), feeds, src, exp)
    lin = LinearRegression().fit(X, yr)
    write_case(out, "skl_linear_regression", to_onnx(lin, X[:1], target_opset={"": 17, "ai.onnx.ml": 3}),
               feeds, src, exp)
    pipe = make_pipeline(StandardScaler(), PCA(n_components=4), LogisticRegression()).fit(X, y)
    write_case(out, "skl_scaler_pca_logreg",
               to_onnx(pipe, X[:1], target_opset={"": 17, "ai.onnx.ml": 3},
                       options={id(pipe): {"zipmap": False}}), feeds, src, exp)


GENERATORS = [silero_models, rapidocr_models, spox_models, sklearn_models, quantized_models]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/work/corpus")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for gen in GENERATORS:
        rng = np.random.default_rng(29)
        try:
            gen(args.out, rng)
        except Exception as e:  # one exporter failing leaves the others
            print(f"corpus: {gen.__name__} failed: {type(e).__name__}: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
