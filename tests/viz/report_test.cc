// report.html from `xopt --report` opens in headless Chromium: the screenshot is not blank and the
// page's own self-check (node <-> timeline highlighting) reports success in the DOM. Skips, saying
// so, where Chromium is not installed (scripts/setup.sh installs Debian's `chromium`).
#include <png.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string path = run_capture(std::string("command -v ") + name + " 2>/dev/null");
    if (!path.empty()) return path.substr(0, path.find('\n'));
  }
  return "";
}

// A profile folder of its own for every Chromium started: ctest runs these tests in parallel, and
// two Chromiums on one profile make the second fail (it was flaky under ctest -j2).
std::string chromium_flags() {
  static int run = 0;
  const fs::path profile =
      fs::temp_directory_path() /
      ("xopt_viz_chromium_" + std::to_string(::getpid()) + "_" + std::to_string(run++));
  return " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars "
         "--no-first-run --user-data-dir=" +
         profile.string();
}

// Distinct colours in a PNG (capped): a blank page has one.
size_t distinct_colours(const fs::path& png_path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, png_path.c_str())) return 0;
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> px(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, px.data(), 0, nullptr)) return 0;
  std::set<uint32_t> colours;
  for (size_t i = 0; i + 2 < px.size() && colours.size() < 64; i += 3)
    colours.insert(px[i] << 16 | px[i + 1] << 8 | px[i + 2]);
  return colours.size();
}

void check_report(const std::string& model_name) {
  const std::string model = test::shared_model_path(model_name);
  if (model.empty()) return;
  const fs::path dir = fs::temp_directory_path() / ("xopt_viz_report_" + model_name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string cmd = std::string(XOPT_BIN) + " --passes=fold,fuse,plan --batch 1 -q " + model +
                          " -o " + (dir / "model.opt.onnx").string() + " --report " + dir.string() +
                          " --dot " + (dir / "dot").string() + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const fs::path html = dir / "report.html";
  ASSERT_TRUE(fs::exists(html));
  ASSERT_TRUE(fs::exists(dir / "report.json"));
  for (const char* f : {"before.dot", "before.svg", "after.dot", "after.svg"})
    EXPECT_TRUE(fs::exists(dir / "dot" / f)) << f;
  // Self-contained: nothing is loaded from the network.
  const std::string page = read_file(html);
  for (const char* ref : {"src=\"http", "href=\"http", "url(http", "@import"})
    EXPECT_EQ(page.find(ref), std::string::npos) << ref;

  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install -y chromium)";
  const std::string dom = run_capture(chromium + chromium_flags() + " --dump-dom file://" +
                                      html.string() + " 2>/dev/null");
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  const size_t at = dom.find("id=\"selfcheck\"");
  ASSERT_NE(at, std::string::npos);
  const std::string selfcheck = dom.substr(at, dom.find("</div>", at) - at);
  EXPECT_NE(selfcheck.find("data-status=\"ok\""), std::string::npos) << selfcheck;
  EXPECT_NE(selfcheck.find(">ok: node after-"), std::string::npos) << selfcheck;

  const fs::path shot = dir / "shot.png";
  run_capture(chromium + chromium_flags() + " --window-size=1400,1600 --screenshot=" +
              shot.string() + " file://" + html.string() + " 2>&1");
  ASSERT_TRUE(fs::exists(shot)) << "chromium wrote no screenshot";
  EXPECT_GT(distinct_colours(shot), 8u) << "the screenshot is blank";
  fs::remove_all(dir);
}

// xviz diff -o diff.html: the same page without a plan; its self-check clicks a fused node and
// expects the originals it replaced marked.
TEST(Report, DiffPageLinksFusedNodesToTheirOriginals) {
  const std::string model = test::shared_model_path("resnet18");
  if (model.empty()) return;
  const fs::path dir = fs::temp_directory_path() / "xopt_viz_report_diff";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string opt = (dir / "model.opt.onnx").string();
  const std::string html = (dir / "diff.html").string();
  const std::string cmd = std::string(XOPT_BIN) + " --passes=fold,fuse -q " + model + " -o " + opt +
                          " > /dev/null && " + XVIZ_BIN + " diff " + model + " " + opt + " -o " +
                          html + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install -y chromium)";
  const std::string dom =
      run_capture(chromium + chromium_flags() + " --dump-dom file://" + html + " 2>/dev/null");
  const size_t at = dom.find("id=\"selfcheck\"");
  ASSERT_NE(at, std::string::npos);
  const std::string selfcheck = dom.substr(at, dom.find("</div>", at) - at);
  EXPECT_NE(selfcheck.find("data-status=\"ok\""), std::string::npos) << selfcheck;
  EXPECT_NE(selfcheck.find("original(s)"), std::string::npos) << selfcheck;
  fs::remove_all(dir);
}

TEST(Report, Resnet18OpensInChromiumAndPassesItsSelfCheck) {
  check_report("resnet18");
}
TEST(Report, BertMiniOpensInChromiumAndPassesItsSelfCheck) {
  check_report("bert_mini");
}

}  // namespace
}  // namespace xopt
