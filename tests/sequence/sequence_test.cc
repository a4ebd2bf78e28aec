// Sequence and Optional ops: their types through shape inference and a lossless ONNX round trip,
// the CPU kernels (expected values from onnxruntime 1.32: tests/sequence/gen_references.py prints
// them), sequences carried by If, Loop and SequenceMap, the ONNX backend node tests, TorchScript
// models that build lists, and memory planning around sequence values.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "executor/cpu/conformance.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "ir/value_type.h"
#include "ir/verifier.h"
#include "onnx/checker.h"
#include "passes/pass_manager.h"
#include "planner/memory_plan.h"
#include "tests/util/equivalence.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

using exec::ExecValue;
using Values = std::vector<double>;
using Dims = std::vector<int64_t>;

// The same models as gen_references.py.
constexpr const char* kConstruct = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a, float[3] b, float[1] c) => (float[3] last, int64 len, float[8] cat, float[?] erased) {
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
})";

constexpr const char* kSplit = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,?] chunks, float[2] cols, float[2,?] parts, float[2,5] back, float[2,5] stacked, float[5,2] rows) {
  two = Constant <value = int64 {2}> ()
  chunks = SplitToSequence <axis = 1> (x, two)
  cols = SplitToSequence <axis = -1, keepdims = 0> (x)
  lens = Constant <value = int64[2] {1, 4}> ()
  parts = SplitToSequence <axis = 1> (x, lens)
  back = ConcatFromSequence <axis = 1> (chunks)
  stacked = ConcatFromSequence <axis = -1, new_axis = 1> (cols)
  rows = ConcatFromSequence <axis = 0, new_axis = 1> (cols)
})";

constexpr const char* kSequenceMap = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[?] xs, float[?] ys, float[1] k) => (float[?] out, int64[1] shapes) <float[1] w = {10}> {
  out, shapes = SequenceMap (xs, ys, k) <body = body (float[?] x, float[?] y, float[1] kk) => (float[?] z, int64[1] sh) {
      s = Add(x, y)
      m = Mul(s, kk)
      z = Add(m, w)
      sh = Shape(x)
    }>
})";

constexpr const char* kIfLoop = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] s, float[6] cat, int64 n) {
  s = If (c) <then_branch = tb () => (float[2] a) {
      a = SequenceConstruct(x, x)
    }, else_branch = eb () => (float[2] b) {
      b = SequenceConstruct(x)
    }>
  M = Constant <value = int64 {3}> ()
  t = Constant <value = bool {1}> ()
  e = SequenceEmpty <dtype = 1> ()
  r = Loop (M, t, e) <body = body (int64 i, bool cin, float[?] acc) => (bool cout, float[?] acc2) {
      cout = Identity(cin)
      fi = Cast <to = 1> (i)
      v = Mul(x, fi)
      acc2 = SequenceInsert(acc, v)
    }>
  cat = ConcatFromSequence <axis = 0> (r)
  n = SequenceLength(s)
})";

// Opset 18; `omitted` is dropped after parsing (libonnx 1.12's parser has no empty input name),
// and the input-less Optional gets its `type` attribute then (no text syntax for a type
// attribute).
constexpr const char* kOptional = R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (bool h1, bool h2, float[2] got, bool h3, int64 n, bool h4) {
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
  h4 = OptionalHasElement(omitted)
})";

using Types = std::map<std::string, onnx::TypeProto>;

// Tensor types: dims -1 are unknown.
onnx::TypeProto tt(ir::DType d, const std::vector<int64_t>& dims) {
  std::vector<ir::Dim> ds;
  for (int64_t x : dims) ds.push_back(x < 0 ? ir::Dim() : ir::Dim(x));
  return ir::tensor_type(d, ir::Shape(ds));
}
onnx::TypeProto ft(const std::vector<int64_t>& dims) {
  return tt(ir::DType::kFloat, dims);
}
onnx::TypeProto seq(const onnx::TypeProto& e) {
  return ir::sequence_type(e);
}
onnx::TypeProto opt(const onnx::TypeProto& e) {
  return ir::optional_type(e);
}

