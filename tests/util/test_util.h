// Helpers shared by all test binaries: where ../shared is, and protobuf comparison.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"

namespace xopt::test {

// ../shared, or nullopt when absent (tests then skip, or fail in CI, with a message saying so).
std::optional<std::string> shared_dir();
// The folder shared_dir() looks in: $XOPT_SHARED_DIR, else the CMake option XOPT_SHARED_DIR.
std::string shared_dir_wanted();
// True when the CI environment variable is set to anything but "", "0", "false" or "no": CI always
// has ../shared, so there a missing shared folder fails the tests that need it instead of skipping.
bool in_ci();
// "the shared folder '/path' (with models/) is missing ...", for the skip or failure message.
std::string missing_shared_message();
// The six shared models' names.
const std::vector<std::string>& shared_model_names();
// Path of ../shared/models/NAME/model.onnx, or GTEST_SKIP()s the calling test via the returned
// empty string.
std::string shared_model_path(const std::string& name);

// Sorts the repeated fields whose order carries no meaning (metadata_props by key, ...) and inlines
// external data so two models can be compared as protobufs.
void canonicalize(onnx::ModelProto& m, const std::string& base_dir);
// Empty string when equal, otherwise a description of the first difference.
std::string proto_diff(const google::protobuf::Message& a, const google::protobuf::Message& b);

std::vector<std::string> glob_files(const std::string& dir, const std::string& filename,
                                    int max_depth);
onnx::ModelProto read_proto_file(const std::string& path);

}  // namespace xopt::test

// Binds `var` to the shared folder, or ends the test: skipped, saying which folder is missing; or
// failed, naming it, when in_ci().
#define XOPT_REQUIRE_SHARED(var)                                                       \
  auto var##_opt = ::xopt::test::shared_dir();                                         \
  if (!var##_opt) {                                                                    \
    if (::xopt::test::in_ci()) GTEST_FAIL() << ::xopt::test::missing_shared_message(); \
    GTEST_SKIP() << ::xopt::test::missing_shared_message();                            \
  }                                                                                    \
  const std::string var = *var##_opt
