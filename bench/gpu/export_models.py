#!/usr/bin/env python3
"""Exports the GPU benchmark models on the GPU machine (torchvision, transformers; random weights,
torch.manual_seed(0)) as ONNX with a dynamic batch, each in the model-zoo layout with PyTorch's own
output for one input as the reference:

    OUT/NAME/model.onnx
    OUT/NAME/test_data_set_0/{input_*.pb, output_0.pb}     (batch 1; fp32 on the CPU, TF32 off)

NAME: resnet18, shufflenet_v2_x1_0, squeezenet1_1 (the shared models' architectures, for a GPU
machine the 64 MiB carry cannot bring them all to),
resnet50, mobilenet_v2, bert_base (BERT-base, seq 128, input_ids + attention_mask).

    python3 bench/gpu/export_models.py OUT [NAME ...]
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def vision(name):
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    if name in ("mobilenet_v2", "shufflenet_v2_x1_0"):
        # Random BN statistics give outputs ~1e-8 (see ../shared/models/README.md): calibrate them
        # on random inputs so the reference is O(1).
        model.train()
        with torch.no_grad():
            for _ in range(8):
                model(torch.randn(8, 3, 224, 224))
        model.eval()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    return model, (x,), ["input"], {"input": {0: "batch"}, "output": {0: "batch"}}, ["output"]


class BertWrapper(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def bert_base():
    import transformers

    torch.manual_seed(0)
    config = transformers.BertConfig()  # bert-base: 12 layers, hidden 768, 12 heads
    config.attn_implementation = "eager"
    try:
        bert = transformers.BertModel(config, add_pooling_layer=False, attn_implementation="eager")
    except TypeError:
        bert = transformers.BertModel(config, add_pooling_layer=False)
    model = BertWrapper(bert).eval()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, config.vocab_size, (1, 128), generator=g)
    mask = torch.ones(1, 128, dtype=torch.int64)
    axes = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch"}, "output": {0: "batch"}}
    return model, (ids, mask), ["input_ids", "attention_mask"], axes, ["output"]


MAKERS = {
    "resnet18": lambda: vision("resnet18"),
    "resnet50": lambda: vision("resnet50"),
    "mobilenet_v2": lambda: vision("mobilenet_v2"),
    "shufflenet_v2_x1_0": lambda: vision("shufflenet_v2_x1_0"),
    "squeezenet1_1": lambda: vision("squeezenet1_1"),
    "bert_base": bert_base,
}


def export(name, out):
    model, args, input_names, axes, output_names = MAKERS[name]()
    folder = os.path.join(out, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    with torch.no_grad():
        ref = model(*args)
        try:
            torch.onnx.export(model, args, path, input_names=input_names,
                              output_names=output_names, dynamic_axes=axes, opset_version=17,
                              do_constant_folding=False, dynamo=False)
        except TypeError:
            torch.onnx.export(model, args, path, input_names=input_names,
                              output_names=output_names, dynamic_axes=axes, opset_version=17,
                              do_constant_folding=False)
    onnx.checker.check_model(path)
    for i, a in enumerate(args):
        t = numpy_helper.from_array(a.numpy(), input_names[i])
        open(os.path.join(data, f"input_{i}.pb"), "wb").write(t.SerializeToString())
    t = numpy_helper.from_array(ref.numpy().astype(np.float32), output_names[0])
    open(os.path.join(data, "output_0.pb"), "wb").write(t.SerializeToString())
    print(f"{name}: {path} ({os.path.getsize(path) / 2**20:.1f} MiB), reference max |y| "
          f"{float(ref.abs().max()):.3g}", flush=True)


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(MAKERS)
    for n in names:
        export(n, out)


if __name__ == "__main__":
    main()
