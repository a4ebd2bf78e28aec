#include "precision/choose.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <unordered_map>

#include "precision/float_data.h"

namespace xopt::precision {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using ir::DType;

std::string num(double v) {
  if (std::isinf(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

double type_bytes(DType t) {
  return t == DType::kFloat ? 4.0 : 2.0;
}

// Readers that look at a value's shape only need no Cast.
bool reads_shape_only(const ir::Node& n) {
  return n.is("Shape") || n.is("Size");
}

struct Chooser {
  const ir::Graph& g;
  const Calibration& cal;
  const ChooseOptions& opt;
  std::vector<const ir::Node*> nodes;  // graph order
  std::unordered_map<const ir::Node*, size_t> index;
  std::vector<DType> type;       // current choice
  std::vector<DType> preferred;  // the low type a node may take, kFloat when none
  std::vector<bool> forced;      // user --force-lowp
  std::vector<double> err2;      // squared local error of the preferred type
  std::vector<NodeDecision> dec;
  std::vector<std::string> outputs;
  std::vector<std::vector<char>> reach;  // reach[i][o]: node i reaches graph output o
  double budget2 = 0.0;

  Chooser(const ir::Graph& graph, const Calibration& c, const ChooseOptions& o)
      : g(graph), cal(c), opt(o) {}

  bool is_float_value(const ir::Value* v) const {
    if (v == nullptr) return false;
    auto it = cal.values.find(v->name());
    if (it != cal.values.end()) return it->second.dtype() == DType::kFloat;
    return v->dtype() == DType::kFloat;
  }
  double numel(const ir::Value* v) const {
    auto it = cal.values.find(v->name());
    return it == cal.values.end() ? 0.0 : static_cast<double>(it->second.numel());
  }
  DType type_of(const ir::Node* n) const {
    auto it = index.find(n);
    return it == index.end() ? DType::kFloat : type[it->second];
  }

  double node_cost(size_t i, DType t) const {
    double c = 0.0;
    for (const ir::Value* v : nodes[i]->inputs())
      if (is_float_value(v)) c += numel(v) * type_bytes(t);
    for (const ir::Value* v : nodes[i]->outputs())
      if (is_float_value(v)) c += numel(v) * type_bytes(t);
    return c;
  }
  // Casts value v needs under the current types: count and bytes.
  std::pair<int, double> cast_cost(const ir::Value* v) const {
    if (!is_float_value(v) || v->is_initializer()) return {0, 0.0};
    const DType from = v->producer() != nullptr ? type_of(v->producer()) : DType::kFloat;
    std::set<DType> to;
    for (const ir::Use& u : v->uses())
      if (!reads_shape_only(*u.node)) to.insert(type_of(u.node));
    if (v->is_graph_output()) to.insert(DType::kFloat);
    int k = 0;
    double bytes = 0.0;
    for (DType t : to) {
      if (t == from) continue;
      ++k;
      bytes += numel(v) * (type_bytes(from) + type_bytes(t)) + opt.cast_overhead_bytes;
    }
    return {k, bytes};
  }
  // The float values around a set of nodes (their Casts change with the nodes' types).
  std::set<const ir::Value*> values_around(const std::vector<size_t>& ids) const {
    std::set<const ir::Value*> vs;
    for (size_t i : ids) {
      for (const ir::Value* v : nodes[i]->inputs())
        if (v != nullptr) vs.insert(v);
      for (const ir::Value* v : nodes[i]->outputs())
        if (v != nullptr) vs.insert(v);
    }
    return vs;
  }
  double local_cost(const std::vector<size_t>& ids) const {
    double c = 0.0;
    for (size_t i : ids) c += node_cost(i, type[i]);
    for (const ir::Value* v : values_around(ids)) c += cast_cost(v).second;
    return c;
  }
  double total_cost(int* casts) const {
    double c = 0.0;
    for (size_t i = 0; i < nodes.size(); ++i) c += node_cost(i, type[i]);
    std::set<const ir::Value*> vs;
    for (const ir::Node* n : nodes)
      for (const ir::Value* v : n->outputs())
        if (v != nullptr) vs.insert(v);
    for (const ir::Value* v : g.inputs()) vs.insert(v);
    int k = 0;
    for (const ir::Value* v : vs) {
      auto [n, b] = cast_cost(v);
      k += n;
      c += b;
    }
    if (casts != nullptr) *casts = k;
    return c;
  }

  // Squared error estimate per output.
  std::vector<double> output_err2() const {
    std::vector<double> s(outputs.size(), 0.0);
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (type[i] == DType::kFloat) continue;
      for (size_t o = 0; o < outputs.size(); ++o)
        if (reach[i][o]) s[o] += err2[i];
    }
    return s;
  }
  bool fits_budget(size_t i) const {
    const std::vector<double> s = output_err2();
    for (size_t o = 0; o < outputs.size(); ++o)
      if (reach[i][o] && s[o] + err2[i] > budget2 * (1 + 1e-9)) return false;
    return true;
  }

  void set_fp32(size_t i, const std::string& kind, const std::string& reason) {
    type[i] = DType::kFloat;
    dec[i].kind = kind;
    dec[i].reason = reason;
  }

  void compute_reach() {
    std::unordered_map<const ir::Value*, size_t> out_index;
    for (size_t o = 0; o < g.outputs().size(); ++o) {
      outputs.push_back(g.outputs()[o]->name());
      out_index[g.outputs()[o]] = o;
    }
    reach.assign(nodes.size(), std::vector<char>(outputs.size(), 0));
    // Reverse graph order: every consumer of a node comes after it (graphs are topologically
    // sorted on load and after every pass).
    for (size_t k = nodes.size(); k-- > 0;) {
      for (const ir::Value* v : nodes[k]->outputs()) {
        if (v == nullptr) continue;
        if (auto it = out_index.find(v); it != out_index.end()) reach[k][it->second] = 1;
        for (const ir::Use& u : v->uses()) {
          auto ci = index.find(u.node);
          if (ci == index.end() || ci->second <= k) continue;
          for (size_t o = 0; o < outputs.size(); ++o) reach[k][o] |= reach[ci->second][o];
        }
      }
    }
  }

  // Range facts of a node's float inputs and outputs; whether each low type fits, and why not.
  void ranges(size_t i, bool* fp16_fits, bool* bf16_fits, std::string* why16, std::string* whybf) {
    NodeDecision& d = dec[i];
    d.min_nonzero_abs = kInf;
    *fp16_fits = *bf16_fits = true;
    auto look = [&](const ir::Value* v) {
      if (v == nullptr) return;
      auto it = cal.ranges.find(v->name());
      if (it == cal.ranges.end()) return;
      const RangeStats& r = it->second;
      d.max_abs = std::max(d.max_abs, r.max_abs);
      d.min_nonzero_abs = std::min(d.min_nonzero_abs, r.min_nonzero_abs);
      d.fp16_saturate_share = std::max(d.fp16_saturate_share, r.share(r.fp16_saturate));
      // Underflow is a fact of activations: a weight is rounded once when it is stored, and what
      // its subnormal (or flushed) entries cost is in the node's measured local error already.
      // A fused bias or a trained-to-zero filter is mostly tiny values and says nothing of range.
      const bool activation = !v->is_constant();
      if (activation)
        d.fp16_subnormal_share = std::max(d.fp16_subnormal_share, r.share(r.fp16_subnormal));
      if (*fp16_fits && r.max_abs * opt.range_margin > dtype_max(DType::kFloat16)) {
        *fp16_fits = false;
        *why16 = "'" + v->name() + "' reaches |x| = " + num(r.max_abs) + " (" +
                 num(100.0 * r.share(r.fp16_saturate)) + "% past float16's 65504";
        *why16 += opt.range_margin != 1.0 ? ", margin " + num(opt.range_margin) + ")" : ")";
      }
      if (*fp16_fits && activation && r.share(r.fp16_subnormal) > opt.underflow_share) {
        *fp16_fits = false;
        *why16 = "'" + v->name() + "' has " + num(100.0 * r.share(r.fp16_subnormal)) +
                 "% of its values below float16's smallest normal 6.1e-05";
      }
      if (*bf16_fits && r.max_abs * opt.range_margin > dtype_max(DType::kBFloat16)) {
        *bf16_fits = false;
        *whybf = "'" + v->name() + "' reaches |x| = " + num(r.max_abs) + ", past bfloat16's range";
      }
    };
    for (const ir::Value* v : nodes[i]->inputs()) look(v);
    for (const ir::Value* v : nodes[i]->outputs()) look(v);
    if (std::isinf(d.min_nonzero_abs)) d.min_nonzero_abs = 0.0;
  }

  void start(const std::map<std::string, LocalError, std::less<>>& local, const NodeRules& rules) {
    for (const ir::Node* n : g.nodes()) {
      bool float_out = false;
      for (const ir::Value* v : n->outputs()) float_out = float_out || is_float_value(v);
      if (!float_out) continue;
      index[n] = nodes.size();
      nodes.push_back(n);
    }
    const size_t N = nodes.size();
    type.assign(N, DType::kFloat);
    preferred.assign(N, DType::kFloat);
    forced.assign(N, false);
    err2.assign(N, 0.0);
    dec.resize(N);
    budget2 = opt.max_error * opt.max_error;
    for (size_t i = 0; i < N; ++i) {
      const ir::Node& n = *nodes[i];
      NodeDecision& d = dec[i];
      d.node = node_key(n);
      d.op_type = n.op_type();
      if (auto it = local.find(d.node); it != local.end()) d.local = it->second;
      NodeRule rule;
      if (auto it = rules.find(d.node); it != rules.end()) rule = it->second;
      bool fits16 = true, fitsbf = true;
      std::string why16, whybf;
      ranges(i, &fits16, &fitsbf, &why16, &whybf);
      if (rule.user_keep_fp32) {
        set_fp32(i, "user", "--keep-fp32 names it");
        continue;
      }
      if (!rule.fp16 && !rule.bf16) {
        set_fp32(i, "rule", rule.rule.empty() ? "the rules keep it in fp32" : rule.rule);
        continue;
      }
      if (rule.user_force_lowp) {
        forced[i] = true;
        preferred[i] = (fits16 && rule.fp16) || !rule.bf16 ? DType::kFloat16 : DType::kBFloat16;
        type[i] = preferred[i];
        const double e = d.local.of(preferred[i]);
        err2[i] = std::isfinite(e) ? e * e : budget2;  // counts against the budget either way
        d.kind = "user";
        d.reason = "--force-lowp names it";
        continue;
      }
      if (!d.local.measured()) {
        set_fp32(i, "not-measured", "local error not measured: " + d.local.problem);
        continue;
      }
      const bool ok16 = rule.fp16 && fits16 && std::isfinite(d.local.fp16);
      const bool okbf = rule.bf16 && fitsbf && std::isfinite(d.local.bf16);
      if (!ok16 && !okbf) {
        std::string why;
        if (!rule.fp16 || !rule.bf16) why = rule.rule + "; ";
        why += !fits16
                   ? why16
                   : (std::isfinite(d.local.fp16) ? "float16 not allowed" : "float16 overflows");
        if (rule.bf16) why += !fitsbf ? "; " + whybf : "; bfloat16 overflows";
        set_fp32(i, !fits16 || !fitsbf ? "range" : "rule", why);
        continue;
      }
      const DType t =
          ok16 && (!okbf || d.local.fp16 <= d.local.bf16) ? DType::kFloat16 : DType::kBFloat16;
      const double e = d.local.of(t);
      if (e * e > budget2) {
        const std::string at = t == DType::kFloat16 && !d.local.worst_at_fp16.empty()
                                   ? " (seen at '" + d.local.worst_at_fp16 + "')"
                                   : "";
        set_fp32(i, "local-error",
                 std::string(t == DType::kFloat16 ? "float16" : "bfloat16") + " local error " +
                     num(e) + at + " alone is over --max-error " + num(opt.max_error) +
                     (t == DType::kBFloat16 && !ok16 ? " (float16: " + why16 + ")" : ""));
        continue;
      }
      preferred[i] = t;
      err2[i] = e * e;
      type[i] = t;
      d.kind = "chosen";
      d.reason =
          std::string(t == DType::kFloat16 ? "float16" : "bfloat16") + ": local error " + num(e) +
          (t == DType::kBFloat16 && !ok16 && !why16.empty() ? "; not float16: " + why16 : "");
    }
    compute_reach();
  }

  void repair_budget() {
    for (;;) {
      const std::vector<double> s = output_err2();
      size_t bad = outputs.size();
      for (size_t o = 0; o < outputs.size(); ++o)
        if (s[o] > budget2 * (1 + 1e-9)) {
          bad = o;
          break;
        }
      if (bad == outputs.size()) return;
      size_t worst = nodes.size();
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (type[i] == DType::kFloat || forced[i] || !reach[i][bad]) continue;
        if (worst == nodes.size() || err2[i] > err2[worst]) worst = i;
      }
      if (worst == nodes.size()) return;  // only --force-lowp nodes left: the user's call
      set_fp32(worst, "budget",
               "with it in low precision, output '" + outputs[bad] + "' would reach an " +
                   "estimated error of " + num(std::sqrt(s[bad])) + " > --max-error " +
                   num(opt.max_error) + " (local error " + num(std::sqrt(err2[worst])) + ")");
    }
  }

  // Connected groups of low-precision nodes (through the values between them).
  std::vector<std::vector<size_t>> low_groups() const {
    std::vector<int> group(nodes.size(), -1);
    std::vector<std::vector<size_t>> groups;
    for (size_t s = 0; s < nodes.size(); ++s) {
      if (type[s] == DType::kFloat || forced[s] || group[s] >= 0) continue;
      groups.emplace_back();
      std::vector<size_t> stack{s};
      group[s] = static_cast<int>(groups.size() - 1);
      while (!stack.empty()) {
        const size_t i = stack.back();
        stack.pop_back();
        groups.back().push_back(i);
        auto visit = [&](const ir::Node* m) {
          auto it = index.find(m);
          if (it == index.end()) return;
          const size_t j = it->second;
          if (type[j] == DType::kFloat || forced[j] || group[j] >= 0) return;
          group[j] = group[s];
          stack.push_back(j);
        };
        for (const ir::Value* v : nodes[i]->inputs())
          if (v != nullptr && v->producer() != nullptr && !v->is_initializer())
            visit(v->producer());
        for (const ir::Value* v : nodes[i]->outputs())
          if (v != nullptr)
            for (const ir::Use& u : v->uses()) visit(u.node);
      }
    }
    return groups;
  }

  void reduce_cost() {
    for (int round = 0; round < 100; ++round) {
      bool changed = false;
      for (const std::vector<size_t>& grp : low_groups()) {
        const double low = local_cost(grp);
        std::vector<DType> saved;
        for (size_t i : grp) saved.push_back(type[i]);
        for (size_t i : grp) type[i] = DType::kFloat;
        const double fp32 = local_cost(grp);
        if (fp32 <= low) {
          for (size_t i : grp)
            set_fp32(i, "cast-cost",
                     "its group of " + std::to_string(grp.size()) +
                         " low-precision node(s) would move " + num(low) +
                         " bytes with its Casts, fp32 moves " + num(fp32));
          changed = true;
        } else {
          for (size_t k = 0; k < grp.size(); ++k) type[grp[k]] = saved[k];
        }
      }
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (forced[i] || preferred[i] == DType::kFloat) continue;
        const DType was = type[i];
        const DType other = was == DType::kFloat ? preferred[i] : DType::kFloat;
        if (other != DType::kFloat && !fits_budget(i)) continue;
        const double before = local_cost({i});
        type[i] = other;
        const double after = local_cost({i});
        if (after < before) {
          if (other == DType::kFloat) {
            set_fp32(i, "cast-cost",
                     "in fp32 it moves " + num(after) + " bytes with its Casts, " + num(before) +
                         " in " + (was == DType::kFloat16 ? "float16" : "bfloat16"));
          } else {
            dec[i].kind = "chosen";
            const double e = std::sqrt(err2[i]);
            dec[i].reason = std::string(other == DType::kFloat16 ? "float16" : "bfloat16") +
                            ": local error " + num(e) + ", saves " + num(before - after) + " bytes";
          }
          changed = true;
        } else {
          type[i] = was;
        }
      }
      if (!changed) return;
    }
  }

  ChoiceReport report() {
    ChoiceReport r;
    r.max_error = opt.max_error;
    const std::vector<double> s = output_err2();
    for (size_t o = 0; o < outputs.size(); ++o) r.output_estimate[outputs[o]] = std::sqrt(s[o]);
    r.bytes_chosen = total_cost(&r.casts);
    std::vector<DType> chosen = type;
    std::fill(type.begin(), type.end(), DType::kFloat);
    r.bytes_fp32 = total_cost(nullptr);
    type = chosen;
    for (size_t i = 0; i < nodes.size(); ++i) {
      dec[i].dtype = type[i];
      dec[i].headroom = dec[i].max_abs == 0.0 ? kInf : dtype_max(type[i]) / dec[i].max_abs;
      r.nodes.push_back(dec[i]);
    }
    return r;
  }
};

}  // namespace

