// Running xopt from tests: a fresh temporary folder per test, models written from ONNX text or
// protobufs, and the command's exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace xopt::test {

struct CommandResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs XOPT_BIN with `args` (each passed as one argument).
CommandResult run_xopt(const std::vector<std::string>& args);
// The same with `dir` as the working folder (relative paths in `args` are read from there).
CommandResult run_xopt_in(const std::string& dir, const std::vector<std::string>& args);

// A folder under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  // Names of the files in the folder, sorted.
  std::vector<std::string> files() const;

 private:
  std::filesystem::path path_;
};

onnx::ModelProto parse_text_proto(const std::string& text);
void write_proto(const std::string& path, const onnx::ModelProto& m);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);
// Number of '\n' in s.
int count_lines(const std::string& s);

}  // namespace xopt::test
