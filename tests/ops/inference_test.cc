// Unit tests of shape inference: symbolic dims, bindings, shape-data propagation, opset-dependent
// signatures, error messages, and the com.microsoft fused ops.
#include <gtest/gtest.h>

#include <sstream>

#include "ir/op_registry.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

namespace xopt {
namespace {

ir::Model parse(const std::string& text) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message() << "\n" << text;
  return m.is_ok() ? std::move(m).value() : ir::Model();
}

Status infer(ir::Model& m) {
  ir::InferOptions o;
  o.strict = true;
  return ir::infer_shapes(*m.graph, o);
}

std::string shape(const ir::Model& m, const std::string& value) {
  const ir::Value* v = m.graph->find_value(value);
  return v == nullptr ? "no value " + value : v->shape().to_string();
}

std::string dtype(const ir::Model& m, const std::string& value) {
  return std::string(ir::dtype_name(m.graph->find_value(value)->dtype()));
}

// Infers `text` and returns the shape of `value`, or "error: <message>".
std::string infer_shape(const std::string& text, const std::string& value = "y") {
  ir::Model m = parse(text);
  Status s = infer(m);
  return s.is_ok() ? shape(m, value) : "error: " + s.message();
}

std::string model(int opset, const std::string& sig, const std::string& body) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n" + sig + "\n{\n" +
         body + "\n}\n";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---- symbolic dims and bindings ----

const char* kConvChain = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N,3,32,32] x, float[8,3,3,3] w1, float[8] b1, float[16,8,3,3] w2, float[10,16] wf, float[10] bf)
    => (float[N,10] y) {
  c1 = Conv <pads = [1,1,1,1]> (x, w1, b1)
  r1 = Relu (c1)
  p1 = MaxPool <kernel_shape = [2,2], strides = [2,2]> (r1)
  c2 = Conv <strides = [2,2], auto_pad = "SAME_UPPER"> (p1, w2)
  bn = BatchNormalization (c2, s, b, m, v)
  g1 = GlobalAveragePool (bn)
  f = Flatten (g1)
  y = Gemm <transB = 1> (f, wf, bf)
}
)";

std::string with_bn_params(std::string text) {
  // Batch-norm parameters as inputs of the right shape.
  auto at = text.find("float[10] bf)");
  text.insert(at + std::string("float[10] bf").size(),
              ", float[16] s, float[16] b, float[16] m, float[16] v");
  return text;
}

TEST(OpsInference, ConvChainKeepsSymbolicBatch) {
  ir::Model m = parse(with_bn_params(kConvChain));
  // Drop the declared output shape so inference has to produce it.
  m.graph->find_value("y")->set_shape(ir::Shape());
  ASSERT_TRUE(infer(m).is_ok());
  EXPECT_EQ(shape(m, "c1"), "[N,8,32,32]");
  EXPECT_EQ(shape(m, "p1"), "[N,8,16,16]");
  EXPECT_EQ(shape(m, "c2"), "[N,16,8,8]");
  EXPECT_EQ(shape(m, "g1"), "[N,16,1,1]");
  EXPECT_EQ(shape(m, "f"), "[N,16]");
  EXPECT_EQ(shape(m, "y"), "[N,10]");
  auto unknown = ir::values_with_unknown_shape(*m.graph);
  EXPECT_EQ(unknown.size(), 9u);  // x and the 8 node outputs, all with N
  for (const ir::Value* v : unknown) EXPECT_EQ(v->shape()[0], ir::Dim::symbolic("N")) << v->name();

  ir::ShapeBindings b;
  b.batch = 4;
  ASSERT_TRUE(ir::bind_input_shapes(*m.graph, b).is_ok());
  ASSERT_TRUE(infer(m).is_ok());
  EXPECT_TRUE(ir::values_with_unknown_shape(*m.graph).empty());
  EXPECT_EQ(shape(m, "y"), "[4,10]");
  EXPECT_EQ(shape(m, "c2"), "[4,16,8,8]");
}

