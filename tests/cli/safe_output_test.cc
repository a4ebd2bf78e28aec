// Safe outputs (issue 15): every file xopt writes (the model, its .data file, statistics, reports,
// diagrams) is written whole or not at all. A failing write is simulated with a file-size limit
// (RLIMIT_FSIZE, as a full disk does: the write fails with EFBIG) and a kill midway (the same limit
// with its signal, SIGXFSZ, left to kill the process); neither leaves a partial or temporary file,
// nor changes the input or an output already there.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;   // exit code, or -1 when killed
  int signal = 0;  // the signal that killed it
};

// Runs xopt with files limited to `limit` bytes; `killed`: SIGXFSZ keeps its default action.
Outcome run_limited(const std::vector<std::string>& args, rlim_t limit, bool killed) {
  pid_t pid = fork();
  if (pid == 0) {
    rlimit rl{limit, limit};
    setrlimit(RLIMIT_FSIZE, &rl);
    std::signal(SIGXFSZ, killed ? SIG_DFL : SIG_IGN);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> argv{const_cast<char*>(XOPT_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(XOPT_BIN, argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome o;
  if (WIFEXITED(status)) o.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  return o;
}

// x + w with 1 MiB of inline weights: its output is far over the limits used below.
std::string write_big_model(const test::TempDir& dir) {
  onnx::ModelProto m = test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[262144] x) => (float[262144] y) <float[1] w = {0}> {
      a = Add(x, w)
      y = Relu(a)
    })");
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_dims(0, 262144);
  std::string raw(262144 * 4, '\0');
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 7);
  w->set_raw_data(raw);
  const std::string path = dir / "model.onnx";
  test::write_proto(path, m);
  return path;
}

TEST(SafeOutput, FailingWriteLeavesNothing) {
  for (bool external : {false, true}) {
    for (bool killed : {false, true}) {
      SCOPED_TRACE(std::string(external ? "with" : "without") + " a data file, " +
                   (killed ? "killed midway" : "write fails (EFBIG)"));
      test::TempDir dir;
      const std::string model = write_big_model(dir);
      const std::string input = test::read_file(model);
      std::vector<std::string> args{"--passes=cleanup,fold,fuse,plan", model, "-o",
                                    dir / "out.onnx"};
      if (external) args.push_back("--external-data=1KiB");
      Outcome o = run_limited(args, 64 << 10, killed);
      if (killed) {
        EXPECT_EQ(o.signal, SIGXFSZ);
      } else {
        EXPECT_EQ(o.code, 2);
      }
      EXPECT_EQ(dir.files(), std::vector<std::string>{"model.onnx"}) << "no partial file";
      EXPECT_EQ(test::read_file(model), input) << "the input is unchanged";
    }
  }
}

TEST(SafeOutput, FailingWriteKeepsThePreviousOutput) {
  test::TempDir dir;
  const std::string model = write_big_model(dir);
  auto r = test::run_xopt(
      {"--passes=cleanup", model, "-o", dir / "out.onnx", "--stats-json", dir / "stats.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string before = test::read_file(dir / "out.onnx");
  const std::string stats = test::read_file(dir / "stats.json");
  Outcome o = run_limited({"--passes=cleanup,fold,fuse,plan", model, "-o", dir / "out.onnx",
                           "--stats-json", dir / "stats.json"},
                          64 << 10, false);
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(test::read_file(dir / "out.onnx"), before);
  EXPECT_EQ(test::read_file(dir / "stats.json"), stats);
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"model.onnx", "out.onnx", "stats.json"}));
}

// The model fits but the statistics, report and diagrams do not: each is absent or whole.
TEST(SafeOutput, ReportsAreWholeOrAbsent) {
  test::TempDir dir;
  test::write_proto(dir / "small.onnx", test::parse_text_proto(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,8] x) => (float[1,8] y) {
      a = Relu(x)
      y = Neg(a)
    })"));
  for (bool killed : {false, true}) {
    SCOPED_TRACE(killed ? "killed" : "write fails");
    Outcome o = run_limited(
        {"--passes=cleanup,fold,fuse,plan", dir / "small.onnx", "-o", dir / "out.onnx",
         "--stats-json", dir / "stats.json", "--report", dir / "report", "--dot", dir / "dot"},
        1500, killed);
    EXPECT_TRUE(killed ? o.signal == SIGXFSZ : o.code == 2) << o.code << " " << o.signal;
    for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
      const std::string name = e.path().filename().string();
      EXPECT_EQ(name.find(".tmp"), std::string::npos) << e.path();
      if (name == "stats.json" || name == "report.json") {
        EXPECT_TRUE(nlohmann::json::accept(test::read_file(e.path().string()))) << e.path();
      }
      if (name == "out.onnx") {
        onnx::ModelProto m;
        EXPECT_TRUE(m.ParseFromString(test::read_file(e.path().string())));
      }
    }
  }
}

// The writer itself, with an injected failure midway.
TEST(SafeOutput, WriterFailingMidwayLeavesTheFileAsItWas) {
  test::TempDir dir;
  const std::string path = dir / "f.txt";
  Status st = write_file_atomically(path, [](std::ostream& os) {
    os << std::string(100000, 'x');
    return false;
  });
  EXPECT_FALSE(st.is_ok());
  EXPECT_TRUE(dir.files().empty());
  ASSERT_TRUE(write_file_atomically(path, std::string("old")).is_ok());
  st = write_file_atomically(path, [](std::ostream& os) {
    os << "new";
    os.setstate(std::ios::badbit);
    return true;
  });
  EXPECT_FALSE(st.is_ok());
  EXPECT_EQ(test::read_file(path), "old");
  EXPECT_EQ(dir.files(), std::vector<std::string>{"f.txt"});
  EXPECT_FALSE(write_file_atomically(dir / "no/such/dir/f", std::string("x")).is_ok());
  ASSERT_TRUE(write_file_atomically(path, std::string("new")).is_ok());
  EXPECT_EQ(test::read_file(path), "new");
}

}  // namespace
}  // namespace xopt