// Sets the declared types of the named inputs, outputs and value_info entries, in subgraphs too.
void retype(onnx::GraphProto& g, const Types& types) {
  for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
    for (auto& vi : *list)
      if (auto it = types.find(vi.name()); it != types.end()) *vi.mutable_type() = it->second;
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) retype(*a.mutable_g(), types);
      for (auto& sg : *a.mutable_graphs()) retype(sg, types);
    }
}

// libonnx 1.12's parser reads seq(...) and optional(...) nowhere in a signature: the models write
// those values as tensors and `types` declares them after parsing. It has no empty input name
// either: the models name it `omitted`, dropped here. And no syntax for a type attribute: an
// input-less Optional gets `type` float[2] here.
ir::Model parse(const char* text, const Types& types = {}) {
  auto parsed = ir::parse_model_text(text);
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  onnx::ModelProto proto = ir::model_to_proto(*parsed);
  retype(*proto.mutable_graph(), types);
  auto m = ir::model_from_proto(std::move(proto));
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  for (ir::Node* n : m->graph->nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i)
      if (n->input(i) != nullptr && n->input(i)->name() == "omitted") n->set_input(i, nullptr);
    if (n->is("Optional") && n->num_inputs() == 0) {
      onnx::AttributeProto a;
      a.set_name("type");
      a.set_type(onnx::AttributeProto::TYPE_PROTO);
      *a.mutable_tp() = ir::tensor_type(ir::DType::kFloat, ir::Shape::of({2}));
      n->set_attr(a);
    }
  }
  return std::move(m).value();
}

const Types kConstructTypes = {{"erased", seq(ft({-1}))}};
const Types kSplitTypes = {
    {"chunks", seq(ft({2, -1}))}, {"cols", seq(ft({2}))}, {"parts", seq(ft({2, -1}))}};
const Types kSequenceMapTypes = {{"xs", seq(ft({-1}))},
                                 {"ys", seq(ft({-1}))},
                                 {"out", seq(ft({-1}))},
                                 {"shapes", seq(tt(ir::DType::kInt64, {1}))}};
const Types kIfLoopTypes = {{"s", seq(ft({2}))},
                            {"a", seq(ft({2}))},
                            {"b", seq(ft({2}))},
                            {"acc", seq(ft({-1}))},
                            {"acc2", seq(ft({-1}))}};

ir::Tensor floats(Dims dims, std::vector<float> v) {
  return ir::Tensor::of<float>(std::move(dims), v);
}

ExecValue fseq(std::vector<std::vector<float>> items) {
  std::vector<ir::Tensor> ts;
  for (auto& v : items) ts.push_back(floats({static_cast<int64_t>(v.size())}, v));
  return ExecValue::of_sequence(std::move(ts), ir::DType::kFloat);
}

std::pair<Dims, Values> contents(const ir::Tensor& t) {
  Values v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.as_double(i));
  return {t.dims(), v};
}

std::vector<ExecValue> run(const ir::Model& m, const std::map<std::string, ExecValue>& in,
                           const exec::RunOptions& options = {}) {
  auto r = exec::run_model_values(m, in, options);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? std::move(r).value() : std::vector<ExecValue>{};
}

ExecValue t(ir::Tensor x) {
  return ExecValue::of_tensor(std::move(x));
}

std::string type_of(const ir::Model& m, const std::string& name) {
  const ir::Value* v = m.graph->find_value(name);
  return v == nullptr ? "(none)" : ir::type_to_string(*v);
}

