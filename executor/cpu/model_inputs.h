// Inputs to run a model on: stored data sets (model-zoo test_data_set_* folders of TensorProto
// files), single TensorProto files, or seeded random tensors that respect each input's dtype and
// the range of values the graph can take (ids that index an embedding stay below its size).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "ir/tensor.h"

namespace xopt::exec {

// Values are drawn from [lo, hi): uniformly for floats; for integers every value in [lo, hi]
// (both ends included) is equally likely.
struct ValueRange {
  double lo = 0.0;
  double hi = 0.0;
  std::string origin;  // "given", "Gather 'node' data dim 8192", "default"
};

struct RandomInputOptions {
  uint64_t seed = 0;
  // Per input, overriding everything else.
  std::map<std::string, std::pair<double, double>> ranges;
  // Symbolic or unknown dims: bound by input name (full shape) or, for a leading symbolic dim,
  // by batch; anything still unknown is taken as 1.
  ir::ShapeBindings shapes;
  // Inputs given some other way, left out of random_inputs' result.
  std::set<std::string> skip;
};

// Default ranges when nothing else is known: floats [-1, 1), integers 0..9, bool 0..1.
//
// Integer inputs that reach the indices of a Gather or GatherElements (directly or through Cast,
// Identity, Reshape, Flatten, Squeeze, Unsqueeze, Expand or Transpose), or the ids of
// com.microsoft.EmbedLayerNormalization, get 0..(dim - 1) of the indexed axis (the smallest such
// dim when several), so random ids are valid.
Result<ValueRange> input_value_range(const ir::Graph& graph, const ir::Value& input,
                                     const RandomInputOptions& options);

// The dims random data for `input` gets (see RandomInputOptions::shapes). Errors when a binding's
// rank or a known dim disagrees with the declared shape.
Result<std::vector<int64_t>> input_dims(const ir::Value& input, const RandomInputOptions& options);

// One tensor per runtime input of `graph`, deterministic for a seed (the generator is mt19937_64,
// each input seeded from the seed and its position). `notes` (if given) gets one line per input:
// name, dtype, dims and range with its origin. Errors name an input of a type that cannot be
// generated (strings, sequences) or a range flag naming no input.
Result<std::map<std::string, ir::Tensor>> random_inputs(const ir::Graph& graph,
                                                        const RandomInputOptions& options,
                                                        std::vector<std::string>* notes = nullptr);

// A stored data set: inputs by graph input name, expected outputs by position (may be empty).
struct DataSet {
  std::string name;  // folder name
  std::map<std::string, ir::Tensor> inputs;
  std::vector<ir::Tensor> outputs;
};

// Data set folders for `dir`: `dir` itself when it holds input_0.pb, else its test_data_set_*
// subfolders, sorted. Empty when there are none.
std::vector<std::string> find_data_sets(const std::string& dir);

// Reads input_*.pb and output_*.pb of one folder. An input file whose TensorProto name is a runtime
// input of `graph` feeds that input; unnamed files feed the runtime inputs by position.
Result<DataSet> read_data_set(const ir::Graph& graph, const std::string& dir);

// Reads a TensorProto file; `name` (if given) gets its name field.
Result<ir::Tensor> read_tensor_proto_file(const std::string& path, std::string* name = nullptr);

// "NAME=VALUE" -> {NAME, VALUE}, split at the first '=' (so a file path may contain one).
Result<std::pair<std::string, std::string>> split_assignment(const std::string& text);
// "LO:HI" -> {lo, hi} with lo <= hi.
Result<std::pair<double, double>> parse_range(const std::string& text);

}  // namespace xopt::exec
