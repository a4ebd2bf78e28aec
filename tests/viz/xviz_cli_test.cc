// xviz as a user runs it: every subcommand writes its file; mistakes are one line and an exit code
// (1 usage, 2 bad model or unwritable file).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "tests/util/test_util.h"
#include "viz/raster.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

int run(const std::string& args, const std::string& env = "") {
  const int rc = std::system(
      ((env.empty() ? "" : env + " ") + std::string(XVIZ_BIN) + " " + args + " > /dev/null 2>&1")
          .c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string head(const fs::path& p, size_t n) {
  std::ifstream in(p, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  return s;
}

class XvizCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test and process: ctest runs these tests in parallel, and a shared folder was
    // removed under a running test by another's TearDown.
    dir_ = fs::temp_directory_path() /
           ("xopt_viz_cli_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(XvizCli, EveryGraphFormatAndTheCharts) {
  const std::string model = test::shared_model_path("resnet18");
  if (model.empty()) return;
  EXPECT_EQ(run("graph " + model + " -o " + at("g.svg")), 0);
  EXPECT_EQ(head(at("g.svg"), 5), "<?xml");
  EXPECT_EQ(run("graph " + model + " -o " + at("g.png") + " --collapse-depth 1"), 0);
  EXPECT_EQ(head(at("g.png"), 4).substr(1), "PNG");
  EXPECT_EQ(run("graph " + model + " -o " + at("g.pdf") + " --show-weights"), 0);
  EXPECT_EQ(head(at("g.pdf"), 4), "%PDF");
  EXPECT_EQ(run("graph " + model + " -o " + at("g.dot")), 0);
  EXPECT_EQ(head(at("g.dot"), 7), "digraph");

  const std::string opt = at("m.opt.onnx");
  const std::string cmd = std::string(XOPT_BIN) + " --passes=fold,fuse,plan --batch 1 -q " + model +
                          " -o " + opt + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(run("timeline " + opt + " -o " + at("t.svg")), 0);
  EXPECT_EQ(run("timeline " + opt + " -o " + at("t.html")), 0);
  EXPECT_EQ(run("timeline " + opt + " --batch 1,4 -o " + at("sweep.svg")), 0);
  std::ifstream sweep(at("sweep.svg"));
  std::stringstream ss;
  ss << sweep.rdbuf();
  size_t charts = 0;
  for (size_t p = ss.str().find("class=\"xopt-timeline\""); p != std::string::npos;
       p = ss.str().find("class=\"xopt-timeline\"", p + 1))
    ++charts;
  EXPECT_EQ(charts, 2u);
  EXPECT_NE(ss.str().find("at batch 4"), std::string::npos);
  EXPECT_EQ(run("timeline " + opt + " --batch 0 -o " + at("bad.svg")), 1);
  EXPECT_EQ(head(at("t.html"), 15), "<!DOCTYPE html>");
  EXPECT_EQ(run("breakdown " + opt + " " + opt + " -o " + at("b.svg")), 0);
  EXPECT_EQ(run("diff " + model + " " + opt + " -o " + at("d.html")), 0);
  // PNG of the charts (librsvg), and a breakdown sweep.
  if (viz::can_rasterize()) {
    EXPECT_EQ(run("timeline " + opt + " -o " + at("t.png")), 0);
    EXPECT_EQ(head(at("t.png"), 4).substr(1), "PNG");
  } else {
    EXPECT_NE(run("timeline " + opt + " -o " + at("t.png")), 0) << "PNG without librsvg";
  }
  EXPECT_EQ(run("breakdown " + opt + " --batch 1,4 -o " + at("bs.svg")), 0);
  EXPECT_EQ(run("breakdown " + opt + " --batch 0 -o " + at("bad.svg")), 1);
}

// Rendering needs no Graphviz plugin folder or config at run time (the dot, core and cairo plugins
// are linked in): a bundle that carries the libraries alone still lays out graphs.
TEST_F(XvizCli, RendersWithoutGraphvizPluginFolder) {
  const std::string model = test::shared_model_path("squeezenet1_1");
  if (model.empty()) return;
  for (const char* ext : {"svg", "png", "pdf"})
    EXPECT_EQ(run("graph " + model + " -o " + at(std::string("g.") + ext), "GVBINDIR=/nonexistent"),
              0)
        << ext;
}

TEST_F(XvizCli, MistakesAreExitCodes) {
  const std::string model = test::shared_model_path("resnet18");
  if (model.empty()) return;
  EXPECT_EQ(run("graph " + model + " -o " + at("g.bmp")), 1);  // unknown format
  EXPECT_EQ(run("graph"), 1);                                  // no model
  EXPECT_EQ(run("graph " + at("missing.onnx") + " -o " + at("g.svg")), 2);
  EXPECT_EQ(run("timeline " + model + " -o " + at("t.svg")), 2);  // carries no plan
  EXPECT_FALSE(fs::exists(at("t.svg")));
}

}  // namespace
}  // namespace xopt
