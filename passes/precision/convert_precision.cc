// fp32 node  ==>  the same node in fp16/bf16 (weights converted once), with one Cast per value and
// type where an fp32 node, a graph input or output meets it; Cast pairs removed when lossless.
//
// What stays fp32 is decided by precision_analysis.h: the schema (per input and output), integer
// chains, --keep-fp32, If/Loop/Scan boundaries (their bodies are converted inside, keeping their
// inputs and outputs fp32 so both scopes agree). Kernels store in the node's type and accumulate
// in fp32 (LayerNorm, Softmax, reductions, GEMM, convolution, attention), so converted nodes need
// no Casts around them. In `mixed` the installed chooser names each node's type.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/op_registry.h"
#include "ir/shape_inference.h"
#include "ir/subgraph.h"
#include "ir/tensor_proto.h"
#include "passes/fuse/opset_upgrade.h"
#include "passes/pass_registry.h"
#include "passes/precision/convert_tensor.h"
#include "passes/precision/precision_analysis.h"
#include "passes/precision/split_fused_conv.h"
#include "passes/rewrite.h"

namespace xopt::passes {
namespace {

using ir::DType;

bool is_fp32(const ir::Value* v) {
  return v != nullptr && v->is_tensor() && v->dtype() == DType::kFloat;
}
bool is_lowp(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16;
}
std::string_view short_name(DType t) {
  return t == DType::kFloat16 ? "fp16" : t == DType::kBFloat16 ? "bf16" : "fp32";
}

// Cast(Cast(x) <to = mid>) <to = to>: the middle is lossless when it holds every value of x's
// type (fp16 -> fp32, bf16 -> fp32), never fp32 -> fp16 -> fp32.
bool lossless_middle(DType from, DType mid) {
  if (from == mid) return true;
  return mid == DType::kFloat && (from == DType::kFloat16 || from == DType::kBFloat16);
}

struct Stats {
  int64_t converted = 0, kept_schema = 0, kept_integer = 0, kept_user = 0, kept_subgraph = 0,
          kept_choice = 0, weights = 0, clamped = 0, casts_added = 0, casts_removed = 0, masks = 0,
          mask_values = 0;
};

// A use of an fp32 value and the type it wants there. kUndefined: any float type (Cast's input,
// Shape): it reads whatever the value's home type is.
struct Want {
  ir::Node* node;
  int index;  // < 0: an implicit read from a subgraph (wants fp32: the body expects it)
  DType type;
};

class Converter {
 public:
  Converter(ir::Model& model, const PrecisionOptions& options, const PrecisionChoice* choice,
            Stats& stats, nlohmann::json* record)
      : model_(model), g_(*model.graph), o_(options), choice_(choice), s_(stats), record_(record) {}

  Result<bool> run() {
    bool changed = false;
    XOPT_ASSIGN_OR_RETURN(bool sub, convert_subgraphs());
    changed = sub;
    XOPT_ASSIGN_OR_RETURN(analysis_, analyze_precision(model_, o_));
    // Keys as the analysis made them: converting renames the results that keep their names fp32.
    for (const ir::Node* n : g_.nodes()) keys_[n] = precision_node_key(*n);
    decide_targets();
    const bool any_lowp =
        std::any_of(target_.begin(), target_.end(), [](auto& kv) { return is_lowp(kv.second); });
    if (any_lowp) {
      mask_type_ = DType::kBFloat16;
      for (auto& [n, t] : target_)
        if (t == DType::kFloat16) mask_type_ = DType::kFloat16;
      for (const std::string& name : analysis_.mask_constants) masks_.insert(name);
      std::vector<ir::Value*> values;
      for (ir::Value* v : g_.inputs()) values.push_back(v);
      for (ir::Value* v : g_.initializers())
        if (!v->is_graph_input()) values.push_back(v);
      for (ir::Node* n : g_.node_list())
        for (ir::Value* v : n->outputs()) values.push_back(v);
      for (ir::Value* v : values)
        if (is_fp32(v) && convert_value(v)) changed = true;
      for (ir::Node* n : g_.node_list())
        if (rewrite_attributes(n)) changed = true;
    }
    if (remove_cast_pairs()) changed = true;
    std::string cycle;
    if (changed && !g_.topo_sort(&cycle))
      return internal_error("convert-precision left a cycle: " + cycle);
    if (record_ != nullptr) record_decisions();
    return changed;
  }

