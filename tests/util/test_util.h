// Helpers shared by all test binaries: where ../shared is, and protobuf comparison.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"

namespace xopt::test {

// ../shared, or nullopt when absent (tests then GTEST_SKIP with a message saying so).
std::optional<std::string> shared_dir();
// The six shared models' names.
const std::vector<std::string>& shared_model_names();
// Path of ../shared/models/NAME/model.onnx, or GTEST_SKIP()s the calling test via the returned empty string.
std::string shared_model_path(const std::string& name);

// Sorts the repeated fields whose order carries no meaning (metadata_props by key, ...) and inlines
// external data so two models can be compared as protobufs.
void canonicalize(onnx::ModelProto& m, const std::string& base_dir);
// Empty string when equal, otherwise a description of the first difference.
std::string proto_diff(const google::protobuf::Message& a, const google::protobuf::Message& b);

std::vector<std::string> glob_files(const std::string& dir, const std::string& filename, int max_depth);
onnx::ModelProto read_proto_file(const std::string& path);

}  // namespace xopt::test

#define XOPT_REQUIRE_SHARED(var)                                                       \
  auto var##_opt = ::xopt::test::shared_dir();                                         \
  if (!var##_opt) GTEST_SKIP() << "../shared is absent: test skipped (set XOPT_SHARED_DIR)"; \
  const std::string var = *var##_opt
