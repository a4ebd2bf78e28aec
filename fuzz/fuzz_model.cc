// ONNX bytes -> load -> verify -> cleanup,fold,fuse,plan -> save -> load again. Any input must end
// in an error or a saved model that loads, never a crash. External data resolves against an empty
// folder.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"

namespace {

// An empty folder of this process's own (removed at exit): external data resolves against it.
const std::string& work_dir() {
  struct Dir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("xopt_fuzz_model." + std::to_string(getpid()));
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  static const std::string name = dir.path.string();
  return name;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xopt;
  onnx::ModelProto proto;
  // What load_model checks before building the model.
  if (!proto.ParseFromArray(data, static_cast<int>(size)) || !proto.has_graph() ||
      proto.ir_version() <= 0)
    return 0;
  auto loaded = ir::model_from_proto(std::move(proto), work_dir());
  if (!loaded.is_ok()) return 0;
  ir::Model& model = *loaded;
  if (!model.graph->topo_sort(nullptr)) return 0;
  if (!ir::verify(*model.graph).is_ok()) return 0;
  if (!ir::infer_shapes(*model.graph).is_ok()) return 0;
  passes::PassManagerOptions options;
  options.verify_each = true;
  passes::PassManager pm(std::move(options));
  if (!pm.add_pipeline("cleanup,fold,fuse,plan").is_ok()) __builtin_trap();
  passes::PassContext ctx;
  ctx.mark_shapes_valid();
  if (!pm.run(model, ctx).is_ok()) return 0;
  const std::string out = work_dir() + "/out.onnx";
  // What was saved loads again (a saved file that does not parse is a finding).
  if (ir::save_model(model, out).is_ok() && !ir::load_model(out).is_ok()) __builtin_trap();
  std::error_code ec;
  std::filesystem::remove(out, ec);
  std::filesystem::remove(out + ".data", ec);
  return 0;
}
