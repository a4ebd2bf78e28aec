// ONNX text syntax -> model -> verify -> printed back as text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/shape_inference.h"
#include "ir/text.h"
#include "ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xopt;
  auto model = ir::parse_model_text(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!model.is_ok()) return 0;
  if (!model->graph->topo_sort(nullptr)) return 0;
  if (!ir::verify(*model->graph).is_ok()) return 0;
  (void)ir::infer_shapes(*model->graph);
  (void)ir::print_graph_text(*model);
  return 0;
}