TEST(SequenceInfer, TypesFollowTheOps) {
  ir::Model m = parse(kConstruct, kConstructTypes);
  ASSERT_TRUE(ir::infer_shapes(*m.graph).is_ok());
  EXPECT_EQ(type_of(m, "s"), "seq(float[?])");  // elements [2] and [3]
  EXPECT_EQ(type_of(m, "last"), "float[3]");    // position -1 is known: exactly b's shape
  EXPECT_EQ(type_of(m, "len"), "int64[]");
  ASSERT_TRUE(m.graph->find_value("len")->shape_data().has_value());
  EXPECT_EQ((*m.graph->find_value("len")->shape_data())[0].value, 4);
  EXPECT_EQ(type_of(m, "cat"), "float[8]");  // every element's length is known
  EXPECT_FALSE(m.graph->find_value("s3")->is_tensor());
  EXPECT_EQ(ir::type_kind(*m.graph->find_value("s3")), ir::TypeKind::kSequence);

  ir::Model sp = parse(kSplit, kSplitTypes);
  ASSERT_TRUE(ir::infer_shapes(*sp.graph).is_ok());
  EXPECT_EQ(type_of(sp, "chunks"), "seq(float[2,?])");  // [2,2], [2,2], [2,1]
  EXPECT_EQ(type_of(sp, "cols"), "seq(float[2])");
  EXPECT_EQ(type_of(sp, "back"), "float[2,5]");
  EXPECT_EQ(type_of(sp, "stacked"), "float[2,5]");
  EXPECT_EQ(type_of(sp, "rows"), "float[5,2]");

  ir::Model sm = parse(kSequenceMap, kSequenceMapTypes);
  ASSERT_TRUE(ir::infer_shapes(*sm.graph).is_ok());
  EXPECT_EQ(type_of(sm, "out"), "seq(float[?])");
  EXPECT_EQ(type_of(sm, "shapes"), "seq(int64[1])");

  ir::Model il = parse(kIfLoop, kIfLoopTypes);
  ASSERT_TRUE(ir::infer_shapes(*il.graph).is_ok());
  EXPECT_EQ(type_of(il, "s"), "seq(float[2])");
  // SequenceEmpty says nothing about shapes; the loop's sequence has what its body declares.
  EXPECT_EQ(type_of(il, "e"), "seq(float)");
  EXPECT_EQ(type_of(il, "r"), "seq(float[?])");
  EXPECT_EQ(type_of(il, "cat"), "float[6]");  // as declared: inference cannot count the loop

  ir::Model op = parse(kOptional);
  ASSERT_TRUE(ir::infer_shapes(*op.graph).is_ok());
  EXPECT_EQ(type_of(op, "o1"), "optional(float[2])");
  EXPECT_EQ(type_of(op, "o2"), "optional(float[2])");
  EXPECT_EQ(type_of(op, "os"), "optional(seq(float[2]))");
  EXPECT_EQ(type_of(op, "sq2"), "seq(float[2])");
  EXPECT_EQ(type_of(op, "got"), "float[2]");
  EXPECT_TRUE(ir::verify(*op.graph).is_ok());
}

TEST(SequenceInfer, RefusesWhatTheSpecForbids) {
  auto fails = [](const char* text, const Types& types, const char* what) {
    ir::Model m = parse(text, types);
    Status st = ir::infer_shapes(*m.graph);
    EXPECT_FALSE(st.is_ok()) << text;
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  };
  fails(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a, int64[2] b) => (float[2] s) { s = SequenceConstruct(a, b) })",
        {{"s", seq(ft({2}))}}, "mix float and int64");
  fails(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a) => (float[2] y) { y = SequenceAt(a, a) })",
        {}, "not a sequence");
  fails(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a) => (float[2] y) {
  s = SequenceConstruct(a)
  p = Constant <value = int64 {3}> ()
  y = SequenceAt(s, p)
})",
        {}, "out of range");
  fails(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,?] s) {
  lens = Constant <value = int64[2] {1, 3}> ()
  s = SplitToSequence <axis = 1> (x, lens)
})",
        {{"s", seq(ft({2, -1}))}}, "sums to 4");
}

TEST(SequenceRun, ConstructAtInsertEraseLengthConcat) {
  auto r = run(parse(kConstruct, kConstructTypes), {{"a", t(floats({2}, {1, 2}))},
                                                    {"b", t(floats({3}, {3, 4, 5}))},
                                                    {"c", t(floats({1}, {6}))}});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(contents(r[0].tensor()), (std::pair<Dims, Values>{{3}, {3, 4, 5}}));
  EXPECT_EQ(contents(r[1].tensor()), (std::pair<Dims, Values>{{}, {4}}));
  EXPECT_EQ(contents(r[2].tensor()), (std::pair<Dims, Values>{{8}, {6, 1, 2, 3, 4, 5, 1, 2}}));
  ASSERT_TRUE(r[3].is_sequence());
  EXPECT_TRUE(r[3].same_contents(fseq({{6}, {3, 4, 5}}))) << r[3].describe();
}