 private:
  // If/Loop/Scan bodies, each as a model of its own whose inputs and outputs keep their types.
  Result<bool> convert_subgraphs() {
    bool changed = false;
    for (ir::Node* n : g_.node_list()) {
      for (const std::string& attr : ir::subgraph_attrs(*n)) {
        XOPT_ASSIGN_OR_RETURN(ir::Subgraph sg, ir::load_subgraph(*n, attr));
        (void)ir::infer_shapes(*sg.model.graph);  // sizes only sharpen the integer rule
        PrecisionOptions inner = o_;
        inner.keep_io_types = true;
        Converter c(sg.model, inner, choice_, s_, nullptr);
        auto r = c.run();
        if (!r.is_ok()) return r.status().with_context(n->describe() + ", " + attr + ": ");
        if (!*r) continue;
        onnx::AttributeProto a = *n->attr(attr);
        *a.mutable_g() = ir::subgraph_to_proto(sg);
        n->set_attr(a);
        ir::refresh_implicit_inputs(*n);
        changed = true;
      }
    }
    return changed;
  }

  void decide_targets() {
    const DType mode_type = o_.mode == PrecisionMode::kBf16 ? DType::kBFloat16 : DType::kFloat16;
    std::vector<ir::Node*> casts;
    for (ir::Node* n : g_.nodes()) {
      if (n->is("Constant")) continue;
      if (n->is("Cast")) {
        casts.push_back(n);
        continue;
      }
      const std::string key = precision_node_key(*n);
      const NodePrecision* np = analysis_.find(key);
      if (np == nullptr) continue;
      DType want = mode_type;
      if (o_.mode == PrecisionMode::kMixed) {
        auto it = choice_->find(key);
        want = it == choice_->end() ? DType::kFloat : it->second;
        if (!is_lowp(want)) {
          ++s_.kept_choice;
          target_[n] = DType::kFloat;
          continue;
        }
      }
      if (analysis_.allows(key, want)) {
        target_[n] = want;
        continue;
      }
      target_[n] = DType::kFloat;
      switch (np->rule) {
        case PrecisionRule::kSchema:
        case PrecisionRule::kFree:
          ++s_.kept_schema;
          break;
        case PrecisionRule::kInteger:
          ++s_.kept_integer;
          break;
        case PrecisionRule::kSubgraph:
          ++s_.kept_subgraph;
          break;
        case PrecisionRule::kUser:
          ++s_.kept_user;
          break;
      }
    }
    // A Cast to fp32 makes the low type directly only for readers that want it: Cast(int) to fp16
    // and back would round what Cast(int) to fp32 keeps.
    for (ir::Node* n : casts) {
      const ir::Value* out = n->output(0);
      if (!is_fp32(out)) continue;
      const NodePrecision* np = analysis_.find(precision_node_key(*n));
      if (np != nullptr && np->rule != PrecisionRule::kFree && np->rule != PrecisionRule::kSchema)
        continue;  // integer chains, the user's choice
      for (const ir::Use& u : out->uses()) {
        if (u.index < 0) continue;
        const DType w = input_want(u.node, static_cast<size_t>(u.index));
        if (is_lowp(w)) {
          target_[n] = w;
          break;
        }
      }
    }
  }

  DType target(const ir::Node* n) const {
    auto it = target_.find(n);
    return it == target_.end() ? DType::kFloat : it->second;
  }

  // The type output `j` of `n` takes.
  DType output_type(const ir::Node* n, size_t j) const {
    const DType t = target(n);
    if (!is_lowp(t) || !is_fp32(n->output(j))) return DType::kFloat;
    if (n->is("Cast")) return t;
    return schema_accepts(*n, true, j, t) ? t : DType::kFloat;
  }

