#!/usr/bin/env python3
"""TorchScript modules that build and consume lists of tensors, exported to ONNX (Loop with
SequenceInsert, SplitToSequence, ConcatFromSequence, SequenceLength, ...).

Writes each case as an ONNX backend test folder (model.onnx, test_data_set_0/{input,output}_N.pb)
under tests/sequence/torch/<name>/, with torch's own outputs as the reference; the C++ test runs
them with exec::conformance::run_case. Needs Debian's python3-torch (torch 1.13) for the export and
onnx + onnxruntime (which also must agree with torch) for writing and checking the .pb files:

  /usr/bin/python3 tests/sequence/torch/gen_torch_cases.py export   # torch -> .onnx + .npy
  python3 tests/sequence/torch/gen_torch_cases.py pack               # .npy -> .pb, ORT check
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def export():
    import torch
    from typing import List

    torch.manual_seed(0)

    class Rows(torch.nn.Module):
        """a list appended to in a for loop over the rows, then stacked and concatenated."""

        def forward(self, x):
            parts: List[torch.Tensor] = []
            for i in range(x.size(0)):
                parts.append(x[i] * float(i + 1))
            return torch.stack(parts, 0), torch.cat(parts, 0)

    class Chunks(torch.nn.Module):
        """torch.split into a list, a loop over it building another list, its length."""

        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x):
            chunks = torch.split(x, 2, dim=1)
            outs: List[torch.Tensor] = []
            for c in chunks:
                outs.append(torch.relu(self.lin(c)) * 2.0)
            return torch.cat(outs, 1), len(outs)

    cases = {
        "torch_list_rows": (Rows(), [np.random.RandomState(1).randn(3, 5).astype(np.float32)]),
        "torch_list_chunks": (Chunks(), [np.random.RandomState(2).randn(3, 6).astype(np.float32)]),
    }
    for name, (module, inputs) in cases.items():
        module.eval()
        scripted = torch.jit.script(module)
        args = tuple(torch.from_numpy(a) for a in inputs)
        with torch.no_grad():
            outs = scripted(*args)
        if not isinstance(outs, tuple):
            outs = (outs,)
        outs = tuple(o if isinstance(o, torch.Tensor) else torch.tensor(o) for o in outs)
        d = os.path.join(HERE, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        torch.onnx.export(scripted, args, os.path.join(d, "model.onnx"), opset_version=13,
                          input_names=["x"], output_names=["y%d" % i for i in range(len(outs))])
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
        ops = set()

        def walk(g):
            for n in g.node:
                ops.add(n.op_type)
                for a in n.attribute:
                    if a.HasField("g"):
                        walk(a.g)

        walk(m.graph)
        print("packed", name, "ops:", sorted(ops), "onnxruntime agrees with torch")


if __name__ == "__main__":
    {"export": export, "pack": pack}[sys.argv[1]]()
