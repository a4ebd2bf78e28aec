#include "planner/stage_split.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "planner/lifetimes.h"

namespace xopt::planner {
namespace {

// Every value `n` reads: its inputs and what its subgraphs read from outside them.
std::vector<const ir::Value*> reads(const ir::Node& n) {
  std::vector<const ir::Value*> out;
  for (const ir::Value* v : n.inputs())
    if (v != nullptr) out.push_back(v);
  for (const ir::Value* v : n.implicit_inputs())
    if (v != nullptr) out.push_back(v);
  return out;
}

size_t bytes_of(const ir::Value& v) {
  auto b = value_bytes(v);
  return b.is_ok() ? *b : 0;
}

// The greedy cut under `limit`: how many runs it takes (more than `parts` when limit is too low).
size_t runs_under(const std::vector<double>& values, double limit, std::vector<size_t>* begins) {
  size_t runs = 1;
  double sum = 0;
  if (begins != nullptr) begins->assign(1, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    if (sum + values[i] > limit && i > 0 && sum > 0) {
      ++runs;
      sum = 0;
      if (begins != nullptr) begins->push_back(i);
    }
    sum += values[i];
  }
  return runs;
}

}  // namespace

std::vector<size_t> min_max_partition(const std::vector<double>& values, size_t parts) {
  const size_t n = values.size();
  parts = std::clamp<size_t>(parts, 1, std::max<size_t>(n, 1));
  // The smallest limit whose greedy cut takes at most `parts` runs is the optimum: the greedy cut
  // under a limit takes the fewest runs of any cut under it. Bisection on the limit between the
  // largest value and the total, to the last bit of a double.
  double lo = 0, hi = 0;
  for (double v : values) {
    lo = std::max(lo, v);
    hi += v;
  }
  for (int i = 0; i < 200 && lo < hi; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (runs_under(values, mid, nullptr) <= parts) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  std::vector<size_t> begins;
  runs_under(values, hi, &begins);
  // Fewer runs than parts: split runs of several elements (never raises a run's sum).
  while (begins.size() < parts) {
    std::vector<size_t> ends(begins.begin() + 1, begins.end());
    ends.push_back(n);
    size_t widest = 0;
    for (size_t r = 1; r < begins.size(); ++r)
      if (ends[r] - begins[r] > ends[widest] - begins[widest]) widest = r;
    begins.insert(begins.begin() + static_cast<std::ptrdiff_t>(widest) + 1, ends[widest] - 1);
  }
  return begins;
}

Result<StageSplit> split_into_stages(const ir::Graph& graph,
                                     const std::vector<const ir::Node*>& order, size_t devices,
                                     const DeviceModel& device) {
  if (devices == 0) return invalid_argument("a split needs at least one device");
  if (order.size() < devices)
    return invalid_argument("cannot split " + std::to_string(order.size()) + " nodes over " +
                            std::to_string(devices) + " devices (one node at least per device)");
  if (order.size() != graph.num_nodes())
    return invalid_argument("the order names " + std::to_string(order.size()) +
                            " nodes but the graph has " + std::to_string(graph.num_nodes()) +
                            ": every node must be in exactly one stage");
  const std::vector<double> ms = estimate_node_ms(order, device);
  std::vector<double> params(order.size(), 0.0);
  std::unordered_set<const ir::Value*> seen;
  for (size_t i = 0; i < order.size(); ++i)
    for (const ir::Value* v : reads(*order[i]))
      if (v->is_constant() && seen.insert(v).second) params[i] += static_cast<double>(bytes_of(*v));
  const double total_ms = std::accumulate(ms.begin(), ms.end(), 0.0);
  const double total_params = std::accumulate(params.begin(), params.end(), 0.0);
  std::vector<double> load(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    load[i] = (total_params > 0 ? params[i] / total_params : 0.0) +
              (total_ms > 0 ? ms[i] / total_ms : 0.0);
  const std::vector<size_t> begins = min_max_partition(load, devices);

  StageSplit split;
  std::unordered_map<const ir::Node*, size_t> stage_of;
  for (size_t s = 0; s < begins.size(); ++s) {
    Stage st;
    st.begin = begins[s];
    st.end = s + 1 < begins.size() ? begins[s + 1] : order.size();
    std::unordered_set<const ir::Value*> weights;
    for (size_t i = st.begin; i < st.end; ++i) {
      stage_of[order[i]] = s;
      st.load += load[i];
      st.estimated_ms += ms[i];
      for (const ir::Value* v : reads(*order[i]))
        if (v->is_constant() && weights.insert(v).second) st.parameter_bytes += bytes_of(*v);
    }
    split.stages.push_back(std::move(st));
  }
  // Transfers: each (value, receiving stage) once, in order of first read.
  std::set<std::pair<const ir::Value*, size_t>> sent;
  for (size_t s = 0; s < split.stages.size(); ++s) {
    for (size_t i = split.stages[s].begin; i < split.stages[s].end; ++i) {
      for (const ir::Value* v : reads(*order[i])) {
        const ir::Node* p = v->producer();
        if (p == nullptr) continue;
        auto it = stage_of.find(p);
        if (it == stage_of.end())
          return invalid_argument("value '" + v->name() +
                                  "' is produced by a node the order lacks");
        if (it->second > s)
          return invalid_argument("the order is not topological: '" + v->name() +
                                  "' is read before it is produced");
        if (it->second == s || !sent.insert({v, s}).second) continue;
        split.transfers.push_back({v->name(), it->second, s, bytes_of(*v)});
        split.stages[s].receives.push_back(v->name());
        auto& sends = split.stages[it->second].sends;
        if (std::find(sends.begin(), sends.end(), v->name()) == sends.end())
          sends.push_back(v->name());
      }
    }
  }
  return split;
}

Result<std::vector<ir::Model>> stage_models(const ir::Model& model,
                                            const std::vector<const ir::Node*>& order,
                                            const StageSplit& split) {
  const ir::Graph& g = *model.graph;
  // The values crossing a cut become stage inputs and outputs, which need their types: a copy of
  // the model with shapes inferred writes them (its nodes keep the graph's order).
  XOPT_ASSIGN_OR_RETURN(ir::Model typed,
                        ir::model_from_proto(ir::model_to_proto(model), model.base_dir));
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*typed.graph));
  const onnx::ModelProto proto = ir::model_to_proto(typed, /*write_inferred_value_info=*/true);
  std::unordered_map<const ir::Node*, int> proto_index;
  int k = 0;
  for (const ir::Node* n : g.nodes()) proto_index[n] = k++;
  if (k != proto.graph().node_size())
    return internal_error("the graph and its proto differ in node count");
  std::map<std::string, const onnx::ValueInfoProto*> info;
  for (const auto& v : proto.graph().input()) info[v.name()] = &v;
  for (const auto& v : proto.graph().value_info()) info[v.name()] = &v;
  for (const auto& v : proto.graph().output()) info[v.name()] = &v;
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : proto.graph().initializer()) inits[t.name()] = &t;
  std::unordered_set<const ir::Value*> graph_outputs(g.outputs().begin(), g.outputs().end());

