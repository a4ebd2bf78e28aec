#include "tests/cli/cli_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "onnx/defs/parser.h"

namespace xopt::test {

namespace fs = std::filesystem;

namespace {
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}
}  // namespace

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string("xopt_cli_") + (info ? info->name() : "test") + "_" +
                     std::to_string(::getpid()) + "_" + std::to_string(counter++);
  path_ = fs::temp_directory_path() / name;
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::vector<std::string> TempDir::files() const {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

CommandResult run_xopt(const std::vector<std::string>& args) {
  return run_xopt_in("", args);
}

CommandResult run_xopt_in(const std::string& dir, const std::vector<std::string>& args) {
  TempDir io;
  std::string cmd = dir.empty() ? std::string() : "cd " + shell_quote(dir) + " && ";
  cmd += shell_quote(XOPT_BIN);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote(io / "stdout") + " 2>" + shell_quote(io / "stderr");
  int status = std::system(cmd.c_str());
  CommandResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(io / "stdout");
  r.err = read_file(io / "stderr");
  return r;
}

onnx::ModelProto parse_text_proto(const std::string& text) {
  onnx::ModelProto m;
  auto status = onnx::OnnxParser::Parse(m, text.c_str());
  EXPECT_TRUE(status.IsOK()) << status.ErrorMessage();
  return m;
}

void write_proto(const std::string& path, const onnx::ModelProto& m) {
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace xopt::test
