#include "viz/diff.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

namespace xopt::viz {
namespace {

using Owners = std::unordered_map<std::string, const ir::Node*>;  // A node name -> B node

// B's nodes carry provenance (diffed in memory, right after the passes).
void match_by_provenance(const ir::Graph& a, const ir::Graph& b, Owners& owner) {
  for (const ir::Node* x : b.nodes())
    for (const auto& original : x->provenance())
      if (a.find_node(original)) owner.emplace(original, x);
}

// Values of A computed from constants only: folding removes their producers, which therefore did
// not go into any node of B.
std::unordered_set<const ir::Value*> constant_derived(const ir::Graph& a) {
  std::unordered_set<const ir::Value*> c;
  for (const ir::Value* v : a.initializers())
    if (v->is_constant()) c.insert(v);
  for (const ir::Node* n : a.nodes()) {
    bool all = true;
    for (const ir::Value* in : n->inputs()) all = all && (!in || c.count(in));
    if (all)
      for (const ir::Value* out : n->outputs())
        if (out) c.insert(out);
  }
  return c;
}

// Two files: A's nodes that computed each B node's outputs from its inputs stand for it.
void match_by_value_flow(const ir::Graph& a, const ir::Graph& b, Owners& owner) {
  const auto folded = constant_derived(a);
  std::unordered_set<std::string> b_names;
  for (const ir::Node* x : b.nodes()) b_names.insert(x->name());
  for (const ir::Node* x : b.nodes()) {
    std::unordered_set<std::string> stop;
    for (const ir::Value* v : x->inputs())
      if (v) stop.insert(v->name());
    std::vector<const ir::Value*> work;
    std::unordered_set<const ir::Node*> seen;
    for (const ir::Value* v : x->outputs())
      if (v)
        if (const ir::Value* av = a.find_value(v->name())) work.push_back(av);
    while (!work.empty()) {
      const ir::Value* v = work.back();
      work.pop_back();
      const ir::Node* p = v->producer();
      if (!p || folded.count(v) || stop.count(v->name()) || !seen.insert(p).second) continue;
      // Claimed by another node of B (by name or by its own walk): a boundary.
      if (auto it = owner.find(p->name()); it != owner.end() && it->second != x) continue;
      // A node B kept under its own name is a boundary, not part of x.
      if (p->name() != x->name() && b_names.count(p->name())) continue;
      owner.emplace(p->name(), x);
      for (const ir::Value* in : p->inputs())
        if (in) work.push_back(in);
    }
  }
}

}  // namespace

const char* change_name(Change c) {
  switch (c) {
    case Change::kKept:
      return "kept";
    case Change::kRemoved:
      return "removed";
    case Change::kNew:
      return "new";
    case Change::kFused:
      return "fused";
    case Change::kChanged:
      return "changed";
  }
  return "";
}

const NodeDiff* GraphDiff::find_before(const std::string& name) const {
  for (const auto& d : before)
    if (d.name == name) return &d;
  return nullptr;
}

const NodeDiff* GraphDiff::find_after(const std::string& name) const {
  for (const auto& d : after)
    if (d.name == name) return &d;
  return nullptr;
}

GraphDiff diff_graphs(const ir::Graph& a, const ir::Graph& b) {
  GraphDiff d;
  Owners owner;
  bool has_provenance = false;
  for (const ir::Node* x : b.nodes()) has_provenance |= !x->provenance().empty();
  if (has_provenance) match_by_provenance(a, b, owner);
  // Then names: a node of B without provenance stands for the node of A with its name.
  for (const ir::Node* x : b.nodes())
    if (x->provenance().empty() && a.find_node(x->name())) owner.emplace(x->name(), x);
  if (!has_provenance) {
    d.inferred = true;
    match_by_value_flow(a, b, owner);
  }

  std::unordered_map<const ir::Node*, std::vector<const ir::Node*>> covers;
  for (const ir::Node* n : a.nodes()) {
    ++d.op_counts[n->op_type()].first;
    if (auto it = owner.find(n->name()); it != owner.end()) covers[it->second].push_back(n);
  }
  for (const ir::Node* x : b.nodes()) ++d.op_counts[x->op_type()].second;

  // Two files: a node a fusion created under a new name (bert's attention MatMuls) matches
  // nothing by name or value flow; it belongs to the fusion it feeds, whose originals it shares.
  std::unordered_map<const ir::Node*, const ir::Node*> part_of;
  if (d.inferred) {
    const std::vector<ir::Node*> order = b.node_list();
    for (auto x = order.rbegin(); x != order.rend(); ++x) {
      auto c = covers.find(*x);
      if (c == covers.end() || c->second.size() < 2) continue;
      std::vector<const ir::Node*> work{*x};
      while (!work.empty()) {
        const ir::Node* n = work.back();
        work.pop_back();
        for (const ir::Value* v : n->inputs()) {
          const ir::Node* y = v ? v->producer() : nullptr;
          if (!y || covers.count(y) || part_of.count(y)) continue;
          part_of[y] = *x;
          work.push_back(y);
        }
      }
    }
  }

  auto classify = [](const ir::Node& x, const std::vector<const ir::Node*>& cov) {
    if (cov.empty()) return Change::kNew;
    if (cov.size() > 1) return Change::kFused;
    return cov[0]->name() == x.name() && cov[0]->op_type() == x.op_type() ? Change::kKept
                                                                          : Change::kChanged;
  };
  for (const ir::Node* x : b.nodes()) {
    NodeDiff nd{x->name(), x->op_type(), Change::kNew, {}, ""};
    auto it = covers.find(x);
    if (it != covers.end()) {
      nd.change = classify(*x, it->second);
      for (const ir::Node* n : it->second) nd.counterparts.emplace_back(n->name(), n->op_type());
    } else if (auto p = part_of.find(x); p != part_of.end()) {
      nd.change = Change::kFused;
      nd.part_of = p->second->name();
      for (const ir::Node* n : covers[p->second])
        nd.counterparts.emplace_back(n->name(), n->op_type());
    }
    d.after.push_back(std::move(nd));
  }
  for (const ir::Node* n : a.nodes()) {
    NodeDiff nd{n->name(), n->op_type(), Change::kRemoved, {}, ""};
    if (auto it = owner.find(n->name()); it != owner.end()) {
      nd.change = classify(*it->second, covers[it->second]);
      nd.counterparts.emplace_back(it->second->name(), it->second->op_type());
    }
    d.before.push_back(std::move(nd));
  }
  return d;
}

}  // namespace xopt::viz
