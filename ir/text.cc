#include "ir/text.h"

#include <sstream>

#include "ir/onnx_io.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/printer.h"

namespace xopt::ir {

namespace {

// libonnx's parser recurses once per bracket level (subgraphs, attribute lists, literals) without a
// limit: a deep enough text would overflow the stack. Deeper than protobuf's own parsing limit is
// refused before parsing.
constexpr int kMaxNesting = 100;

bool nesting_within_limit(std::string_view text) {
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '(' || c == '{' || c == '[' || c == '<') {
      if (++depth > kMaxNesting) return false;
    } else if (c == ')' || c == '}' || c == ']' || (c == '>' && (i == 0 || text[i - 1] != '='))) {
      --depth;  // "=>" separates a graph's inputs from its outputs: no bracket
    }
  }
  return true;
}

}  // namespace

Result<Model> parse_model_text(std::string_view text) {
  if (!nesting_within_limit(text))
    return invalid_model("cannot parse ONNX text: brackets nested deeper than " +
                         std::to_string(kMaxNesting));
  onnx::ModelProto proto;
  std::string buf(text);
  try {  // libonnx's parser throws on some malformed numbers (std::stof; found by
         // fuzz/fuzz_text.cc)
    auto status = onnx::OnnxParser::Parse(proto, buf.c_str());
    if (!status.IsOK()) return invalid_model("cannot parse ONNX text: " + status.ErrorMessage());
  } catch (const std::exception& e) {
    return invalid_model(std::string("cannot parse ONNX text: ") + e.what());
  }
  return model_from_proto(std::move(proto));
}

namespace {

// "float[4] b = {1,2,3,4}", or "float[64,3,7,7] w = {...}" when the payload is elided.
std::string initializer_text(const onnx::TensorProto& t, int64_t max_elements) {
  int64_t n = 1;
  for (auto d : t.dims()) n *= d;
  std::ostringstream os;
  if (n > max_elements || t.data_location() == onnx::TensorProto::EXTERNAL) {
    onnx::TensorProto sig;
    sig.set_name(t.name());
    sig.set_data_type(t.data_type());
    *sig.mutable_dims() = t.dims();
    os << sig;
    std::string s = os.str();
    auto brace = s.find("  {");
    if (brace != std::string::npos) s = s.substr(0, brace);
    return s + " = {...}";
  }
  os << t;
  std::string s = os.str();
  auto brace = s.find("  {");
  if (brace != std::string::npos) s.replace(brace, 3, " = {");
  return s;
}

template <typename List>
void print_value_list(std::ostream& os, const List& list) {
  for (int i = 0; i < list.size(); ++i) os << (i ? ", " : "") << list.Get(i);
}

}  // namespace

std::string print_graph_text(const Model& model, int64_t max_elements) {
  onnx::ModelProto proto = model_to_proto(model);
  const onnx::GraphProto& g = proto.graph();
  std::ostringstream os;
  os << g.name() << " (";
  print_value_list(os, g.input());
  os << ") => (";
  print_value_list(os, g.output());
  os << ")";
  if (g.initializer_size() > 0) {
    os << "\n   <";
    for (int i = 0; i < g.initializer_size(); ++i)
      os << (i ? ", " : "") << initializer_text(g.initializer(i), max_elements);
    os << ">";
  }
  os << "\n{\n";
  for (const auto& n : g.node()) os << "   " << n << "\n";
  os << "}\n";
  return os.str();
}

}  // namespace xopt::ir
