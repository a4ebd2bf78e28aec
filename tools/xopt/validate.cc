// `xopt validate A.onnx [B.onnx]`: same inputs, every output compared (pipeline/validate.h).
#include "tools/xopt/validate.h"

#include <cstdio>
#include <memory>

#include "ir/onnx_io.h"
#include "tools/xopt/command.h"

namespace xopt::tool {

void add_validate_flags(CLI::App& app, ValidateFlags& f) {
  app.add_option("--data", f.data,
                 "Inputs (and expected outputs) from this test_data_set folder, or from every "
                 "test_data_set_* folder in it (default: those beside the first model)");
  app.add_option("--input", f.inputs,
                 "Feed this input from a TensorProto file: NAME=FILE.pb "
                 "(repeatable; other inputs random)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--input-range", f.ranges,
                 "Random values of this input in LO:HI (integers: both ends included), e.g. "
                 "input_ids=0:8191 (repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--seed", f.seed, "Seed of the random inputs (default 0)");
  app.add_option("--rtol", f.rtol,
                 "Relative tolerance: pass when max|a-b| <= atol + rtol*max|ref| "
                 "(default 1e-4)");
  app.add_option("--atol", f.atol, "Absolute tolerance (default 1e-5)");
  app.add_flag("--random-inputs", f.random,
               "Use seeded random inputs even when test_data_set folders are beside the model");
  app.add_flag("--no-plan", f.no_plan,
               "Run a model that carries a memory plan in simple mode instead of inside its plan");
  app.add_option("--json", f.json,
                 "Also write the accuracy report (per output: max/mean/median/p99 abs, max rel, "
                 "cosine, NaN/inf, top-1/top-5 agreement, verdict) to this JSON file");
  add_device_flags(app, f.device);
}

int validate_models(const ir::Model& a, const ir::Model* b, const ValidateFlags& f,
                    const ir::ShapeBindings& shapes, const std::string& label_a,
                    const std::string& label_b) {
  pipeline::ValidationOutcome out;
  const Status st = pipeline::validate_models(a, b, f, shapes, label_a, label_b, &out);
  std::fputs(pipeline::validation_text(out).c_str(), stdout);
  if (!st.is_ok()) {
    std::fflush(stdout);
    return report(st);
  }
  if (!out.passed()) {
    std::fflush(stdout);
    return report_error(kExitUsage, pipeline::validation_verdict(out));
  }
  std::printf("%s\n", pipeline::validation_verdict(out).c_str());
  return kExitOk;
}

namespace {

struct ValidateCommand {
  std::vector<std::string> models;
  ValidateFlags flags;
  std::vector<std::string> input_shapes;
  int64_t batch = 0;
};

int run_validate(const ValidateCommand& c) {
  auto shapes = pipeline::validation_shapes(c.input_shapes, c.batch);
  if (!shapes.is_ok()) return report(shapes.status());
  std::vector<ir::Model> models;
  for (const std::string& path : c.models) {
    auto m = ir::load_model(path);
    if (!m.is_ok()) return report(m.status(), path);
    models.push_back(std::move(*m));
  }
  return validate_models(models[0], models.size() > 1 ? &models[1] : nullptr, c.flags, *shapes,
                         c.models[0], c.models.size() > 1 ? c.models[1] : "");
}

std::function<int()> setup_validate(CLI::App& sub) {
  auto c = std::make_shared<ValidateCommand>();
  sub.add_option("models", c->models,
                 "A.onnx [B.onnx]: with one model, its outputs are checked against the stored "
                 "expected outputs; with two, B's against A's")
      ->required()
      ->expected(1, 2);
  add_validate_flags(sub, c->flags);
  sub.add_option("--input-shape", c->input_shapes,
                 "Shape of a random input with symbolic dims, e.g. x=1x3x224x224 (repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  sub.add_option("--batch", c->batch, "Leading symbolic dim of random inputs (other ones are 1)");
  sub.footer(
      "Exit status: 0 when every output is within tolerance; 1 on a mismatch, bad flags or inputs "
      "that do not fit the model (missing, wrong shape or dtype); 2 when a model cannot be read or "
      "run (an op without a CPU kernel, a kernel error).");
  return [c] { return run_validate(*c); };
}

}  // namespace

XOPT_SUBCOMMAND("validate",
                "Run one model against its stored outputs, or two models on the same inputs, and "
                "compare every output",
                setup_validate);

}  // namespace xopt::tool
