// Loads a model, runs fold,fuse,plan on it and runs it on its stored inputs inside the plan, all
// through the installed libxopt.so; prints the node counts and the arena.
#include <cstdio>
#include <map>

#include "executor/cpu/model_inputs.h"
#include "executor/cpu/validate.h"
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "passes/pass_manager.h"
#include "planner/annotate.h"

int main(int argc, char** argv) {
  using namespace xopt;
  if (argc != 3) {
    std::fprintf(stderr, "usage: app MODEL TEST_DATA_SET\n");
    return 1;
  }
  auto model = ir::load_model(argv[1]);
  if (!model.is_ok()) {
    std::fprintf(stderr, "app: %s\n", model.status().message().c_str());
    return 2;
  }
  const size_t before = model->graph->num_nodes();
  auto data = exec::read_data_set(*model->graph, argv[2]);
  if (!data.is_ok()) {
    std::fprintf(stderr, "app: %s\n", data.status().message().c_str());
    return 2;
  }
  ir::ShapeBindings shapes;  // plan for the data set's shapes
  for (const auto& [name, t] : data->inputs) shapes.input_shapes[name] = t.dims();
  Status st = ir::bind_input_shapes(*model->graph, shapes);
  if (st.is_ok()) st = ir::infer_shapes(*model->graph);
  passes::PassManager pm;
  if (st.is_ok()) st = pm.add_pipeline("fold,fuse,plan", {});
  passes::PassContext ctx;
  ctx.mark_shapes_valid();
  if (st.is_ok()) st = pm.run(*model, ctx);
  if (!st.is_ok()) {
    std::fprintf(stderr, "app: %s\n", st.message().c_str());
    return 3;
  }
  auto plan = planner::read_plan(*model);
  if (!plan.is_ok()) return 4;
  auto out = exec::run_for_validation(*model, data->inputs);
  if (!out.is_ok()) {
    std::fprintf(stderr, "app: %s\n", out.status().message().c_str());
    return 5;
  }
  auto diffs = exec::compare_outputs(*out, exec::expected_outputs(*model->graph, data->outputs),
                                     exec::CompareTolerance{});
  bool ok = true;
  for (const auto& d : diffs) ok = ok && d.ok;
  std::printf("nodes %zu -> %zu, arena %zu bytes, %s, outputs %s\n", before,
              model->graph->num_nodes(), plan->arena_bytes, out->mode.c_str(),
              ok ? "match" : "differ");
  return ok ? 0 : 6;
}
