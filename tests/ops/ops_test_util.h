// Helpers for the op registry tests: reading test data and stripping declared shapes from models.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "ir/dims_string.h"
#include "ir/graph.h"
#include "ir/onnx_io.h"
#include "ir/op_registry.h"
#include "ir/shape_inference.h"
#include "onnx/onnx_pb.h"

namespace xopt::test {

inline bool read_tensor_file(const std::string& path, onnx::TensorProto* t) {
  std::ifstream in(path, std::ios::binary);
  return in && t->ParseFromIstream(&in);
}

// Removes every shape the model declares for values computed by nodes (value_info, graph output
// shapes), so inference has to work them out. Element types of graph outputs stay.
inline void strip_declared_shapes(onnx::ModelProto& m) {
  m.mutable_graph()->clear_value_info();
  for (auto& o : *m.mutable_graph()->mutable_output())
    if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
}

inline int64_t default_opset(const onnx::ModelProto& m) {
  for (const auto& op : m.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
  return 0;
}

// Op types of the graph (top level) that the registry does not cover at the model's opsets.
inline std::vector<std::string> unregistered_ops(const onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const auto& n : m.graph().node()) {
    int64_t opset = 0;
    const std::string dom = n.domain() == "ai.onnx" ? "" : n.domain();
    for (const auto& op : m.opset_import())
      if ((op.domain() == "ai.onnx" ? "" : op.domain()) == dom) opset = op.version();
    if (ir::find_op(dom, n.op_type(), opset) == nullptr) out.push_back(n.op_type());
  }
  return out;
}

inline std::string dims_string(const onnx::TensorProto& t) {
  return ir::dims_string(std::vector<int64_t>(t.dims().begin(), t.dims().end()));
}

}  // namespace xopt::test