// A graph output declared with another rank or element type than its node computes is refused,
// naming the node and both types; dims that differ are the inferred ones (exporters write stale
// static dims), and an intermediate value's declaration never refuses.
TEST(OpsInference, DeclaredGraphOutputContradictedByItsNode) {
  const std::string rank = infer_shape(
      model(17, "g (float[4,8] x) => (float[4] y)", "y = ReduceSum <keepdims = 0> (x)"));
  EXPECT_TRUE(contains(rank, "graph output 'y' is declared float[4] but the node computes float[]"))
      << rank;
  const std::string type =
      infer_shape(model(17, "g (float[4,8] x) => (int64[2] y)", "y = Shape (x)"));
  EXPECT_EQ(type, "[2]");  // Shape computes int64: agrees
  const std::string wrong_type =
      infer_shape(model(17, "g (float[4,8] x) => (float[2] y)", "y = Shape (x)"));
  EXPECT_TRUE(contains(wrong_type, "declared float[2] but the node computes int64[2]"))
      << wrong_type;
  EXPECT_EQ(infer_shape(model(17, "g (float[4,8] x) => (float[5,8] y)", "y = Relu (x)")), "[4,8]");
  EXPECT_EQ(infer_shape(model(17, "g (float[4,8] x) => (float[4,8] y) <float[7] t>",
                              "t = Relu (x)\n y = Relu (t)")),
            "[4,8]");
}

