// `xopt validate A.onnx [B.onnx]`: same inputs, every output compared (executor/cpu/validate.h).
#include "tools/xopt/validate.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "common/atomic_file.h"
#include "executor/cpu/model_inputs.h"
#include "executor/cpu/validate.h"
#include "ir/onnx_io.h"
#include "passes/pass.h"
#include "precision/accuracy.h"
#include "tools/xopt/command.h"

namespace xopt::tool {

namespace fs = std::filesystem;

namespace {

// One set of inputs, with the expected outputs when they were stored with them.
struct Feed {
  std::string name;
  std::map<std::string, ir::Tensor> inputs;
  std::vector<ir::Tensor> expected;
};

// Dims B fixes (e.g. an optimized model whose batch was bound) where A's input has the same rank
// and leaves them symbolic: random inputs take B's, so they fit both.
void shapes_from_b(const ir::Model& a, const ir::Model& b, ir::ShapeBindings* shapes) {
  for (const ir::Value* vb : b.graph->runtime_inputs()) {
    const ir::Value* va = a.graph->find_value(vb->name());
    if (va == nullptr || shapes->input_shapes.count(vb->name()) != 0) continue;
    const ir::Shape& sa = va->shape();
    const ir::Shape& sb = vb->shape();
    if (!sa.has_rank() || !sb.has_rank() || sa.rank() != sb.rank() || !sb.is_static() ||
        sa.is_static())
      continue;
    std::vector<int64_t> dims;
    bool fits = true;
    for (size_t i = 0; i < sb.rank(); ++i) {
      fits = fits && (!sa[i].is_known() || sa[i].value == sb[i].value);
      dims.push_back(sb[i].value);
    }
    if (fits) shapes->input_shapes[vb->name()] = dims;
  }
}

Result<std::vector<Feed>> make_feeds(const ir::Model& a, const ir::Model* b, const ValidateFlags& f,
                                     const ir::ShapeBindings& shapes,
                                     std::vector<std::string>* notes) {
  // --input files first: they apply to every data set.
  std::map<std::string, ir::Tensor> given;
  for (const std::string& text : f.inputs) {
    auto kv = exec::split_assignment(text);
    if (!kv.is_ok()) return kv.status().with_context("--input: ");
    auto t = exec::read_tensor_proto_file(kv->second);
    if (!t.is_ok()) return t.status().with_context("--input " + kv->first + ": ");
    const ir::Value* v = a.graph->find_value(kv->first);
    if (v == nullptr || !v->is_graph_input()) {
      std::string names;
      for (const ir::Value* in : a.graph->runtime_inputs())
        names += (names.empty() ? "" : ", ") + in->name();
      return invalid_argument("--input: '" + kv->first +
                              "' is not an input of the graph (inputs: " + names + ")");
    }
    if (!given.emplace(kv->first, std::move(*t)).second)
      return invalid_argument("--input: '" + kv->first + "' is given twice");
  }
  std::vector<std::string> dirs;
  if (!f.data.empty()) {
    std::error_code ec;
    if (!fs::is_directory(f.data, ec))
      return invalid_argument("--data: " + f.data + ": no such folder");
    dirs = exec::find_data_sets(f.data);
    if (dirs.empty())
      return invalid_argument("--data: " + f.data +
                              " holds neither input_0.pb nor test_data_set_* folders");
  } else if (given.empty() && !f.random && !a.path.empty()) {
    dirs = exec::find_data_sets(fs::path(a.path).parent_path().string());
  }
  std::vector<Feed> feeds;
  for (const std::string& d : dirs) {
    auto ds = exec::read_data_set(*a.graph, d);
    if (!ds.is_ok()) return ds.status();
    Feed feed{ds->name, std::move(ds->inputs), std::move(ds->outputs)};
    for (const auto& [name, t] : given) feed.inputs[name] = t;
    notes->push_back("inputs: " + d + (given.empty() ? "" : " (with --input replacements)"));
    feeds.push_back(std::move(feed));
  }
  if (!feeds.empty()) return feeds;

  exec::RandomInputOptions ro;
  ro.seed = f.seed;
  ro.shapes = shapes;
  if (b != nullptr) shapes_from_b(a, *b, &ro.shapes);
  for (const auto& [name, t] : given) ro.skip.insert(name);
  for (const std::string& text : f.ranges) {
    auto kv = exec::split_assignment(text);
    if (!kv.is_ok()) return kv.status().with_context("--input-range: ");
    auto r = exec::parse_range(kv->second);
    if (!r.is_ok()) return r.status().with_context("--input-range " + kv->first + ": ");
    ro.ranges[kv->first] = *r;
  }
  std::vector<std::string> lines;
  auto random = exec::random_inputs(*a.graph, ro, &lines);
  if (!random.is_ok()) return random.status();
  Feed feed;
  feed.name = ro.skip.empty()   ? "random inputs (seed " + std::to_string(f.seed) + ")"
              : random->empty() ? "given inputs"
                                : "given and random inputs (seed " + std::to_string(f.seed) + ")";
  feed.inputs = std::move(*random);
  for (const auto& [name, t] : given) {
    feed.inputs[name] = t;
    notes->push_back("input " + name + ": from file");
  }
  for (const std::string& l : lines) notes->push_back("input " + l);
  feeds.push_back(std::move(feed));
  return feeds;
}

thread_local ValidationCapture* g_capture = nullptr;
// The tables of the validate_models call in progress, for --json.
thread_local std::vector<precision::AccuracyTable>* g_tables = nullptr;

// Prints one comparison table on stdout, then its accuracy figures (and hands it to the capture,
// if any).
void print_table(const std::vector<exec::TensorDiff>& diffs, const exec::CompareTolerance& tol,
                 const std::string& title) {
  std::fputs(exec::format_diff_table(diffs, tol, title).c_str(), stdout);
  std::fputs(exec::format_accuracy_table(diffs).c_str(), stdout);
  if (g_capture != nullptr) g_capture->tables.push_back({title, diffs});
  if (g_tables != nullptr) g_tables->push_back({title, diffs});
}

}  // namespace

ValidationCapture* set_validation_capture(ValidationCapture* capture) {
  ValidationCapture* previous = g_capture;
  g_capture = capture;
  return previous;
}

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

namespace {

// One data set's comparisons, each printed as a table and counted in `outputs` and `bad`: on the
// GPU, B (else A) against A on the CPU, then against the stored outputs when there are some; on
// the CPU, B against A, else A against the stored outputs.
Status validate_feed(const Feed& feed, const ir::Model& a, const ir::Model* b,
                     const ValidateFlags& f, const exec::ValidateOptions& vo,
                     const std::string& label_a, const std::string& label_b, int& outputs,
                     int& bad) {
  auto show = [&](const std::vector<exec::TensorDiff>& diffs, const std::string& title) {
    print_table(diffs, vo.tolerance, title);
    for (const auto& d : diffs) {
      ++outputs;
      bad += !d.ok;
    }
  };
  auto ra = exec::run_for_validation(a, feed.inputs, vo);
  if (!ra.is_ok()) return ra.status();
  if (f.device.cuda()) {
    const ir::Model& m = b != nullptr ? *b : a;
    const std::string& label = b != nullptr ? label_b : label_a;
    auto rg = run_on_cuda(m, feed.inputs, f.device);
    if (!rg.is_ok()) return rg.status();
    const std::string tol = f.device.tf32 ? " (TF32 on: tolerance applies to TF32 math)" : "";
    show(exec::compare_outputs(*rg, *ra, vo.tolerance),
         feed.name + ": " + label + " [" + rg->mode + "] against " + label_a + " on the CPU [" +
             ra->mode + "]" + tol);
    if (!feed.expected.empty())
      show(exec::compare_outputs(*rg, exec::expected_outputs(*m.graph, feed.expected),
                                 vo.tolerance),
           feed.name + ": " + label + " [" + rg->mode + "] against the stored outputs" + tol);
  } else if (b != nullptr) {
    auto rb = exec::run_for_validation(*b, feed.inputs, vo);
    if (!rb.is_ok()) return rb.status();
    show(exec::compare_outputs(*rb, *ra, vo.tolerance),
         feed.name + ": " + label_b + " [" + rb->mode + "] against " + label_a + " [" + ra->mode +
             "]");
  } else {
    show(exec::compare_outputs(*ra, exec::expected_outputs(*a.graph, feed.expected),
                               vo.tolerance),
         feed.name + ": " + label_a + " [" + ra->mode + "] against the stored outputs");
  }
  return Status::ok();
}

}  // namespace

int validate_models(const ir::Model& a, const ir::Model* b, const ValidateFlags& f,
                    const ir::ShapeBindings& shapes, const std::string& label_a,
                    const std::string& label_b) {
  if (!(f.rtol >= 0) || !(f.atol >= 0))
    return report_error(kExitUsage, "--rtol and --atol must be non-negative");
  std::vector<std::string> notes;
  auto feeds = make_feeds(a, b, f, shapes, &notes);
  if (!feeds.is_ok()) return report(feeds.status());
  if (Status st = check_device_flags(f.device); !st.is_ok()) return report(st);
  if (b == nullptr && !f.device.cuda())
    for (const Feed& feed : *feeds)
      if (feed.expected.empty())
        return report_error(kExitUsage, feed.name +
                                            ": no expected outputs (output_*.pb) to compare " +
                                            label_a + " with; give a second model or --data");
  for (const std::string& n : notes) std::printf("%s\n", n.c_str());

  exec::ValidateOptions vo;
  vo.tolerance.rtol = f.rtol;
  vo.tolerance.atol = f.atol;
  vo.use_plan = !f.no_plan;
  int outputs = 0, bad = 0;
  std::vector<precision::AccuracyTable> tables;
  struct TablesScope {
    explicit TablesScope(std::vector<precision::AccuracyTable>* t) { g_tables = t; }
    ~TablesScope() { g_tables = nullptr; }
  } tables_scope(f.json.empty() ? nullptr : &tables);
  for (const Feed& feed : *feeds)
    if (Status st = validate_feed(feed, a, b, f, vo, label_a, label_b, outputs, bad); !st.is_ok())
      return report(st);
  if (!f.json.empty())
    if (Status st = write_file_atomically(
            f.json, precision::accuracy_json(tables, vo.tolerance).dump(2) + "\n");
        !st.is_ok())
      return report(st);
  if (bad > 0) {
    std::fflush(stdout);
    return report_error(kExitUsage, "validation failed: " + std::to_string(bad) + " of " +
                                        std::to_string(outputs) + " outputs outside tolerance");
  }
  std::printf("validation passed: %d outputs in %zu data set%s within tolerance\n", outputs,
              feeds->size(), feeds->size() == 1 ? "" : "s");
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
  ir::ShapeBindings shapes;
  for (const auto& s : c.input_shapes) {
    auto parsed = passes::parse_input_shape(s);
    if (!parsed.is_ok())
      return report_error(kExitUsage, "--input-shape: " + parsed.status().message());
    shapes.input_shapes[parsed->first] = parsed->second;
  }
  if (c.batch < 0) return report_error(kExitUsage, "--batch must be positive");
  if (c.batch > 0) shapes.batch = c.batch;
  std::vector<ir::Model> models;
  for (const std::string& path : c.models) {
    auto m = ir::load_model(path);
    if (!m.is_ok()) return report(m.status(), path);
    models.push_back(std::move(*m));
  }
  return validate_models(models[0], models.size() > 1 ? &models[1] : nullptr, c.flags, shapes,
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