  // The type input `i` of `n` wants (kUndefined: whatever the value is).
  DType input_want(const ir::Node* n, size_t i) const {
    // Readers of any type (their input shares its type with nothing else).
    if (n->is("Cast") || n->is("Shape") || n->is("Size")) return DType::kUndefined;
    const DType t = target(n);
    if (is_lowp(t) && schema_accepts(*n, false, i, t)) return t;
    return DType::kFloat;
  }

  bool is_constant_value(const ir::Value* v) const {
    return v->is_constant() || (v->producer() != nullptr && v->producer()->is("Constant"));
  }

  // Converts one fp32 value: its home type, the Casts (or converted copies) its readers need.
  bool convert_value(ir::Value* v) {
    std::vector<Want> wants;
    for (const ir::Use& u : v->uses()) {
      if (u.index < 0) {
        wants.push_back({u.node, u.index, DType::kFloat});
        continue;
      }
      wants.push_back({u.node, u.index, input_want(u.node, static_cast<size_t>(u.index))});
    }
    const bool visible = name_is_visible(v);
    const bool must_stay_fp32 = has_implicit_uses(v) || (v->is_graph_output() && o_.keep_io_types);
    DType first_lowp = DType::kUndefined;
    bool wants_fp32 = false;
    for (const Want& w : wants) {
      if (is_lowp(w.type) && first_lowp == DType::kUndefined) first_lowp = w.type;
      if (w.type == DType::kFloat) wants_fp32 = true;
    }

    DType home = DType::kFloat;
    const bool constant = is_constant_value(v);
    if (constant) {
      bool single = first_lowp != DType::kUndefined && !wants_fp32 && !visible;
      for (const Want& w : wants)
        if (is_lowp(w.type) && w.type != first_lowp) single = false;
      if (single) home = first_lowp;
    } else if (v->producer() != nullptr) {
      home = output_type(v->producer(), static_cast<size_t>(v->producer_index()));
    } else if (v->is_graph_input() && !o_.keep_io_types && !has_implicit_uses(v)) {
      home = first_lowp == DType::kUndefined ? DType::kFloat : first_lowp;
    }

    bool changed = false;
    if (constant) changed = convert_constant(v, home);
    if (is_lowp(home) && !constant) {
      v->set_dtype(home);
      changed = true;
    }
    if (home == DType::kFloat && !changed && first_lowp == DType::kUndefined) return false;

    std::unordered_map<DType, ir::Value*> copies;  // the value in each other type
    if (is_lowp(home) && must_stay_fp32) {
      // The name keeps its fp32 type: the lowp result is renamed and a Cast takes the name.
      const std::string name = v->name();
      g_.rename_value(v, g_.unique_name(name + "_" + std::string(short_name(home))));
      ir::Node* c = g_.add_node("Cast", {v}, {name});
      c->set_name(g_.unique_name(name + "_cast"));
      c->set_attr("to", static_cast<int64_t>(DType::kFloat));
      ir::Value* up = c->output(0);
      up->set_dtype(DType::kFloat);
      up->set_shape(v->shape());
      g_.replace_all_uses(v, up);
      c->set_input(0, v);
      for (const Want& w : wants)
        if (w.index >= 0 && w.type != DType::kFloat)
          w.node->set_input(static_cast<size_t>(w.index), v);
      copies[DType::kFloat] = up;
      ++s_.casts_added;
      changed = true;
    }
    for (const Want& w : wants) {
      if (w.index < 0 || w.type == DType::kUndefined || w.type == home) continue;
      ir::Value*& to = copies[w.type];
      if (to == nullptr) to = constant ? constant_copy(v, w.type) : add_cast(v, w.type);
      w.node->set_input(static_cast<size_t>(w.index), to);
      changed = true;
    }
    return changed;
  }

