#!/usr/bin/env python3
"""Prints onnxruntime's outputs for the models of control_flow_test.cc (the references written there).

Run: python3 tests/control_flow/gen_references.py (needs onnx and onnxruntime)."""
MODELS = {}
MODELS["if_outer"] = """
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) <float[2] w = {10, 20}> {
  t = Mul(x, x)
  y = If (c) <then_branch = then_g () => (float[2] a) {
      a = Add(t, w)
    }, else_branch = else_g () => (float[2] b) {
      k = Constant <value = float[2] {1, 2}> ()
      b = Sub(x, k)
    }>
}"""
MODELS["if_nested"] = """
<ir_version: 8, opset_import: ["" : 17]>
g (bool c1, bool c2, float[2] x) => (float[2] y) <float[2] w = {10, 20}> {
  y = If (c1) <then_branch = then_g () => (float[2] a) {
      u = Mul(x, w)
      a = If (c2) <then_branch = tt () => (float[2] p) {
          p = Add(u, x)
        }, else_branch = te () => (float[2] q) {
          q = Sub(u, w)
        }>
    }, else_branch = else_g () => (float[2] b) {
      b = Neg(x)
    }>
}"""
MODELS["loop_full"] = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, bool c0, float[2] x) => (float[2] s, int64 it, float[?,2] ys) <float[2] w = {1, 10}, int64 zero = {0}> {
  s, it, ys = Loop (M, c0, x, zero) <body = body (int64 i, bool cin, float[2] acc, int64 cnt) => (bool cout, float[2] acc2, int64 cnt2, float[2] y) {
      one = Constant <value = int64 {1}> ()
      cnt2 = Add(cnt, one)
      acc2 = Add(acc, w)
      fi = Cast <to = 1> (i)
      y = Mul(acc2, fi)
      lim = Constant <value = int64 {3}> ()
      cout = Less(i, lim)
    }>
}"""
MODELS["loop_no_m"] = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] s) <float[2] w = {1, 10}, bool t = {1}> {
  s = Loop (omitted, t, x) <body = body (int64 i, bool cin, float[2] acc) => (bool cout, float[2] acc2) {
      acc2 = Add(acc, w)
      five = Constant <value = int64 {5}> ()
      cout = Less(i, five)
    }>
}"""
MODELS["loop_no_cond"] = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] x) => (float[2] s, float[?,2] ys) {
  s, ys = Loop (M, omitted, x) <body = body (int64 i, bool cin, float[2] acc) => (bool cout, float[2] acc2, float[2] y) {
      acc2 = Mul(acc, x)
      y = Identity(acc)
      cout = Identity(cin)
    }>
}"""
MODELS["scan9"] = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] s0, float[2,3] a, float[3,2] b) => (float[2] s, float[2,3] y1, float[3,2] y2) {
  s, y1, y2 = Scan (s0, a, b) <num_scan_inputs = 2, scan_input_axes = [1, 0], scan_input_directions = [1, 0],
      scan_output_axes = [1, -2], scan_output_directions = [0, 1],
      body = body (float[2] st, float[2] ai, float[2] bi) => (float[2] st2, float[2] o1, float[2] o2) {
      t = Add(st, ai)
      st2 = Mul(t, bi)
      o1 = Identity(t)
      o2 = Sub(st2, ai)
    }>
}"""
MODELS["scan8"] = """
<ir_version: 3, opset_import: ["" : 8]>
g (int64[2] lens, float[2,2] s0, float[2,3,2] x) => (float[2,2] s, float[2,3,2] y) {
  s, y = Scan (lens, s0, x) <num_scan_inputs = 1, directions = [1],
      body = body (float[2] st, float[2] xi) => (float[2] st2, float[2] o) {
      st2 = Add(st, xi)
      o = Mul(st2, xi)
    }>
}"""
import numpy as np, onnx, onnx.parser, onnxruntime as ort

inputs = {
 "if_outer": [dict(c=np.array(True), x=np.array([1,3],np.float32)), dict(c=np.array(False), x=np.array([1,3],np.float32))],
 "if_nested": [dict(c1=np.array(a), c2=np.array(b), x=np.array([1,3],np.float32)) for a,b in [(True,True),(True,False),(False,True)]],
 "loop_full": [dict(M=np.array(10,np.int64), c0=np.array(True), x=np.array([0.5,2],np.float32)),
               dict(M=np.array(2,np.int64), c0=np.array(True), x=np.array([0.5,2],np.float32)),
               dict(M=np.array(10,np.int64), c0=np.array(False), x=np.array([0.5,2],np.float32))],
 "loop_no_m": [dict(x=np.array([0.5,2],np.float32))],
 "loop_no_cond": [dict(M=np.array(3,np.int64), x=np.array([2,3],np.float32))],
 "scan9": [dict(s0=np.array([1,2],np.float32), a=np.arange(6,dtype=np.float32).reshape(2,3), b=(np.arange(6,dtype=np.float32).reshape(3,2)*0.5-1))],
 "scan8": [dict(lens=np.array([3,2],np.int64), s0=np.array([[1,2],[3,4]],np.float32), x=np.arange(12,dtype=np.float32).reshape(2,3,2))],
}
for name, text in MODELS.items():
    m = onnx.parser.parse_model(text)
    for n in m.graph.node:  # the C++ test drops an input named `omitted` after parsing
        for i, input_name in enumerate(n.input):
            if input_name == "omitted":
                n.input[i] = ""
    onnx.checker.check_model(m, full_check=True)
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in inputs[name]:
        out = s.run(None, feed)
        print(name, {k: v.tolist() for k, v in feed.items()}, "->", [ (o.shape, o.flatten().tolist()) for o in out])