int ChoiceReport::count(ir::DType t) const {
  int k = 0;
  for (const NodeDecision& d : nodes) k += d.dtype == t ? 1 : 0;
  return k;
}

ChoiceReport choose_precision(const ir::Graph& graph, const Calibration& calibration,
                              const std::map<std::string, LocalError, std::less<>>& local,
                              const NodeRules& rules, const ChooseOptions& options) {
  Chooser c(graph, calibration, options);
  c.start(local, rules);
  c.repair_budget();
  c.reduce_cost();
  return c.report();
}

passes::PrecisionChoice to_choice(const ChoiceReport& report) {
  passes::PrecisionChoice choice;
  for (const NodeDecision& d : report.nodes)
    if (d.dtype != ir::DType::kFloat) choice[d.node] = d.dtype;
  return choice;
}

namespace {
// JSON has no inf: large figures are written as null.
nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json choice_json(const ChoiceReport& report) {
  nlohmann::json j;
  j["format"] = "xopt.precision_choice";
  j["version"] = 1;
  j["max_error"] = report.max_error;
  j["bytes_fp32"] = report.bytes_fp32;
  j["bytes_chosen"] = report.bytes_chosen;
  j["casts"] = report.casts;
  j["counts"] = {{"float16", report.count(ir::DType::kFloat16)},
                 {"bfloat16", report.count(ir::DType::kBFloat16)},
                 {"float", report.count(ir::DType::kFloat)}};
  j["notes"] = report.notes;
  nlohmann::json outs = nlohmann::json::object();
  for (const auto& [name, e] : report.output_estimate) outs[name] = finite_or_null(e);
  j["output_estimate"] = outs;
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeDecision& d : report.nodes) {
    nodes.push_back({{"node", d.node},
                     {"op_type", d.op_type},
                     {"dtype", std::string(ir::dtype_name(d.dtype))},
                     {"kind", d.kind},
                     {"reason", d.reason},
                     {"max_abs", d.max_abs},
                     {"min_nonzero_abs", d.min_nonzero_abs},
                     {"fp16_saturate_share", d.fp16_saturate_share},
                     {"fp16_subnormal_share", d.fp16_subnormal_share},
                     {"headroom", finite_or_null(d.headroom)},
                     {"local_error_fp16", finite_or_null(d.local.fp16)},
                     {"local_error_bf16", finite_or_null(d.local.bf16)},
                     {"own_error_fp16", finite_or_null(d.local.own_fp16)},
                     {"own_error_bf16", finite_or_null(d.local.own_bf16)},
                     {"worst_at_fp16", d.local.worst_at_fp16},
                     {"local_error_method", d.local.method}});
  }
  j["nodes"] = nodes;
  return j;
}

}  // namespace xopt::precision