TEST(SequenceRun, SplitToSequenceAndConcatFromSequence) {
  std::vector<float> x(10);
  for (int i = 0; i < 10; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  auto r = run(parse(kSplit, kSplitTypes), {{"x", t(floats({2, 5}, x))}});
  ASSERT_EQ(r.size(), 6u);
  ASSERT_TRUE(r[0].is_sequence());
  ASSERT_EQ(r[0].items().size(), 3u);
  EXPECT_EQ(contents(r[0].items()[0]), (std::pair<Dims, Values>{{2, 2}, {0, 1, 5, 6}}));
  EXPECT_EQ(contents(r[0].items()[1]), (std::pair<Dims, Values>{{2, 2}, {2, 3, 7, 8}}));
  EXPECT_EQ(contents(r[0].items()[2]), (std::pair<Dims, Values>{{2, 1}, {4, 9}}));
  EXPECT_TRUE(r[1].same_contents(fseq({{0, 5}, {1, 6}, {2, 7}, {3, 8}, {4, 9}})));
  ASSERT_EQ(r[2].items().size(), 2u);
  EXPECT_EQ(contents(r[2].items()[0]), (std::pair<Dims, Values>{{2, 1}, {0, 5}}));
  EXPECT_EQ(contents(r[2].items()[1]), (std::pair<Dims, Values>{{2, 4}, {1, 2, 3, 4, 6, 7, 8, 9}}));
  const Values all = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(contents(r[3].tensor()), (std::pair<Dims, Values>{{2, 5}, all}));
  EXPECT_EQ(contents(r[4].tensor()), (std::pair<Dims, Values>{{2, 5}, all}));
  EXPECT_EQ(contents(r[5].tensor()),
            (std::pair<Dims, Values>{{5, 2}, {0, 5, 1, 6, 2, 7, 3, 8, 4, 9}}));
}

TEST(SequenceRun, SplitToSequenceOfStrings) {
  ir::Model m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (string[3] x) => (string[3] y, int64 n) {
  s = SplitToSequence <keepdims = 0> (x)
  one = Constant <value = int64 {1}> ()
  e = SequenceErase(s, one)
  b = SequenceAt(s, one)
  s2 = SequenceInsert(e, b)
  y = ConcatFromSequence <axis = 0, new_axis = 1> (s2)
  n = SequenceLength(s2)
})");
  auto r = run(m, {{"x", t(ir::Tensor::of_strings({3}, {"a", "b", "c"}))}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].tensor().strings(), (std::vector<std::string>{"a", "c", "b"}));
  EXPECT_EQ(r[1].tensor().as_int64(0), 3);
}

TEST(SequenceRun, SequenceMapRunsTheBodyPerElement) {
  auto r = run(parse(kSequenceMap, kSequenceMapTypes), {{"xs", fseq({{1, 2}, {3, 4, 5}})},
                                                        {"ys", fseq({{10, 20}, {30, 40, 50}})},
                                                        {"k", t(floats({1}, {2}))}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].same_contents(fseq({{32, 54}, {76, 98, 120}}))) << r[0].describe();
  ASSERT_EQ(r[1].items().size(), 2u);
  EXPECT_EQ(r[1].items()[0].as_int64(0), 2);
  EXPECT_EQ(r[1].items()[1].as_int64(0), 3);
  // Sequences of different lengths are refused, naming the node.
  auto bad = exec::run_model_values(
      parse(kSequenceMap, kSequenceMapTypes),
      {{"xs", fseq({{1}, {2}})}, {"ys", fseq({{1}})}, {"k", t(floats({1}, {2}))}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("SequenceMap"), std::string::npos)
      << bad.status().message();
  // No element: empty sequences of the body's types.
  auto none = run(parse(kSequenceMap, kSequenceMapTypes),
                  {{"xs", fseq({})}, {"ys", fseq({})}, {"k", t(floats({1}, {2}))}});
  ASSERT_EQ(none.size(), 2u);
  EXPECT_TRUE(none[0].is_sequence() && none[0].items().empty());
  EXPECT_EQ(none[1].elem_dtype(), ir::DType::kInt64);
}

TEST(SequenceRun, IfReturnsAndLoopCarriesSequences) {
  ir::Model m = parse(kIfLoop, kIfLoopTypes);
  auto r = run(m, {{"c", t(ir::Tensor::scalar<bool>(true))}, {"x", t(floats({2}, {1.5f, -2}))}});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r[0].same_contents(fseq({{1.5f, -2}, {1.5f, -2}})));
  EXPECT_EQ(contents(r[1].tensor()), (std::pair<Dims, Values>{{6}, {0, 0, 1.5, -2, 3, -4}}));
  EXPECT_EQ(r[2].tensor().as_int64(0), 2);
  auto e = run(m, {{"c", t(ir::Tensor::scalar<bool>(false))}, {"x", t(floats({2}, {1, 2}))}});
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[2].tensor().as_int64(0), 1);
}

