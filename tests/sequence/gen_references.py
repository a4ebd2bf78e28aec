#!/usr/bin/env python3
"""Prints onnxruntime's outputs for the models of sequence_test.cc (the expected values there).

  python3 tests/sequence/gen_references.py

The models are the same text as in the C++ test; inputs are the ones the test feeds.
"""
import numpy as np
import onnx
import onnx.helper as h
import onnx.parser
import onnxruntime as ort

MODELS = {
    "construct_at_insert_erase": ('''
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a, float[3] b, float[1] c) => (float[3] last, int64 len, float[8] cat, seq(float[?]) erased) {
  s = SequenceConstruct(a, b)
  p = Constant <value = int64 {-1}> ()
  last = SequenceAt(s, p)
  zero = Constant <value = int64 {0}> ()
  s2 = SequenceInsert(s, c, zero)
  s3 = SequenceInsert(s2, a)
  len = SequenceLength(s3)
  cat = ConcatFromSequence <axis = 0> (s3)
  one = Constant <value = int32 {1}> ()
  e1 = SequenceErase(s3, one)
  erased = SequenceErase(e1)
}''', {"a": np.array([1, 2], np.float32), "b": np.array([3, 4, 5], np.float32),
       "c": np.array([6], np.float32)}),
    "split": ('''
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (seq(float[2,?]) chunks, seq(float[2]) cols, seq(float[2,?]) parts, float[2,5] back, float[2,5] stacked, float[5,2] rows) {
  two = Constant <value = int64 {2}> ()
  chunks = SplitToSequence <axis = 1> (x, two)
  cols = SplitToSequence <axis = -1, keepdims = 0> (x)
  lens = Constant <value = int64[2] {1, 4}> ()
  parts = SplitToSequence <axis = 1> (x, lens)
  back = ConcatFromSequence <axis = 1> (chunks)
  stacked = ConcatFromSequence <axis = -1, new_axis = 1> (cols)
  rows = ConcatFromSequence <axis = 0, new_axis = 1> (cols)
}''', {"x": np.arange(10, dtype=np.float32).reshape(2, 5)}),
    "sequence_map": ('''
<ir_version: 8, opset_import: ["" : 17]>
g (seq(float[?]) xs, seq(float[?]) ys, float[1] k) => (seq(float[?]) out, seq(int64[1]) shapes) <float[1] w = {10}> {
  out, shapes = SequenceMap (xs, ys, k) <body = body (float[?] x, float[?] y, float[1] kk) => (float[?] z, int64[1] sh) {
      s = Add(x, y)
      m = Mul(s, kk)
      z = Add(m, w)
      sh = Shape(x)
    }>
}''', {"xs": [np.array([1, 2], np.float32), np.array([3, 4, 5], np.float32)],
       "ys": [np.array([10, 20], np.float32), np.array([30, 40, 50], np.float32)],
       "k": np.array([2], np.float32)}),
    "if_loop": ('''
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (seq(float[2]) s, float[6] cat, int64 n) {
  s = If (c) <then_branch = tb () => (seq(float[2]) a) {
      a = SequenceConstruct(x, x)
    }, else_branch = eb () => (seq(float[2]) b) {
      b = SequenceConstruct(x)
    }>
  M = Constant <value = int64 {3}> ()
  t = Constant <value = bool {1}> ()
  e = SequenceEmpty <dtype = 1> ()
  r = Loop (M, t, e) <body = body (int64 i, bool cin, seq(float[?]) acc) => (bool cout, seq(float[?]) acc2) {
      cout = Identity(cin)
      fi = Cast <to = 1> (i)
      v = Mul(x, fi)
      acc2 = SequenceInsert(acc, v)
    }>
  cat = ConcatFromSequence <axis = 0> (r)
  n = SequenceLength(s)
}''', {"c": np.array(True), "x": np.array([1.5, -2], np.float32)}),
}


def main():
    for name, (text, feeds) in MODELS.items():
        m = onnx.parser.parse_model(text)
        onnx.checker.check_model(m, full_check=True)
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        outs = sess.run(None, feeds)
        print(name)
        for vi, o in zip(m.graph.output, outs):
            if isinstance(o, list):
                print("  %s: [%s]" % (vi.name, "; ".join(
                    "%s %s" % (list(e.shape), e.flatten().tolist()) for e in o)))
            else:
                print("  %s: %s %s" % (vi.name, list(np.shape(o)), np.asarray(o).flatten().tolist()))
    # Optional ops (opset 18), with the empty optional made by Optional's type attribute.
    m = onnx.parser.parse_model('''
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (bool h1, bool h2, float[2] got, bool h3, int64 n) {
  o1 = Optional(x)
  h1 = OptionalHasElement(o1)
  o2 = Optional()
  h2 = OptionalHasElement(o2)
  got = OptionalGetElement(o1)
  sq = SequenceConstruct(x, x)
  os = Optional(sq)
  h3 = OptionalHasElement(os)
  sq2 = OptionalGetElement(os)
  n = SequenceLength(sq2)
}''')
    for node in m.graph.node:
        if node.op_type == "Optional" and not node.input:
            node.attribute.append(h.make_attribute("type", h.make_tensor_type_proto(1, [2])))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    print("optional", [np.asarray(o).tolist() for o in sess.run(None, {"x": np.array([7, 8], np.float32)})])


if __name__ == "__main__":
    main()