  std::vector<ir::Model> out;
  for (size_t s = 0; s < split.stages.size(); ++s) {
    const Stage& st = split.stages[s];
    onnx::ModelProto sp = proto;
    onnx::GraphProto* sg = sp.mutable_graph();
    sg->clear_node();
    sg->clear_input();
    sg->clear_output();
    sg->clear_initializer();
    sg->clear_sparse_initializer();
    sg->clear_value_info();
    sg->set_name(proto.graph().name() + "_stage" + std::to_string(s));
    std::unordered_set<const ir::Value*> produced, added;
    for (size_t i = st.begin; i < st.end; ++i)
      for (const ir::Value* v : order[i]->outputs())
        if (v != nullptr) produced.insert(v);
    auto add_info = [&](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                        const ir::Value* v) -> Status {
      auto it = info.find(v->name());
      if (it == info.end())
        return invalid_argument("value '" + v->name() +
                                "' crosses a stage boundary but its type is not known");
      *list->Add() = *it->second;
      return Status::ok();
    };
    for (size_t i = st.begin; i < st.end; ++i) {
      auto pi = proto_index.find(order[i]);
      if (pi == proto_index.end())
        return invalid_argument("the order names a node not in the graph");
      *sg->add_node() = proto.graph().node(pi->second);
      for (const ir::Value* v : reads(*order[i])) {
        if (produced.count(v) != 0 || !added.insert(v).second) continue;
        if (v->is_graph_input() || v->producer() != nullptr) {
          XOPT_RETURN_IF_ERROR(add_info(sg->mutable_input(), v));
        }
        if (v->is_initializer()) {
          auto it = inits.find(v->name());
          if (it == inits.end())
            return invalid_argument("initializer '" + v->name() + "' is not in the model's proto");
          *sg->add_initializer() = *it->second;
        }
      }
    }
    for (size_t i = st.begin; i < st.end; ++i)
      for (const ir::Value* v : order[i]->outputs()) {
        if (v == nullptr) continue;
        const bool sent = std::find(st.sends.begin(), st.sends.end(), v->name()) != st.sends.end();
        if (sent || graph_outputs.count(v) != 0)
          XOPT_RETURN_IF_ERROR(add_info(sg->mutable_output(), v));
      }
    XOPT_ASSIGN_OR_RETURN(ir::Model m, ir::model_from_proto(std::move(sp), model.base_dir));
    XOPT_RETURN_IF_ERROR(ir::infer_shapes(*m.graph));
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace xopt::planner