TEST(SequenceRun, OptionalHasGetElement) {
  auto r = run(parse(kOptional), {{"x", t(floats({2}, {7, 8}))}});
  ASSERT_EQ(r.size(), 6u);
  EXPECT_TRUE(r[0].tensor().as_int64(0));   // Optional(x)
  EXPECT_FALSE(r[1].tensor().as_int64(0));  // Optional<type>()
  EXPECT_EQ(contents(r[2].tensor()), (std::pair<Dims, Values>{{2}, {7, 8}}));
  EXPECT_TRUE(r[3].tensor().as_int64(0));  // an optional sequence
  EXPECT_EQ(r[4].tensor().as_int64(0), 2);
  EXPECT_FALSE(r[5].tensor().as_int64(0));  // opset 18: no input at all
  // An optional graph input may be given as its content, or as an empty optional.
  ir::Model in = parse(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[?] o) => (bool h, float[?] same) {
  h = OptionalHasElement(o)
  same = Identity(o)
})",
                       {{"o", opt(seq(ft({-1})))}, {"same", opt(seq(ft({-1})))}});
  auto full = run(in, {{"o", fseq({{1}})}});
  ASSERT_EQ(full.size(), 2u);
  EXPECT_TRUE(full[0].tensor().as_int64(0));
  EXPECT_TRUE(full[1].is_optional() && full[1].has_element());
  auto empty = run(in, {{"o", ExecValue::none(ExecValue::Kind::kSequence, ir::DType::kFloat)}});
  ASSERT_EQ(empty.size(), 2u);
  EXPECT_FALSE(empty[0].tensor().as_int64(0));
  EXPECT_FALSE(empty[1].has_element());
  // A tensor where the graph declares an optional sequence is refused, naming the input.
  auto wrong = exec::run_model_values(in, {{"o", t(floats({1}, {1}))}});
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("'o'"), std::string::npos) << wrong.status().message();
}

TEST(SequenceRun, ErrorsNameTheNode) {
  auto fails = [](const char* text, const Types& types, const std::map<std::string, ExecValue>& in,
                  const char* what) {
    auto r = exec::run_model_values(parse(text, types), in);
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().message();
  };
  fails(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[?] s, int64 p) => (float[?] y) { y = SequenceAt(s, p) })",
        {{"s", seq(ft({-1}))}},
        {{"s", fseq({{1}, {2}})}, {"p", t(ir::Tensor::scalar<int64_t>(-3))}},
        "position -3 is out of range for a sequence of 2");
  fails(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[?] s) => (float[?] y) { y = ConcatFromSequence <axis = 0, new_axis = 1> (s) })",
        {{"s", seq(ft({-1}))}}, {{"s", fseq({{1}, {2, 3}})}}, "does not fit");
  fails(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[?] s, int64[1] v) => (float[?] y) { y = SequenceInsert(s, v) })",
        {{"s", seq(ft({-1}))}, {"y", seq(ft({-1}))}},
        {{"s", fseq({{1}})}, {"v", t(ir::Tensor::of<int64_t>({1}, {1}))}},
        "inserts int64 into a sequence of float");
  fails(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] o) => (float[2] y) { y = OptionalGetElement(o) })",
        {{"o", opt(ft({2}))}},
        {{"o", ExecValue::none(ExecValue::Kind::kTensor, ir::DType::kFloat)}},
        "the optional is empty");
  // run_model (tensors only) refuses a sequence output, saying what to call instead.
  auto r = exec::run_model(parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a) => (float[2] s) { s = SequenceConstruct(a) })",
                                 {{"s", seq(ft({2}))}}),
                           {{"a", floats({2}, {1, 2})}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("run_model_values"), std::string::npos);
}

