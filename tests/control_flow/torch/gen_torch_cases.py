#!/usr/bin/env python3
"""TorchScript modules with data-dependent if and for/while loops, exported to ONNX (If and Loop).

Writes each case as an ONNX backend test folder (model.onnx, test_data_set_0/{input,output}_N.pb)
under tests/control_flow/torch/<name>/, with torch's own outputs as the reference; the C++ test
runs them with exec::conformance::run_case. Needs Debian's python3-torch (torch 1.13) for the export
and onnx + onnxruntime (which also must agree with torch) for writing and checking the .pb files:

  /usr/bin/python3 tests/control_flow/torch/gen_torch_cases.py export   # torch -> .onnx + .npy
  python3 tests/control_flow/torch/gen_torch_cases.py pack               # .npy -> .pb, ORT check
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def export():
    import torch

    torch.manual_seed(0)

    class Branchy(torch.nn.Module):
        """if on a computed condition, nested; the weights live in the branches."""

        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 4)
            self.b = torch.nn.Linear(4, 4)

        def forward(self, x):
            if x.sum() > 0:
                y = self.a(x)
                if y.mean() > 0:
                    y = torch.relu(y)
                else:
                    y = y * 2.0
            else:
                y = self.b(x) - x
            return y

    class Accumulate(torch.nn.Module):
        """for loop over a runtime trip count with a carried state and a list of steps."""

        def __init__(self):
            super().__init__()
            self.cell = torch.nn.Linear(3, 3)

        def forward(self, x, n: int):
            h = torch.zeros_like(x)
            for i in range(n):
                h = torch.tanh(self.cell(h) + x * float(i))
            return h

    class WhileLoop(torch.nn.Module):
        """while loop whose condition the body computes."""

        def forward(self, x):
            i = 0
            while bool(x.abs().max() < 10.0) and i < 20:
                x = x * 1.5 + 0.25
                i += 1
            return x, torch.tensor(i)

    cases = {
        "torch_if_nested": (Branchy(), [np.random.RandomState(1).randn(2, 4).astype(np.float32)]),
        "torch_if_nested_else": (Branchy(), [-np.abs(np.random.RandomState(2).randn(2, 4)).astype(np.float32)]),
        "torch_for_loop": (Accumulate(), [np.random.RandomState(3).randn(2, 3).astype(np.float32), np.array(4, dtype=np.int64)]),
        "torch_while_loop": (WhileLoop(), [np.random.RandomState(4).randn(3).astype(np.float32)]),
    }
    for name, (module, inputs) in cases.items():
        module.eval()
        scripted = torch.jit.script(module)
        args = tuple(torch.from_numpy(a) if a.ndim else torch.tensor(int(a)) for a in inputs)
        with torch.no_grad():
            outs = scripted(*args)
        if not isinstance(outs, tuple):
            outs = (outs,)
        d = os.path.join(HERE, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        names = ["x", "n"][: len(inputs)]
        torch.onnx.export(scripted, args, os.path.join(d, "model.onnx"), opset_version=13,
                          input_names=names, output_names=["y%d" % i for i in range(len(outs))])
        for i, a in enumerate(inputs):
            np.save(os.path.join(d, "test_data_set_0", "input_%d.npy" % i), a)
        for i, o in enumerate(outs):
            np.save(os.path.join(d, "test_data_set_0", "output_%d.npy" % i), o.numpy())
        print("exported", name)


def pack():
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    for name in sorted(os.listdir(HERE)):
        d = os.path.join(HERE, name)
        if not os.path.isfile(os.path.join(d, "model.onnx")):
            continue
        m = onnx.load(os.path.join(d, "model.onnx"))
        data = os.path.join(d, "test_data_set_0")
        feeds, wants = {}, []
        for i, vi in enumerate(m.graph.input):
            a = np.load(os.path.join(data, "input_%d.npy" % i))
            feeds[vi.name] = a
            t = numpy_helper.from_array(a, vi.name)
            open(os.path.join(data, "input_%d.pb" % i), "wb").write(t.SerializeToString())
        for i, vi in enumerate(m.graph.output):
            a = np.load(os.path.join(data, "output_%d.npy" % i))
            wants.append(a)
            t = numpy_helper.from_array(a, vi.name)
            open(os.path.join(data, "output_%d.pb" % i), "wb").write(t.SerializeToString())
        got = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        for g, w in zip(got, wants):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        for f in os.listdir(data):
            if f.endswith(".npy"):
                os.remove(os.path.join(data, f))
        ops = sorted({n.op_type for n in m.graph.node})
        print("packed", name, "ops:", ops, "onnxruntime agrees with torch")


if __name__ == "__main__":
    {"export": export, "pack": pack}[sys.argv[1]]()
