#!/usr/bin/env python3
"""Writes the sample models in samples/ from their ONNX text, with seeded random weights.

    python3 samples/make_samples.py

tiny_cnn: two Conv+BatchNorm+Relu blocks, global pooling and a classifier, plus the leftovers an
exporter tends to leave behind (Identity on a weight, an inference-mode Dropout, a Shape whose value
is static, an unused initializer), so `xopt --passes=cleanup` has work to do. The folder also gets
test_data_set_0/{input_0,output_0}.pb (the output computed with onnxruntime when it is installed).
"""
import os

import numpy as np
import onnx
from onnx import numpy_helper, parser

HERE = os.path.dirname(os.path.abspath(__file__))

TINY_CNN = """
<ir_version: 8, opset_import: ["" : 17], producer_name: "xopt samples/make_samples.py">
tiny_cnn (float[N,3,16,16] image) => (float[N,10] logits, int64[3] feature_shape) {
  w1_alias = Identity(w1)
  c1 = Conv <pads = [1, 1, 1, 1]> (image, w1_alias, b1)
  n1 = BatchNormalization <epsilon = 0.00001> (c1, g1, be1, m1, v1)
  r1 = Relu(n1)
  c2 = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (r1, w2, b2)
  n2 = BatchNormalization <epsilon = 0.00001> (c2, g2, be2, m2, v2)
  r2 = Relu(n2)
  shape = Shape <start = 1> (r2)
  feature_shape = Identity(shape)
  pooled = GlobalAveragePool(r2)
  flat = Flatten <axis = 1> (pooled)
  dropped = Dropout(flat)
  logits = Gemm <transB = 1> (dropped, fc_w, fc_b)
}
"""


def tiny_cnn_weights(rng):
    def conv(name, cout, cin, k):
        return {
            f"w{name}": rng.normal(0, (2.0 / (cin * k * k)) ** 0.5, (cout, cin, k, k)),
            f"b{name}": rng.normal(0, 0.1, (cout,)),
            f"g{name}": rng.uniform(0.5, 1.5, (cout,)),
            f"be{name}": rng.normal(0, 0.1, (cout,)),
            f"m{name}": rng.normal(0, 0.1, (cout,)),
            f"v{name}": rng.uniform(0.5, 1.5, (cout,)),
        }

    w = {}
    w.update(conv("1", 8, 3, 3))
    w.update(conv("2", 16, 8, 3))
    w["fc_w"] = rng.normal(0, 0.25, (10, 16))
    w["fc_b"] = rng.normal(0, 0.1, (10,))
    w["unused_bias"] = np.zeros((10,))
    return {k: v.astype(np.float32) for k, v in w.items()}


def write_tensor(path, array):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array).SerializeToString())


def main():
    rng = np.random.default_rng(20240601)
    model = parser.parse_model(TINY_CNN)
    for name, value in tiny_cnn_weights(rng).items():
        model.graph.initializer.append(numpy_helper.from_array(value, name))
    onnx.checker.check_model(model, full_check=True)
    folder = os.path.join(HERE, "tiny_cnn")
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    image = rng.normal(0, 1, (2, 3, 16, 16)).astype(np.float32)
    write_tensor(os.path.join(folder, "test_data_set_0", "input_0.pb"), image)
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime not installed: no reference output written")
        return
    session = ort.InferenceSession(os.path.join(folder, "model.onnx"),
                                   providers=["CPUExecutionProvider"])
    logits = session.run(["logits"], {"image": image})[0]
    write_tensor(os.path.join(folder, "test_data_set_0", "output_0.pb"), logits)
    print("wrote", folder)


if __name__ == "__main__":
    main()