// Sequence and optional types, nested ones included, save exactly as they were loaded, and the
// types inference gives to intermediate values are written out (value_info) and read back.
TEST(SequenceIO, TypesRoundTripLosslessly) {
  ir::Model m = parse(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[N,3] xs, int64[?] os, float[2] ot) => (float[N,3] ys, int64[?] os2, bool h) {
  ys = Identity(xs)
  os2 = Identity(os)
  h = OptionalHasElement(ot)
})",
                      {{"xs", seq(tt(ir::DType::kFloat, {-1, 3}))},
                       {"ys", seq(tt(ir::DType::kFloat, {-1, 3}))},
                       {"os", opt(seq(tt(ir::DType::kInt64, {-1})))},
                       {"os2", opt(seq(tt(ir::DType::kInt64, {-1})))},
                       {"ot", opt(ft({2}))}});
  onnx::ModelProto before = ir::model_to_proto(m);
  auto back = ir::model_from_proto(before);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(ir::type_to_string(*back->graph->inputs()[1]), "optional(seq(int64[?]))");
  EXPECT_EQ(ir::type_to_string(*back->graph->inputs()[0]), "seq(float[?,3])");
  onnx::ModelProto again = ir::model_to_proto(*back);
  EXPECT_EQ(test::proto_diff(before, again), "");
  try {
    onnx::checker::check_model(again);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "ONNX checker: " << e.what();
  }

  ir::Model sp = parse(kConstruct, kConstructTypes);
  ASSERT_TRUE(ir::infer_shapes(*sp.graph).is_ok());
  onnx::ModelProto inferred = ir::model_to_proto(sp, /*write_inferred_value_info=*/true);
  bool wrote = false;
  for (const auto& vi : inferred.graph().value_info())
    wrote = wrote || (vi.name() == "s3" && vi.type().has_sequence_type());
  EXPECT_TRUE(wrote);
  auto reread = ir::model_from_proto(inferred);
  ASSERT_TRUE(reread.is_ok());
  EXPECT_EQ(type_of(*reread, "s3"), "seq(float[?])");
  EXPECT_TRUE(test::proto_diff(inferred, ir::model_to_proto(*reread, true)).empty());
}

// Sequence values live outside the arena (planner/README.md): the plan places the tensors around
// them, and a tensor put into a sequence is copied out of its slot, which the plan hands on.
constexpr const char* kPlanned = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4,6] x) => (float[4,6] y, float[8] z) {
  a = Relu(x)
  two = Constant <value = int64 {2}> ()
  s = SplitToSequence <axis = 1> (a, two)
  c = ConcatFromSequence <axis = 1> (s)
  y = Sigmoid(c)
  g1 = ReduceMax <axes = [1], keepdims = 0> (x)
  u = Neg(g1)
  q = SequenceConstruct(u)
  v = Abs(g1)
  w = Exp(v)
  q2 = SequenceInsert(q, w)
  k = ConcatFromSequence <axis = 0> (q2)
  z = Tanh(k)
})";

TEST(SequencePlan, FoldFusePlanThenRunInsideThePlan) {
  ir::Model m = parse(kPlanned);
  const auto inputs = test::random_inputs(m);
  auto want = exec::run_model(m, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  passes::PassManagerOptions pmo;
  pmo.verify_each = true;
  passes::PassManager pm(pmo);
  ASSERT_TRUE(pm.add_pipeline("fold,fuse,cleanup,plan").is_ok());
  passes::PassContext ctx;
  Status st = pm.run(m, ctx);
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_TRUE(ctx.plan_outcome().has_value());
  const planner::MemoryPlan& plan = ctx.plan_outcome()->plan;
  EXPECT_TRUE(planner::check_plan(plan).is_ok());
  for (const auto& pv : plan.values) {
    const ir::Value* v = m.graph->find_value(pv.name);
    ASSERT_NE(v, nullptr) << pv.name;
    EXPECT_TRUE(v->is_tensor()) << pv.name << " is planned";
  }
  // The concatenation of the split has a static shape, so it is planned.
  bool c_planned = false;
  for (const auto& pv : plan.values) c_planned = c_planned || pv.name == "c";
  EXPECT_TRUE(c_planned);
  exec::RunOptions ro;
  ro.plan = &plan;
  auto got = exec::run_model(m, inputs, ro);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i)
    EXPECT_TRUE((*got)[i].same_contents((*want)[i])) << "output " << i;
  try {
    onnx::checker::check_model(ir::model_to_proto(m));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "ONNX checker: " << e.what();
  }
}