TEST(OpsInference, InputShapeBindingAndItsErrors) {
  const std::string text =
      model(17, "g (float[N,3,H,W] x, float[N,5] z) => (y, y2)", "y = Relu (x)\ny2 = Relu (z)");
  {
    ir::Model m = parse(text);
    ir::ShapeBindings b;
    b.input_shapes["x"] = {2, 3, 8, 6};
    ASSERT_TRUE(ir::bind_input_shapes(*m.graph, b).is_ok());
    ASSERT_TRUE(infer(m).is_ok());
    EXPECT_EQ(shape(m, "y"), "[2,3,8,6]");
    EXPECT_EQ(shape(m, "y2"), "[2,5]");  // N is bound everywhere it appears
  }
  auto bind_error = [&](ir::ShapeBindings b) {
    ir::Model m = parse(text);
    Status s = ir::bind_input_shapes(*m.graph, b);
    return s.is_ok() ? std::string("ok") : s.message();
  };
  ir::ShapeBindings b;
  b.input_shapes["nope"] = {1};
  EXPECT_TRUE(contains(bind_error(b), "no input 'nope' (inputs: x, z)")) << bind_error(b);
  b = {};
  b.input_shapes["x"] = {1, 3, 8};
  EXPECT_TRUE(contains(bind_error(b), "rank 4")) << bind_error(b);
  b = {};
  b.input_shapes["x"] = {1, 4, 8, 8};
  EXPECT_TRUE(contains(bind_error(b), "dimension 1 is fixed to 3")) << bind_error(b);
  b = {};
  b.input_shapes["x"] = {1, 3, 8, 8};
  b.input_shapes["z"] = {2, 5};
  EXPECT_TRUE(contains(bind_error(b), "'N' is bound to")) << bind_error(b);
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape: the exporter's pattern for x.view(x.size(0),
// -1).
TEST(OpsInference, ShapeSubgraphGivesStaticReshape) {
  const std::string text = model(13, "g (float[N,3,4,5] x) => (y)", R"(
    s = Shape (x)
    zero = Constant <value = int64 {0}> ()
    n = Gather <axis = 0> (s, zero)
    ax = Constant <value = int64[1] {0}> ()
    n1 = Unsqueeze (n, ax)
    minus1 = Constant <value = int64[1] {-1}> ()
    target = Concat <axis = 0> (n1, minus1)
    y = Reshape (x, target)
    two = Constant <value = int64 {2}> ()
    one = Constant <value = int64 {1}> ()
    h = Gather (s, one)
    hw = Mul (h, two)
    hw1 = Unsqueeze (hw, ax)
    t2 = Concat <axis = 0> (n1, hw1, minus1)
    y2 = Reshape (x, t2))");
  ir::Model m = parse(text);
  ASSERT_TRUE(infer(m).is_ok());
  EXPECT_EQ(shape(m, "y"), "[N,60]");
  EXPECT_EQ(shape(m, "y2"), "[N,6,10]");
  const auto& data = m.graph->find_value("target")->shape_data();
  ASSERT_FALSE(data.has_value());  // holds -1, which a Dim cannot say
  const auto& sd = m.graph->find_value("s")->shape_data();
  ASSERT_TRUE(sd.has_value());
  EXPECT_EQ(ir::Shape(*sd).to_string(), "[N,3,4,5]");

  ir::ShapeBindings b;
  b.batch = 2;
  ASSERT_TRUE(ir::bind_input_shapes(*m.graph, b).is_ok());
  ASSERT_TRUE(infer(m).is_ok());
  EXPECT_EQ(shape(m, "y"), "[2,60]");
}

// Data flows through the other shape-arithmetic ops too.
TEST(OpsInference, ShapeDataThroughArithmeticAndIndexing) {
  ir::Model m = parse(model(17, "g (float[N,S,8] x, float[8] v) => (a, b, c, d, e, f)", R"(
    s = Shape (x)
    neg = Constant <value = int64[1] {-1}> ()
    last = Gather (s, neg)
    zero = Constant <value = int64[1] {0}> ()
    two = Constant <value = int64[1] {2}> ()
    ns = Slice (s, zero, two)
    a = ConstantOfShape <value = float[1] {0}> (ns)
    half = Div (last, two)
    hs = Concat <axis = 0> (ns, half, two)
    b = Reshape (x, hs)
    one = Constant <value = int64 {1}> ()
    zero0 = Constant <value = int64 {0}> ()
    seq = Gather (s, one)
    c = Range (zero0, seq, one)
    t = Concat <axis = 0> (neg, last)
    minus = Constant <value = int64[2] {-1, -1}> ()
    eq = Equal (t, minus)
    ones = Constant <value = int64[2] {1, 1}> ()
    w = Where (eq, ones, t)
    d = Expand (v, w)
    e = Size (x)
    f = Cast <to = 6> (ns))"));
  Status st = infer(m);
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(shape(m, "a"), "[N,S]");
  EXPECT_EQ(shape(m, "b"), "[N,S,4,2]");
  EXPECT_EQ(shape(m, "c"), "[S]");
  // The exporter's expand pattern: Where(Equal(shape, -1), 1, shape).
  EXPECT_EQ(ir::Shape(*m.graph->find_value("w")->shape_data()).to_string(), "[1,8]");
  EXPECT_EQ(shape(m, "d"), "[1,8]");
  EXPECT_EQ(ir::Shape(*m.graph->find_value("e")->shape_data()).to_string(), "[?]");  // N*S*8
  EXPECT_EQ(dtype(m, "f"), "int32");
  EXPECT_EQ(ir::Shape(*m.graph->find_value("f")->shape_data()).to_string(), "[N,S]");
}

// ---- opset-dependent signatures ----

TEST(OpsInference, ClipMinMaxAttributesThenInputs) {
  const std::string sig = "g (float[2,3] x, float lo, float hi) => (y)";
  EXPECT_EQ(infer_shape(model(6, sig, "y = Clip <min = 0.0, max = 6.0> (x)")), "[2,3]");
  EXPECT_TRUE(contains(infer_shape(model(6, sig, "y = Clip (x, lo, hi)")),
                       "has 3 inputs, at most 1 are allowed at opset 6"));
  EXPECT_EQ(infer_shape(model(11, sig, "y = Clip (x, lo, hi)")), "[2,3]");
  EXPECT_EQ(infer_shape(model(11, sig, "y = Clip (x, , hi)")), "[2,3]");
  EXPECT_NE(ir::find_op("", "Clip", 6), ir::find_op("", "Clip", 11));
  EXPECT_EQ(ir::find_op("", "Clip", 10)->until_version, 10);
  EXPECT_TRUE(
      contains(infer_shape(model(13, "g (float[2,3] x, float[2] lo) => (y)", "y = Clip (x, lo)")),
               "min must be a scalar"));
}

TEST(OpsInference, SqueezeAxesAttributeThenInput) {
  const std::string sig = "g (float[3,1,4,1] x) => (y)";
  EXPECT_EQ(infer_shape(model(11, sig, "y = Squeeze <axes = [1]> (x)")), "[3,4,1]");
  EXPECT_EQ(infer_shape(model(11, sig, "y = Squeeze <axes = [-1]> (x)")), "[3,1,4]");
  EXPECT_EQ(infer_shape(model(11, sig, "y = Squeeze (x)")), "[3,4]");
  EXPECT_EQ(
      infer_shape(model(13, sig, "a = Constant <value = int64[1] {1}> ()\ny = Squeeze (x, a)")),
      "[3,4,1]");
  EXPECT_EQ(infer_shape(model(13, sig, "y = Squeeze (x)")), "[3,4]");
  // Before 13 the axes cannot be an input.
  EXPECT_TRUE(contains(
      infer_shape(model(11, sig, "a = Constant <value = int64[1] {1}> ()\ny = Squeeze (x, a)")),
      "has 2 inputs, at most 1"));
  EXPECT_TRUE(contains(infer_shape(model(11, sig, "y = Squeeze <axes = [0]> (x)")),
                       "cannot squeeze axis 0 of [3,1,4,1]"));
  // Unknown axes input: the rank is unknown.
  EXPECT_EQ(infer_shape(model(13, "g (float[3,1,4,1] x, int64[1] a) => (y)", "y = Squeeze (x, a)")),
            "[*]");
  EXPECT_EQ(
      infer_shape(model(11, "g (float[3,1,4] x) => (y)", "y = Unsqueeze <axes = [0, -1]> (x)")),
      "[1,3,1,4,1]");
  EXPECT_EQ(infer_shape(model(13, "g (float[3,4] x) => (y)",
                              "a = Constant <value = int64[2] {1, 3}> ()\ny = Unsqueeze (x, a)")),
            "[3,1,4,1]");
}

TEST(OpsInference, SplitInputThenNumOutputs) {
  const std::string sig = "g (float[10,4] x) => (a, b, c)";
  EXPECT_EQ(infer_shape(model(11, sig, "a, b, c = Split <axis = 0, split = [2, 3, 5]> (x)"), "c"),
            "[5,4]");
  EXPECT_EQ(infer_shape(model(13, sig,
                              "s = Constant <value = int64[3] {2, 3, 5}> ()\n"
                              "a, b, c = Split <axis = 0> (x, s)"),
                        "b"),
            "[3,4]");
  // Equal split of 10 into 3 is an error before 18...
  EXPECT_TRUE(contains(infer_shape(model(13, sig, "a, b, c = Split <axis = 0> (x)"), "a"),
                       "not divisible by 3"));
  // ...and ceil-sized chunks with num_outputs from 18.
  const std::string s18 = model(18, sig, "a, b, c = Split <axis = 0, num_outputs = 3> (x)");
  EXPECT_EQ(infer_shape(s18, "a"), "[4,4]");
  EXPECT_EQ(infer_shape(s18, "c"), "[2,4]");
  EXPECT_TRUE(contains(infer_shape(model(18, sig, "a, b, c = Split <axis = 0> (x)"), "a"),
                       "needs a split input or attribute num_outputs"));
  EXPECT_TRUE(contains(infer_shape(model(13, sig,
                                         "s = Constant <value = int64[3] {2, 3, 4}> ()\n"
                                         "a, b, c = Split <axis = 0> (x, s)"),
                                   "a"),
                       "split sizes sum to 9"));
}

TEST(OpsInference, OtherSignatureChanges) {
  // Slice: attributes before 10, inputs from 10 (with steps).
  EXPECT_EQ(infer_shape(model(9, "g (float[10,6] x) => (y)",
                              "y = Slice <starts = [1, 0], ends = [1000, -1]> (x)")),
            "[9,5]");
  EXPECT_EQ(infer_shape(model(13, "g (float[10,6] x) => (y)", R"(
      st = Constant <value = int64[1] {-1}> ()
      en = Constant <value = int64[1] {-1000}> ()
      ax = Constant <value = int64[1] {0}> ()
      sp = Constant <value = int64[1] {-3}> ()
      y = Slice (x, st, en, ax, sp))")),
            "[4,6]");
  // TopK: k attribute before 10, input from 10.
  EXPECT_EQ(infer_shape(model(9, "g (float[3,8] x) => (y, i)", "y, i = TopK <k = 2> (x)")),
            "[3,2]");
  EXPECT_EQ(
      infer_shape(model(11, "g (float[3,8] x) => (y, i)",
                        "k = Constant <value = int64[1] {5}> ()\ny, i = TopK <axis = 1> (x, k)")),
      "[3,5]");
  // Pad: attribute before 11, input from 11, axes from 18.
  EXPECT_EQ(infer_shape(model(10, "g (float[2,3] x) => (y)", "y = Pad <pads = [0, 1, 1, 2]> (x)")),
            "[3,6]");
  EXPECT_EQ(infer_shape(model(18, "g (float[2,3,4] x) => (y)", R"(
      p = Constant <value = int64[2] {2, -1}> ()
      a = Constant <value = int64[1] {-1}> ()
      y = Pad (x, p, , a))")),
            "[2,3,5]");
  // ReduceMean: axes attribute before 18, input from 18; ReduceSum's moved at 13.
  EXPECT_EQ(infer_shape(model(17, "g (float[2,3,4] x) => (y)",
                              "y = ReduceMean <axes = [1], keepdims = 0> (x)")),
            "[2,4]");
  EXPECT_EQ(infer_shape(model(18, "g (float[2,3,4] x) => (y)",
                              "a = Constant <value = int64[1] {1}> ()\ny = ReduceMean (x, a)")),
            "[2,1,4]");
  EXPECT_EQ(infer_shape(model(13, "g (float[2,3,4] x) => (y)",
                              "y = ReduceSum <noop_with_empty_axes = 1> (x)")),
            "[2,3,4]");
  EXPECT_EQ(infer_shape(model(13, "g (float[2,3,4] x) => (y)", "y = ReduceSum <keepdims = 0> (x)")),
            "[]");
  // Dropout: bool mask from 10, ratio/training_mode inputs from 12.
  ir::Model d = parse(model(9, "g (float[2,3] x) => (y, mask)", "y, mask = Dropout (x)"));
  ASSERT_TRUE(infer(d).is_ok());
  EXPECT_EQ(dtype(d, "mask"), "float");
  ir::Model d12 =
      parse(model(12, "g (float[2,3] x, float r) => (y, mask)", "y, mask = Dropout (x, r)"));
  ASSERT_TRUE(infer(d12).is_ok());
  EXPECT_EQ(dtype(d12, "mask"), "bool");
  EXPECT_TRUE(ir::is_view_node(**d12.graph->nodes().begin()));
  ir::Model dt =
      parse(model(13, "g (float[2,3] x, float r, bool t) => (y)", "y = Dropout (x, r, t)"));
  EXPECT_FALSE(ir::is_view_node(**dt.graph->nodes().begin()));  // training_mode may be true
  // Softmax: coerced-2D axis (default 1) before 13, axis -1 from 13; the shape is the input's.
  EXPECT_EQ(infer_shape(model(11, "g (float[2,3,4] x) => (y)", "y = Softmax (x)")), "[2,3,4]");
  EXPECT_TRUE(
      contains(infer_shape(model(13, "g (float[2,3,4] x) => (y)", "y = Softmax <axis = 3> (x)")),
               "axis 3 is out of range"));
  // Resize: scales (10), roi/scales/sizes (11+), axes and keep_aspect_ratio_policy (18+).
  EXPECT_EQ(
      infer_shape(model(10, "g (float[1,3,5,7] x) => (y)",
                        "s = Constant <value = float[4] {1, 1, 2, 0.5}> ()\ny = Resize (x, s)")),
      "[1,3,10,3]");
  EXPECT_EQ(
      infer_shape(model(13, "g (float[1,3,5,7] x) => (y)",
                        "z = Constant <value = int64[4] {1, 3, 9, 9}> ()\ny = Resize (x, , , z)")),
      "[1,3,9,9]");
  EXPECT_EQ(infer_shape(model(18, "g (float[1,3,4,8] x) => (y)", R"(
      z = Constant <value = int64[2] {6, 6}> ()
      y = Resize <axes = [2, 3], keep_aspect_ratio_policy = "not_larger"> (x, , , z))")),
            "[1,3,3,6]");
  EXPECT_EQ(
      infer_shape(model(9, "g (float[1,3,5,7] x) => (y)",
                        "s = Constant <value = float[4] {1, 1, 2, 3}> ()\ny = Upsample (x, s)")),
      "[1,3,10,21]");
}

TEST(OpsInference, ConvAndPoolWindows) {
  const std::string sig = "g (float[1,2,7,9] x, float[4,2,3,3] w) => (y)";
  EXPECT_EQ(
      infer_shape(model(17, sig, "y = Conv <strides = [2,2], auto_pad = \"SAME_LOWER\"> (x, w)")),
      "[1,4,4,5]");
  EXPECT_EQ(infer_shape(model(17, sig, "y = Conv <strides = [2,2], auto_pad = \"VALID\"> (x, w)")),
            "[1,4,3,4]");
  EXPECT_EQ(infer_shape(model(17, sig, "y = Conv <dilations = [2,3], pads = [1,0,1,0]> (x, w)")),
            "[1,4,5,3]");
  EXPECT_TRUE(contains(
      infer_shape(model(17, "g (float[1,3,7,9] x, float[4,2,3,3] w) => (y)", "y = Conv (x, w)")),
      "X has 3 channels but W [4,2,3,3] with group 1 expects 2"));
  // MaxPool ceil_mode: the last window may not start in the right padding.
  EXPECT_EQ(
      infer_shape(model(17, "g (float[1,1,5,5] x) => (y)",
                        "y = MaxPool <kernel_shape = [2,2], strides = [2,2], ceil_mode = 1> (x)")),
      "[1,1,3,3]");
  EXPECT_EQ(
      infer_shape(model(17, "g (float[1,1,6,6] x) => (y)",
                        "y = MaxPool <kernel_shape = [3,3], strides = [2,2], pads = [1,1,1,1], "
                        "ceil_mode = 1> (x)")),
      "[1,1,4,4]");
  EXPECT_EQ(
      infer_shape(model(17, "g (float[1,1,5,5] x) => (y)",
                        "y = MaxPool <kernel_shape = [2,2], strides = [2,2], pads = [1,1,1,1], "
                        "ceil_mode = 1> (x)")),
      "[1,1,3,3]");  // ceil gives 4, but the 4th window would start in the padding
  // ConvTranspose: output_padding, output_shape, SAME.
  const std::string ct = "g (float[1,4,5,5] x, float[4,3,3,3] w) => (y)";
  EXPECT_EQ(infer_shape(model(
                17, ct, "y = ConvTranspose <strides = [2,2], output_padding = [1,0]> (x, w)")),
            "[1,3,12,11]");
  EXPECT_EQ(infer_shape(model(
                17, ct, "y = ConvTranspose <strides = [2,2], output_shape = [10,10]> (x, w)")),
            "[1,3,10,10]");
  EXPECT_EQ(
      infer_shape(model(
          17, ct,
          "y = ConvTranspose <strides = [2,2], auto_pad = \"SAME_UPPER\", group = 2> (x, w)")),
      "[1,6,10,10]");
  // SAME with a kernel narrower than the stride: no negative padding, so less than input * stride.
  EXPECT_EQ(
      infer_shape(model(17, "g (float[1,4,5,5] x, float[4,3,1,1] w) => (y)",
                        "y = ConvTranspose <strides = [3,3], auto_pad = \"SAME_UPPER\"> (x, w)")),
      "[1,3,13,13]");
  EXPECT_TRUE(contains(infer_shape(model(17, "g (float[1,3,5,5] x, float[4,3,3,3] w) => (y)",
                                         "y = ConvTranspose (x, w)")),
                       "X has 3 channels but W [4,3,3,3] expects 4"));
}

// ---- errors name the node and say what is wrong ----

TEST(OpsInference, ErrorsNameTheNode) {
  std::string e = infer_shape(model(17, "g (float[2,3] a, float[4] b) => (y)", "y = Add (a, b)"));
  EXPECT_TRUE(contains(e, "(Add): shapes [2,3] and [4] cannot be broadcast")) << e;
  ir::Model m = parse(model(17, "g (float[2,3] a, float[4,5] b) => (y)", "y = MatMul (a, b)"));
  m.graph->node_list()[0]->set_name("proj");
  Status s = infer(m);
  EXPECT_EQ(s.message(), "node 'proj' (MatMul): inner dimensions differ: [2,3] x [4,5]");
  EXPECT_TRUE(
      contains(infer_shape(model(17, "g (float[6] x) => (y)",
                                 "s = Constant <value = int64[2] {4, -1}> ()\ny = Reshape (x, s)")),
               "cannot reshape [6] to [4,?] with -1"));
  EXPECT_TRUE(
      contains(infer_shape(model(17, "g (float[2,3] a, int64[2,3] b) => (y)", "y = Add (a, b)")),
               "different types (float vs int64)"));
}

TEST(OpsInference, UnknownOpsAreErrorsOnlyWhenStrict) {
  ir::Model m = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "custom" : 1]>
g (float[2,3] x) => (y) {
  t = custom.Thing (x)
  y = Relu (t)
}
)");
  Status s = infer(m);
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(contains(s.message(), "no shape inference for custom.Thing at opset 1"))
      << s.message();
  ASSERT_TRUE(ir::infer_shapes(*m.graph).is_ok());
  EXPECT_EQ(shape(m, "y"), "[*]");
  EXPECT_EQ(ir::values_with_unknown_shape(*m.graph).size(), 2u);

  // Element types xopt does not model (float6e2m3 = 27) are unsupported, not invalid: strict
  // fails, otherwise unknown.
  ir::Model f6 =
      parse(model(19, "g (float[2,3] x) => (y, z)", "y = Cast <to = 27> (x)\nz = Relu (x)"));
  s = infer(f6);
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(contains(s.message(), "Cast to element type 27 is not supported")) << s.message();
  ASSERT_TRUE(ir::infer_shapes(*f6.graph).is_ok());
  EXPECT_EQ(shape(f6, "y"), "[*]");
  EXPECT_EQ(shape(f6, "z"), "[2,3]");
  // The narrow types are modelled from the opset that adds them: float8e4m3fn from 19.
  ir::Model f8 =
      parse(model(19, "g (float[2,3] x) => (y, z)", "y = Cast <to = 17> (x)\nz = Relu (x)"));
  ASSERT_TRUE(infer(f8).is_ok());
  EXPECT_EQ(shape(f8, "y"), "[2,3]");
  EXPECT_EQ(f8.graph->find_value("y")->dtype(), ir::DType::kFloat8E4M3FN);
  ir::Model early =
      parse(model(18, "g (float[2,3] x) => (y, z)", "y = Cast <to = 17> (x)\nz = Relu (x)"));
  s = infer(early);
  EXPECT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "float8e4m3fn needs opset 19")) << s.message();
}

// ---- com.microsoft fused ops ----

std::string ms_model(const std::string& sig, const std::string& body) {
  return "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n" + sig + "\n{\n" +
         body + "\n}\n";
}

TEST(OpsInference, MicrosoftFusedOps) {
  EXPECT_EQ(infer_shape(ms_model(
                "g (float[N,3,8,8] x, float[4,3,3,3] w, float[4] b) => (y)",
                "y = com.microsoft.FusedConv <activation = \"Relu\", pads = [1,1,1,1]> (x, w, b)")),
            "[N,4,8,8]");
  EXPECT_EQ(infer_shape(
                ms_model("g (float[5,3] a, float[4,3] b) => (y)",
                         "y = com.microsoft.FusedGemm <transB = 1, activation = \"Relu\"> (a, b)")),
            "[5,4]");
  EXPECT_EQ(infer_shape(ms_model("g (float[3,2,4,5] a, float[2,5,6] b) => (y)",
                                 "y = com.microsoft.FusedMatMul <transBatchA = 1> (a, b)")),
            "error: node '<unnamed>' (com.microsoft.FusedMatMul): transBatchA/transBatchB need "
            "inputs of the same "
            "rank >= 3, got [3,2,4,5] and [2,5,6]");
  // transBatchA + transA: A [4,2,3] is read as [2,3,4]; transBatchB: B [4,2,5] as [2,4,5].
  EXPECT_EQ(
      infer_shape(ms_model("g (float[4,2,3] a, float[2,4,5] b) => (y)",
                           "y = com.microsoft.FusedMatMul <transBatchA = 1, transA = 1> (a, b)")),
      "[2,3,5]");
  EXPECT_EQ(infer_shape(ms_model("g (float[2,3,4] a, float[4,2,5] b) => (y)",
                                 "y = com.microsoft.FusedMatMul <transBatchB = 1> (a, b)")),
            "[2,3,5]");
  EXPECT_EQ(infer_shape(ms_model("g (float[2,7,4] a, float[2,5,4] b) => (y)",
                                 "y = com.microsoft.FusedMatMul <transB = 1, alpha = 0.5> (a, b)")),
            "[2,7,5]");
  EXPECT_EQ(infer_shape(ms_model("g (float[2,7,8] a, float[8] b) => (y)",
                                 "y = com.microsoft.BiasGelu (a, b)")),
            "[2,7,8]");
  EXPECT_EQ(infer_shape(ms_model("g (float[2,7,8] a, float[8] b) => (y)",
                                 "y = com.microsoft.FastGelu (a, b)")),
            "[2,7,8]");
  EXPECT_EQ(infer_shape(ms_model("g (float[2,7,8] a) => (y)", "y = com.microsoft.Gelu (a)")),
            "[2,7,8]");

  ir::Model sln = parse(ms_model(
      "g (float[B,S,8] x, float[B,S,8] s, float[8] g, float[8] b) => (y, m, v, sum)",
      "y, m, v, sum = com.microsoft.SkipLayerNormalization <epsilon = 0.00001> (x, s, g, b)"));
  ASSERT_TRUE(infer(sln).is_ok());
  EXPECT_EQ(shape(sln, "y"), "[B,S,8]");
  EXPECT_EQ(shape(sln, "m"), "[B,S,1]");
  EXPECT_EQ(shape(sln, "sum"), "[B,S,8]");
  EXPECT_EQ(dtype(sln, "v"), "float");

  // MultiHeadAttention (shapes checked against onnxruntime 1.32's CPU kernel outputs).
  EXPECT_EQ(infer_shape(ms_model("g (float[2,5,8] q, float[2,7,8] k, float[2,7,6] v) => (y)",
                                 "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)")),
            "[2,5,6]");
  ir::Model mha = parse(ms_model(
      "g (float[2,5,8] q, float[2,5,8] k, float[2,5,8] v, float[2,2,3,4] pk, float[2,2,3,4] pv) => "
      "(y, "
      "prk, prv)",
      "y, prk, prv = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v, , , , pk, pv)"));
  ASSERT_TRUE(infer(mha).is_ok());
  EXPECT_EQ(shape(mha, "y"), "[2,5,8]");
  EXPECT_EQ(shape(mha, "prk"), "[2,2,8,4]");
  ir::Model mha2 =
      parse(ms_model("g (float[2,5,8] q, float[2,7,8] k, float[2,7,6] v) => (y, prk, prv)",
                     "y, prk, prv = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)"));
  ASSERT_TRUE(infer(mha2).is_ok());
  EXPECT_EQ(shape(mha2, "prk"), "[2,2,7,4]");
  EXPECT_EQ(shape(mha2, "prv"), "[2,2,7,3]");
  EXPECT_EQ(infer_shape(ms_model("g (float[2,5,8] q, float[2,2,7,4] k, float[2,2,7,4] v) => (y)",
                                 "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q, k, v)")),
            "[2,5,8]");
  EXPECT_EQ(infer_shape(ms_model("g (float[2,5,2,3,4] q) => (y)",
                                 "y = com.microsoft.MultiHeadAttention <num_heads = 2> (q)")),
            "[2,5,8]");
}

// ---- the registry itself ----

TEST(OpsRegistry, RangesDoNotOverlapAndCoverTheListedOps) {
  const auto& ops = ir::all_ops();
  for (size_t i = 1; i < ops.size(); ++i) {
    const auto& a = ops[i - 1];
    const auto& b = ops[i];
    EXPECT_LE(b.since_version, b.until_version) << b.op_type;
    if (a.domain == b.domain && a.op_type == b.op_type) {
      EXPECT_LT(a.until_version, b.since_version) << b.op_type << " ranges overlap";
    }
  }
  // The ops the registry was asked to cover (opsets 7-21).
  std::istringstream listed(
      "Abs Add And ArgMax ArgMin AveragePool BatchNormalization Cast Ceil Clip Concat Constant "
      "ConstantOfShape Conv ConvTranspose Cos CumSum DepthToSpace Div Dropout Elu Equal Erf Exp "
      "Expand Flatten Floor Gather GatherElements Gelu Gemm GlobalAveragePool GlobalMaxPool "
      "Greater GreaterOrEqual HardSigmoid HardSwish Identity InstanceNormalization "
      "LayerNormalization LeakyRelu Less LessOrEqual Log LogSoftmax LRN MatMul Max MaxPool Mean "
      "Min Mod Mul Neg Not Or Pad Pow PRelu Range Reciprocal ReduceL2 ReduceMax ReduceMean "
      "ReduceMin ReduceProd ReduceSum Relu Reshape Resize Round ScatterND Shape Sigmoid Sign "
      "Sin Size Slice Softmax Softplus SpaceToDepth Split Sqrt Squeeze Sub Sum Tanh Tile TopK "
      "Transpose Trilu Unsqueeze Upsample Where ");
  for (std::string op; listed >> op;) {
    // Every listed op is known at every opset from 7 (or its introduction) to 21.
    for (int v = 7; v <= 21; ++v) {
      const bool introduced_later = ir::find_op("", op, v) == nullptr &&
                                    ir::find_op("", op, 21) != nullptr &&
                                    ir::find_op("", op, 21)->since_version > v;
      const bool retired = std::string(op) == "Upsample" && v > 10;
      if (!introduced_later && !retired) {
        EXPECT_NE(ir::find_op("", op, v), nullptr) << op << " at " << v;
      }
    }
  }
  for (const char* op : {"FusedConv", "FusedGemm", "FusedMatMul", "BiasGelu", "FastGelu", "Gelu",
                         "SkipLayerNormalization", "MultiHeadAttention"})
    EXPECT_NE(ir::find_op("com.microsoft", op, 1), nullptr) << op;
  EXPECT_EQ(ir::find_op("ai.onnx", "Relu", 14), ir::find_op("", "Relu", 14));
  EXPECT_EQ(ir::find_op("", "Relu", ir::kMaxOpset + 1), nullptr);
  EXPECT_EQ(ir::find_op("", "NoSuchOp", 17), nullptr);
}

TEST(OpsRegistry, PlannerFacts) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"})
    EXPECT_TRUE(ir::find_op("", op, 17)->is_view) << op;
  for (const char* op : {"Relu", "Add", "Sigmoid", "Clip", "Where", "Cast"})
    EXPECT_TRUE(ir::find_op("", op, 17)->elementwise) << op;
  for (const char* op : {"Conv", "MatMul", "Softmax", "Transpose", "Concat", "Reshape"})
    EXPECT_FALSE(ir::find_op("", op, 17)->elementwise) << op;
  EXPECT_TRUE(ir::find_op("com.microsoft", "BiasGelu", 1)->elementwise);
}

}  // namespace
}  // namespace xopt
