// Loading and saving ONNX models, losslessly for everything the optimizer does not change.
#pragma once

#include <string>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::ir {

// Reads an .onnx file. External weights are memory-mapped from the model's folder (never copied), and
// any external path that escapes that folder is refused. Errors name the file.
Result<Model> load_model(const std::string& path);
// Builds a Model from a parsed proto (consumed: initializer bytes are moved, not copied).
Result<Model> model_from_proto(onnx::ModelProto proto, const std::string& base_dir = "",
                               const std::string& path = "");

struct SaveOptions {
  enum class External {
    kAuto,    // external when the model came with external data or its weights pass 2 GiB
    kAlways,  // every tensor of at least `external_threshold` bytes goes to the data file
    kNever,   // everything inline (fails above protobuf's 2 GiB limit)
  };
  External external = External::kAuto;
  size_t external_threshold = 1024;
  // Data file name, relative to the model's folder; default "<model file name>.data".
  std::string data_file;
  // Also write value_info for every intermediate value with a known type (after shape inference).
  bool write_inferred_value_info = false;
};

// Builds the ModelProto with every tensor inline.
onnx::ModelProto model_to_proto(const Model& model, bool write_inferred_value_info = false);
// Writes the model atomically (temporary file + rename); the data file too. Never writes over the file
// the model was loaded from (an error), so the input is never changed.
Status save_model(const Model& model, const std::string& path, const SaveOptions& options = {});

// Total bytes of initializer payloads.
size_t weight_bytes(const Model& model);

}  // namespace xopt::ir