// Every ONNX backend node test of the Sequence and Optional ops, and of If, Loop and Identity
// carrying them, passes.
TEST(SequenceConformance, NodeTestsPass) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string dir = shared + "/onnx-conformance/node";
  int cases = 0;
  for (const std::string& path : exec::conformance::list_cases(dir)) {
    const std::string name = path.substr(path.rfind('/') + 1);
    const bool ours =
        name.find("sequence") != std::string::npos || name.find("optional") != std::string::npos ||
        name.find("_opt") != std::string::npos || name.find("_seq") != std::string::npos;
    if (!ours || name.find("reversesequence") != std::string::npos ||
        name.find("seq_length") != std::string::npos)
      continue;
    auto r = exec::conformance::run_case(path);
    EXPECT_EQ(r.outcome, exec::conformance::Outcome::kPassed) << name << ": " << r.detail;
    // Strict shape inference accepts every one of them too (the passes run it).
    auto m = ir::load_model(path + "/model.onnx");
    ASSERT_TRUE(m.is_ok()) << name << ": " << m.status().message();
    ir::InferOptions strict;
    strict.strict = true;
    Status st = ir::infer_shapes(*m->graph, strict);
    EXPECT_TRUE(st.is_ok()) << name << ": " << st.message();
    ++cases;
  }
  EXPECT_EQ(cases, 34);
}

// TorchScript modules that build lists (torch/gen_torch_cases.py; torch's outputs are the
// reference, onnxruntime agrees): they pass as exported (and inside a sequential arena plan), and
// after fold,fuse,cleanup. Planning them is refused, naming the value: the list is built by a
// Loop, so its length, and the concatenation's shape, are data-dependent (as for a Loop's scan
// outputs; planner/README.md).
TEST(SequenceTorch, ScriptedListModelsRunBeforeAndAfterThePasses) {
  const std::string dir = std::string(XOPT_SOURCE_DIR) + "/tests/sequence/torch";
  exec::conformance::Options options;
  options.also_arena = true;
  for (const char* name : {"torch_list_rows", "torch_list_chunks"}) {
    const std::string path = dir + "/" + name;
    auto r = exec::conformance::run_case(path, options);
    EXPECT_EQ(r.outcome, exec::conformance::Outcome::kPassed) << name << ": " << r.detail;

    auto model = ir::load_model(path + "/model.onnx");
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    passes::PassManagerOptions pmo;
    pmo.verify_each = true;
    passes::PassManager pm(pmo);
    ASSERT_TRUE(pm.add_pipeline("fold,fuse,cleanup").is_ok());
    passes::PassContext ctx;
    Status st = pm.run(*model, ctx);
    ASSERT_TRUE(st.is_ok()) << name << ": " << st.message();
    auto x = exec::conformance::read_tensor_file(path + "/test_data_set_0/input_0.pb");
    ASSERT_TRUE(x.is_ok()) << x.status().message();
    try {
      onnx::checker::check_model(ir::model_to_proto(*model));
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": ONNX checker: " << e.what();
    }
    auto got = exec::run_model(*model, {{model->graph->runtime_inputs()[0]->name(), *x}});
    ASSERT_TRUE(got.is_ok()) << name << ": " << got.status().message();
    for (size_t i = 0; i < got->size(); ++i) {
      auto want = exec::conformance::read_tensor_file(path + "/test_data_set_0/output_" +
                                                      std::to_string(i) + ".pb");
      ASSERT_TRUE(want.is_ok()) << want.status().message();
      std::string why;
      EXPECT_TRUE(exec::conformance::outputs_match((*got)[i], *want, 1e-4, 1e-5, &why))
          << name << " output " << i << ": " << why;
    }
    passes::PassManager planning;
    ASSERT_TRUE(planning.add_pipeline("plan").is_ok());
    passes::PassContext pctx;
    Status planned = planning.run(*model, pctx);
    ASSERT_FALSE(planned.is_ok()) << name;
    EXPECT_NE(planned.message().find("(ConcatFromSequence)"), std::string::npos)
        << planned.message();
  }
}

}  // namespace
}  // namespace xopt
