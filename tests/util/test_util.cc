#include "tests/util/test_util.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "ir/tensor_proto.h"

namespace xopt::test {

namespace fs = std::filesystem;

std::string shared_dir_wanted() {
  const char* env = std::getenv("XOPT_SHARED_DIR");
  return env != nullptr ? env : XOPT_SHARED_DIR;
}

std::optional<std::string> shared_dir() {
  const std::string dir = shared_dir_wanted();
  if (fs::exists(fs::path(dir) / "models")) return fs::canonical(dir).string();
  return std::nullopt;
}

bool in_ci() {
  const char* env = std::getenv("CI");
  if (env == nullptr) return false;
  const std::string v = env;
  return !v.empty() && v != "0" && v != "false" && v != "FALSE" && v != "False" && v != "no";
}

std::string missing_shared_message() {
  std::string m = "the shared folder '" + shared_dir_wanted() +
                  "' (with models/ and onnx-conformance/) is missing";
  if (in_ci()) return m + ": CI is set, where it must exist (configure with -DXOPT_SHARED_DIR=...)";
  return m + ": test skipped (set XOPT_SHARED_DIR, or configure with -DXOPT_SHARED_DIR=...)";
}

const std::vector<std::string>& shared_model_names() {
  static const std::vector<std::string> names = {"squeezenet1_1",      "mobilenet_v2", "resnet18",
                                                 "shufflenet_v2_x1_0", "bert_mini",    "gpt_nano"};
  return names;
}

std::string shared_model_path(const std::string& name) {
  auto d = shared_dir();
  if (!d) return "";
  return *d + "/models/" + name + "/model.onnx";
}

namespace {
void canonicalize_graph(onnx::GraphProto& g, const std::string& base_dir) {
  for (auto& t : *g.mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    auto decoded = ir::tensor_from_proto(t, base_dir);
    if (!decoded.is_ok()) continue;
    onnx::TensorProto inl = ir::tensor_to_proto(*decoded);
    t.clear_external_data();
    t.clear_data_location();
    t.set_raw_data(inl.raw_data());
  }
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) canonicalize_graph(*a.mutable_g(), base_dir);
      for (auto& sg : *a.mutable_graphs()) canonicalize_graph(sg, base_dir);
    }
}
}  // namespace

void canonicalize(onnx::ModelProto& m, const std::string& base_dir) {
  auto* md = m.mutable_metadata_props();
  std::sort(md->begin(), md->end(), [](const auto& a, const auto& b) { return a.key() < b.key(); });
  canonicalize_graph(*m.mutable_graph(), base_dir);
}

std::string proto_diff(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  google::protobuf::util::MessageDifferencer diff;
  google::protobuf::util::DefaultFieldComparator cmp;
  cmp.set_treat_nan_as_equal(true);
  diff.set_field_comparator(&cmp);
  std::string report;
  diff.ReportDifferencesToString(&report);
  if (diff.Compare(a, b)) return "";
  if (report.size() > 2000) report.resize(2000);
  return report.empty() ? "differs" : report;
}

std::vector<std::string> glob_files(const std::string& dir, const std::string& filename,
                                    int max_depth) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    if (it.depth() > max_depth) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().filename() == filename)
      out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

onnx::ModelProto read_proto_file(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  m.ParseFromIstream(&in);
  return m;
}

}  // namespace xopt::test