  ir::Value* add_cast(ir::Value* v, DType to) {
    ir::Node* c = g_.add_node("Cast", {v}, {v->name() + "_" + std::string(short_name(to))});
    c->set_name(c->output(0)->name());
    c->set_attr("to", static_cast<int64_t>(to));
    c->output(0)->set_dtype(to);
    c->output(0)->set_shape(v->shape());
    ++s_.casts_added;
    return c->output(0);
  }

  ConvertRules rules(bool mask) const {
    ConvertRules r;
    r.clamp = o_.auto_rules;
    r.mask = mask && o_.auto_rules;
    return r;
  }

  // The content of a constant (initializer or Constant output) in `to` (an initializer).
  ir::Value* constant_copy(ir::Value* v, DType to) {
    std::optional<ir::Tensor> t = constant_value(v);
    if (!t || t->dtype() != DType::kFloat) return add_cast(v, to);
    ConvertCounts counts;
    ir::Tensor c = convert_float_tensor(*t, to, rules(masks_.count(v->name()) != 0), &counts);
    account(counts);
    ++s_.weights;
    return g_.add_initializer(v->name() + "_" + std::string(short_name(to)), std::move(c));
  }

  void account(const ConvertCounts& c) {
    s_.clamped += c.clamped;
    s_.mask_values += c.mask_values;
    if (c.mask_values > 0) ++s_.masks;
  }

  // Rewrites a constant in its home type (or, a mask staying fp32, to the safe lowest in fp32).
  bool convert_constant(ir::Value* v, DType home) {
    const bool mask = masks_.count(v->name()) != 0 && o_.auto_rules;
    if (!is_lowp(home) && !mask) return false;
    const DType to = is_lowp(home) ? home : DType::kFloat;
    ConvertCounts counts;
    // A mask that stays fp32 meets mask_type_ later: its values go to that type's safe lowest.
    auto convert = [&](const ir::Tensor& src) {
      return is_lowp(home) ? convert_float_tensor(src, to, rules(mask), &counts)
                           : mask_in_fp32(src, &counts);
    };
    if (v->is_constant()) {
      const ir::Tensor& src = *v->initializer();
      ir::Tensor c = convert(src);
      release_mapped_pages(src);
      const std::string name = v->name();
      ir::Value* nv = g_.add_initializer(name + "_converted", std::move(c));
      g_.replace_all_uses(v, nv);
      g_.remove_initializer(v);
      g_.rename_value(nv, name);
    } else {
      ir::Node* p = v->producer();
      std::optional<ir::Tensor> src = constant_value(v);
      if (!src || src->dtype() != DType::kFloat) return false;
      ir::Tensor c = convert(*src);
      while (!p->attributes().empty()) p->remove_attr(p->attributes().front().name());
      onnx::AttributeProto a;
      a.set_name("value");
      a.set_type(onnx::AttributeProto::TENSOR);
      *a.mutable_t() = ir::tensor_to_proto(c);
      p->set_attr(a);
      v->set_dtype(to);
    }
    account(counts);
    if (is_lowp(home)) ++s_.weights;
    return true;
  }

  // An fp32 copy of `src` with the values at or below mask_type_'s safe lowest moved to it.
  ir::Tensor mask_in_fp32(const ir::Tensor& src, ConvertCounts* counts) const {
    ir::Tensor t(DType::kFloat, src.dims());
    const float lo = safe_lowest(mask_type_);
    float* p = t.mutable_data<float>();
    const float* s = src.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      p[i] = s[i] <= lo ? lo : s[i];
      if (s[i] <= lo) ++counts->mask_values;
    }
    return t;
  }

