// Validation (pipeline/validate.h): the inputs of each data set, the runs, every output compared.
#include "pipeline/validate.h"

#include <filesystem>
#include <map>

#include "common/atomic_file.h"
#include "executor/cpu/accuracy.h"
#include "executor/cpu/compare.h"
#include "executor/cpu/model_inputs.h"
#include "passes/pass.h"

namespace xopt::pipeline {

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

// The --input files, by input name (they apply to every data set).
Result<std::map<std::string, ir::Tensor>> given_inputs(const ir::Model& a,
                                                       const ValidateRequest& r) {
  std::map<std::string, ir::Tensor> given;
  for (const std::string& text : r.inputs) {
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
  return given;
}

// The stored data sets to run: --data, else those beside A (unless inputs are given or random).
Result<std::vector<std::string>> data_set_dirs(const ir::Model& a, const ValidateRequest& r,
                                               bool inputs_given) {
  if (!r.data.empty()) {
    std::error_code ec;
    if (!fs::is_directory(r.data, ec))
      return invalid_argument("--data: " + r.data + ": no such folder");
    std::vector<std::string> dirs = exec::find_data_sets(r.data);
    if (dirs.empty())
      return invalid_argument("--data: " + r.data +
                              " holds neither input_0.pb nor test_data_set_* folders");
    return dirs;
  }
  if (inputs_given || r.random || a.path.empty()) return std::vector<std::string>{};
  return exec::find_data_sets(fs::path(a.path).parent_path().string());
}

// One feed of seeded random inputs (with the given ones in place of theirs).
Result<Feed> random_feed(const ir::Model& a, const ir::Model* b, const ValidateRequest& r,
                         const ir::ShapeBindings& shapes,
                         const std::map<std::string, ir::Tensor>& given,
                         std::vector<std::string>* notes) {
  exec::RandomInputOptions ro;
  ro.seed = r.seed;
  ro.shapes = shapes;
  if (b != nullptr) shapes_from_b(a, *b, &ro.shapes);
  for (const auto& [name, t] : given) ro.skip.insert(name);
  for (const std::string& text : r.ranges) {
    auto kv = exec::split_assignment(text);
    if (!kv.is_ok()) return kv.status().with_context("--input-range: ");
    auto range = exec::parse_range(kv->second);
    if (!range.is_ok()) return range.status().with_context("--input-range " + kv->first + ": ");
    ro.ranges[kv->first] = *range;
  }
  std::vector<std::string> lines;
  auto random = exec::random_inputs(*a.graph, ro, &lines);
  if (!random.is_ok()) return random.status();
  Feed feed;
  const std::string seed = "(seed " + std::to_string(r.seed) + ")";
  feed.name = ro.skip.empty()   ? "random inputs " + seed
              : random->empty() ? "given inputs"
                                : "given and random inputs " + seed;
  feed.inputs = std::move(*random);
  for (const auto& [name, t] : given) {
    feed.inputs[name] = t;
    notes->push_back("input " + name + ": from file");
  }
  for (const std::string& l : lines) notes->push_back("input " + l);
  return feed;
}

Result<std::vector<Feed>> make_feeds(const ir::Model& a, const ir::Model* b,
                                     const ValidateRequest& r, const ir::ShapeBindings& shapes,
                                     std::vector<std::string>* notes) {
  XOPT_ASSIGN_OR_RETURN(auto given, given_inputs(a, r));
  XOPT_ASSIGN_OR_RETURN(auto dirs, data_set_dirs(a, r, !given.empty()));
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
  XOPT_ASSIGN_OR_RETURN(Feed feed, random_feed(a, b, r, shapes, given, notes));
  feeds.push_back(std::move(feed));
  return feeds;
}

// One data set's comparisons, each added to `out` as a table.
Status validate_feed(const Feed& feed, const ir::Model& a, const ir::Model* b,
                     const ValidateRequest& r, const exec::ValidateOptions& vo,
                     const std::string& label_a, const std::string& label_b,
                     ValidationOutcome* out) {
  auto add = [&](std::vector<exec::TensorDiff> diffs, const std::string& title) {
    for (const auto& d : diffs) {
      ++out->outputs;
      out->bad += !d.ok;
    }
    out->tables.push_back({title, std::move(diffs)});
  };
  XOPT_ASSIGN_OR_RETURN(exec::ModelOutputs ra, exec::run_for_validation(a, feed.inputs, vo));
  if (r.device.cuda()) {
    const ir::Model& m = b != nullptr ? *b : a;
    const std::string& label = b != nullptr ? label_b : label_a;
    XOPT_ASSIGN_OR_RETURN(exec::ModelOutputs rg, run_on_cuda(m, feed.inputs, r.device));
    const std::string tol = r.device.tf32 ? " (TF32 on: tolerance applies to TF32 math)" : "";
    add(exec::compare_outputs(rg, ra, vo.tolerance), feed.name + ": " + label + " [" + rg.mode +
                                                         "] against " + label_a + " on the CPU [" +
                                                         ra.mode + "]" + tol);
    if (!feed.expected.empty())
      add(exec::compare_outputs(rg, exec::expected_outputs(*m.graph, feed.expected), vo.tolerance),
          feed.name + ": " + label + " [" + rg.mode + "] against the stored outputs" + tol);
  } else if (b != nullptr) {
    XOPT_ASSIGN_OR_RETURN(exec::ModelOutputs rb, exec::run_for_validation(*b, feed.inputs, vo));
    add(exec::compare_outputs(rb, ra, vo.tolerance), feed.name + ": " + label_b + " [" + rb.mode +
                                                         "] against " + label_a + " [" + ra.mode +
                                                         "]");
  } else {
    add(exec::compare_outputs(ra, exec::expected_outputs(*a.graph, feed.expected), vo.tolerance),
        feed.name + ": " + label_a + " [" + ra.mode + "] against the stored outputs");
  }
  return Status::ok();
}

}  // namespace

Status validate_models(const ir::Model& a, const ir::Model* b, const ValidateRequest& request,
                       const ir::ShapeBindings& shapes, const std::string& label_a,
                       const std::string& label_b, ValidationOutcome* out) {
  if (!(request.rtol >= 0) || !(request.atol >= 0))
    return invalid_argument("--rtol and --atol must be non-negative");
  std::vector<std::string> notes;
  XOPT_ASSIGN_OR_RETURN(std::vector<Feed> feeds, make_feeds(a, b, request, shapes, &notes));
  XOPT_RETURN_IF_ERROR(check_device_flags(request.device));
  if (b == nullptr && !request.device.cuda())
    for (const Feed& feed : feeds)
      if (feed.expected.empty())
        return invalid_argument(feed.name + ": no expected outputs (output_*.pb) to compare " +
                                label_a + " with; give a second model or --data");
  out->notes = std::move(notes);
  out->data_sets = feeds.size();
  exec::ValidateOptions vo;
  vo.tolerance.rtol = request.rtol;
  vo.tolerance.atol = request.atol;
  vo.use_plan = !request.no_plan;
  out->tolerance = vo.tolerance;
  for (const Feed& feed : feeds)
    XOPT_RETURN_IF_ERROR(validate_feed(feed, a, b, request, vo, label_a, label_b, out));
  if (!request.json.empty())
    XOPT_RETURN_IF_ERROR(write_file_atomically(
        request.json, precision::accuracy_json(out->tables, vo.tolerance).dump(2) + "\n"));
  return Status::ok();
}

Result<ir::ShapeBindings> validation_shapes(const std::vector<std::string>& input_shapes,
                                            int64_t batch) {
  ir::ShapeBindings shapes;
  for (const std::string& s : input_shapes) {
    auto parsed = passes::parse_input_shape(s);
    if (!parsed.is_ok()) return invalid_argument("--input-shape: " + parsed.status().message());
    shapes.input_shapes[parsed->first] = parsed->second;
  }
  if (batch < 0) return invalid_argument("--batch must be positive");
  if (batch > 0) shapes.batch = batch;
  return shapes;
}

std::string validation_text(const ValidationOutcome& outcome) {
  std::string text;
  for (const std::string& n : outcome.notes) text += n + "\n";
  for (const ValidationTable& t : outcome.tables)
    text += exec::format_diff_table(t.diffs, outcome.tolerance, t.title) +
            exec::format_accuracy_table(t.diffs);
  return text;
}

std::string validation_verdict(const ValidationOutcome& outcome) {
  if (!outcome.passed())
    return "validation failed: " + std::to_string(outcome.bad) + " of " +
           std::to_string(outcome.outputs) + " outputs outside tolerance";
  return "validation passed: " + std::to_string(outcome.outputs) + " outputs in " +
         std::to_string(outcome.data_sets) + " data set" + (outcome.data_sets == 1 ? "" : "s") +
         " within tolerance";
}

}  // namespace xopt::pipeline
