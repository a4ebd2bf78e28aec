#include "ir/text.h"

#include <sstream>

#include "ir/onnx_io.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/printer.h"

namespace xopt::ir {

Result<Model> parse_model_text(std::string_view text) {
  onnx::ModelProto proto;
  std::string buf(text);
  auto status = onnx::OnnxParser::Parse(proto, buf.c_str());
  if (!status.IsOK()) return invalid_model("cannot parse ONNX text: " + status.ErrorMessage());
  return model_from_proto(std::move(proto));
}

std::string print_graph_text(const Model& model, int64_t max_elements) {
  onnx::ModelProto proto = model_to_proto(model);
  onnx::GraphProto& g = *proto.mutable_graph();
  // Large initializers: keep name, type and dims, drop the payload.
  for (auto& t : *g.mutable_initializer()) {
    int64_t n = 1;
    for (auto d : t.dims()) n *= d;
    if (n > max_elements) {
      t.clear_raw_data();
      t.clear_float_data();
      t.clear_int32_data();
      t.clear_int64_data();
      t.clear_double_data();
      t.clear_uint64_data();
      t.clear_string_data();
      t.clear_external_data();
      t.clear_data_location();
    }
  }
  g.clear_value_info();
  std::ostringstream os;
  os << g;
  return os.str();
}

}  // namespace xopt::ir