  // Attributes that name a converted node's output type: Cast's `to`, ConstantOfShape's `value`,
  // `dtype` (RandomNormal, EyeLike, ...).
  bool rewrite_attributes(ir::Node* n) {
    const DType t = target(n);
    if (!is_lowp(t)) return false;
    const ir::Value* out = n->output(0);
    if (out == nullptr || out->dtype() != t) return false;
    ++s_.converted;
    if (n->is("Cast")) {
      n->set_attr("to", static_cast<int64_t>(t));
    } else if (n->is("ConstantOfShape")) {
      ir::Tensor v = n->attr_tensor("value");
      if (v.empty()) v = ir::Tensor::of<float>({1}, {0.0f});
      ConvertCounts counts;
      ir::Tensor c = convert_float_tensor(v, t, rules(masks_.count(out->name()) != 0), &counts);
      account(counts);
      onnx::AttributeProto a;
      a.set_name("value");
      a.set_type(onnx::AttributeProto::TENSOR);
      *a.mutable_t() = ir::tensor_to_proto(c);
      n->set_attr(a);
    } else if (n->has_attr("dtype")) {
      n->set_attr("dtype", static_cast<int64_t>(t));
    }
    return true;
  }

  // Cast(Cast(x) <to = mid>) <to = to> with a lossless middle: read x directly (or x itself when
  // to is x's type); a Cast to its input's own type disappears.
  bool remove_cast_pairs() {
    bool changed = false;
    for (ir::Node* c2 : g_.node_list()) {
      if (!c2->is("Cast") || c2->num_outputs() != 1 || c2->input(0) == nullptr) continue;
      ir::Value* mid = c2->input(0);
      ir::Value* out = c2->output(0);
      const DType to = static_cast<DType>(c2->attr_int("to", 0));
      if (!ir::is_float(to)) continue;
      if (mid->dtype() == to && ir::is_float(to)) {
        if (bypass_node(g_, c2, out, mid)) {
          ++s_.casts_removed;
          changed = true;
        }
        continue;
      }
      ir::Node* c1 = mid->producer();
      if (c1 == nullptr || !c1->is("Cast") || c1->input(0) == nullptr) continue;
      ir::Value* x = c1->input(0);
      if (!ir::is_float(x->dtype()) || !lossless_middle(x->dtype(), mid->dtype())) continue;
      if (x->dtype() == to) {
        if (!bypass_node(g_, c2, out, x)) continue;
      } else {
        c2->set_input(0, x);
      }
      ++s_.casts_removed;
      changed = true;
      if (!mid->has_uses() && !mid->is_graph_output()) {
        g_.remove_node(c1);
        ++s_.casts_removed;
      }
    }
    return changed;
  }

  void record_decisions() {
    nlohmann::json nodes = nlohmann::json::object();
    for (const ir::Node* n : g_.nodes()) {
      auto k = keys_.find(n);
      if (k == keys_.end()) continue;  // a Cast this pass added
      const std::string& key = k->second;
      const NodePrecision* np = analysis_.find(key);
      if (np == nullptr || n->is("Constant")) continue;
      const DType t = target(n);
      nlohmann::json e;
      e["type"] = std::string(ir::dtype_name(t));
      e["rule"] = is_lowp(t) ? std::string("free") : std::string(precision_rule_name(np->rule));
      if (!is_lowp(t) && o_.mode == PrecisionMode::kMixed && (np->fp16 || np->bf16) &&
          np->rule == PrecisionRule::kFree)
        e["rule"] = "choice";
      if (!np->why.empty() && !is_lowp(t)) e["why"] = np->why;
      nodes[key] = std::move(e);
    }
    (*record_)["nodes"] = std::move(nodes);
  }

