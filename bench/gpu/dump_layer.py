"""Prints the nodes of one layer of an ONNX model (op, inputs, outputs, attributes; small
initializers by value), to read an exporter's pattern: python3 dump_layer.py MODEL SUBSTRING."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

m = onnx.load(sys.argv[1], load_external_data=False)
key = sys.argv[2]
inits = {i.name: i for i in m.graph.initializer}
print("opsets", [(o.domain, o.version) for o in m.opset_import])
for i in m.graph.input:
    print("input", i.name, [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim])
for n in m.graph.node:
    if key not in n.name and not any(key in o for o in n.output):
        continue
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
    attrs = {k: (v if not isinstance(v, onnx.TensorProto) else numpy_helper.to_array(v).tolist())
             for k, v in attrs.items()}
    print(f"{n.domain + '.' if n.domain else ''}{n.op_type} {list(n.input)} -> {list(n.output)} {attrs}")
    for x in n.input:
        if x in inits:
            t = inits[x]
            if np.prod(t.dims) <= 8 and t.data_location != onnx.TensorProto.EXTERNAL:
                print("   ", x, list(t.dims), numpy_helper.to_array(t).tolist())
            else:
                print("   ", x, list(t.dims), onnx.TensorProto.DataType.Name(t.data_type))