  ir::Model& model_;
  ir::Graph& g_;
  const PrecisionOptions& o_;
  const PrecisionChoice* choice_;
  Stats& s_;
  nlohmann::json* record_;
  PrecisionAnalysis analysis_;
  std::unordered_map<const ir::Node*, DType> target_;
  std::unordered_map<const ir::Node*, std::string> keys_;
  std::unordered_set<std::string> masks_;
  DType mask_type_ = DType::kFloat16;
};

std::string_view mode_name(PrecisionMode m) {
  switch (m) {
    case PrecisionMode::kFp16:
      return "fp16";
    case PrecisionMode::kBf16:
      return "bf16";
    case PrecisionMode::kMixed:
      return "mixed";
    default:
      return "fp32";
  }
}

// bf16: ONNX takes bfloat16 for Conv, the pools and several activations only from opset 22, and
// onnxruntime's FusedConv never. So that a CNN can be stored in bf16 at all, an older model is
// raised to 22 where every node keeps its meaning (fuse/opset_upgrade.h; why not goes in the
// record), and each FusedConv is split back into Conv and its activation (split_fused_conv.h).
Result<bool> prepare_for_bf16(ir::Model& model, PassContext& ctx, nlohmann::json& record) {
  ir::Graph& g = *model.graph;
  bool changed = false;
  const int64_t from = g.opset("");
  bool wanted = false;
  for (const ir::Node* n : g.nodes())
    wanted = wanted || (n->domain() == "com.microsoft" && n->op_type() == "FusedConv") ||
             ((n->domain().empty() || n->domain() == "ai.onnx") &&
              fuse::takes_bfloat16_from_22(n->op_type()));
  if (from < 22 && wanted) {
    const std::string why = fuse::opset_upgrade_blocker(model, 22);
    if (why.empty()) {
      fuse::upgrade_default_opset(model, 22);
      ctx.count("opset raised to 22", 1);
      changed = true;
      record["opset"] = {{"from", from}, {"to", 22}};
    } else {
      record["opset"] = {{"from", from}, {"kept", why}};
    }
  }
  if (g.opset("") >= 22) {
    const int64_t split = split_fused_convs(g);
    if (split != 0) {
      ctx.count("fused convs split for bf16", split);
      changed = true;
      ctx.invalidate_shapes();
      XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    }
  }
  return changed;
}

class ConvertPrecision final : public Pass {
 public:
  static constexpr std::string_view kName = "convert-precision";
  std::string_view name() const override { return kName; }

  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    const PrecisionOptions& o = ctx.options().precision;
    if (o.mode == PrecisionMode::kFp32) return false;
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    PrecisionChoice choice;
    if (o.mode == PrecisionMode::kMixed) {
      if (!o.choose)
        return invalid_argument(
            "--precision mixed needs a chooser (calibration run) and none is installed: use "
            "xopt's --precision mixed, or set PrecisionOptions::choose");
      XOPT_ASSIGN_OR_RETURN(choice, o.choose(model, o));
    }
    Stats s;
    nlohmann::json record;
    record["version"] = 1;
    record["mode"] = std::string(mode_name(o.mode));
    record["keep_io_types"] = o.keep_io_types;
    record["auto_rules"] = o.auto_rules;
    bool prepared = false;
    if (o.mode == PrecisionMode::kBf16) {
      XOPT_ASSIGN_OR_RETURN(prepared, prepare_for_bf16(model, ctx, record));
    }
    Converter c(model, o, &choice, s, &record);
    XOPT_ASSIGN_OR_RETURN(bool changed, c.run());
    changed = changed || prepared;
    auto put = [&](const char* name, int64_t n) {
      if (n != 0) ctx.count(name, n);
    };
    put("nodes converted", s.converted);
    put("kept fp32 (schema)", s.kept_schema);
    put("kept fp32 (integer)", s.kept_integer);
    put("kept fp32 (user)", s.kept_user);
    put("kept fp32 (subgraph)", s.kept_subgraph);
    put("kept fp32 (choice)", s.kept_choice);
    put("weights converted", s.weights);
    put("values clamped", s.clamped);
    put("casts added", s.casts_added);
    put("casts removed", s.casts_removed);
    put("masks rewritten", s.masks);
    if (changed) model.set_metadata("xopt.precision", record.dump());
    return changed;
  }
};

}  // namespace

XOPT_REGISTER_PASS(ConvertPrecision,
                   "converts nodes to fp16/bf16 (--precision), keeping integer chains, "
                   "schema-less ops and the user's --keep-fp32 in fp32, with one Cast per boundary",
                   {{"precision", 50}});

}  // namespace xopt::passes
