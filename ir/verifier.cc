#include "ir/verifier.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/subgraph.h"

namespace xopt::ir {

namespace {
bool defined_outside_nodes(const Value* v) {
  return v->is_graph_input() || v->is_initializer() || v->sparse_initializer() != nullptr;
}

// A dim past kMaxDim, or a static shape whose bytes do not fit in 63 bits (dims of 2^40 x 2^40)
// would overflow every size computed from it; refuse it by name instead.
Status check_size(const Value* v) {
  if (v == nullptr || !v->is_tensor() || !v->shape().has_rank()) return Status::ok();
  for (const Dim& d : v->shape().dims())
    if (d.is_known() && d.value > kMaxDim)
      return invalid_model("value '" + v->name() + "' has shape " + v->shape().to_string() +
                           ": a dim past xopt's limit of 2^40");
  if (!v->shape().is_static()) return Status::ok();
  const size_t elem = std::max<size_t>(1, dtype_size(v->dtype()));
  uint64_t bytes = elem;
  for (int64_t d : v->shape().static_dims()) {
    if (d < 0) return Status::ok();
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) ||
        bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return invalid_model("value '" + v->name() + "' has shape " + v->shape().to_string() +
                           ": its size overflows 64 bits");
  }
  return Status::ok();
}

// Whether `s` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF). Names
// go into JSON plans and reports, DOT text and error messages; ONNX's protobuf strings are UTF-8
// and onnx.load itself refuses a name that is not.
bool valid_utf8(const std::string& s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// A printable form of a name that is not UTF-8: its bytes, non-ASCII ones as \xHH.
std::string escaped(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Status check_utf8(const std::string& name, const char* what) {
  if (valid_utf8(name)) return Status::ok();
  return invalid_model(std::string(what) + " '" + escaped(name) + "' is not valid UTF-8");
}

Status check_names(const Graph& graph) {
  for (const Value* v : graph.inputs()) XOPT_RETURN_IF_ERROR(check_utf8(v->name(), "graph input"));
  for (const Value* v : graph.outputs())
    XOPT_RETURN_IF_ERROR(check_utf8(v->name(), "graph output"));
  for (const Value* v : graph.initializers())
    XOPT_RETURN_IF_ERROR(check_utf8(v->name(), "initializer"));
  for (const Node* n : graph.nodes()) {
    XOPT_RETURN_IF_ERROR(check_utf8(n->name(), "node name"));
    XOPT_RETURN_IF_ERROR(check_utf8(n->op_type(), "op type"));
    XOPT_RETURN_IF_ERROR(check_utf8(n->domain(), "domain"));
    for (const Value* v : n->outputs())
      if (v != nullptr) XOPT_RETURN_IF_ERROR(check_utf8(v->name(), "value"));
  }
  return Status::ok();
}

// Whether v's use list holds `use`. A value read by many nodes (one weight shared by a whole
// graph) has its list sorted once, so each of its readers is looked up in O(log n) rather than by
// a scan, which made verifying such a graph quadratic.
class UseIndex {
 public:
  bool has(const Value* v, const Use& use) {
    const auto& uses = v->uses();
    if (uses.size() <= kScan) return std::find(uses.begin(), uses.end(), use) != uses.end();
    auto [it, fresh] = sorted_.try_emplace(v);
    if (fresh) {
      it->second = uses;
      std::sort(it->second.begin(), it->second.end(), less);
    }
    return std::binary_search(it->second.begin(), it->second.end(), use, less);
  }

 private:
  static constexpr size_t kScan = 16;
  static bool less(const Use& a, const Use& b) {
    return std::less<const Node*>()(a.node, b.node) || (a.node == b.node && a.index < b.index);
  }
  std::unordered_map<const Value*, std::vector<Use>> sorted_;
};

}  // namespace

Status verify(const Graph& graph) {
  XOPT_RETURN_IF_ERROR(check_names(graph));
  UseIndex use_index;
  std::unordered_set<const Value*> available;
  for (const Value* v : graph.inputs()) {
    available.insert(v);
    XOPT_RETURN_IF_ERROR(check_size(v));
  }
  for (const Value* v : graph.outputs()) XOPT_RETURN_IF_ERROR(check_size(v));
  for (const Value* v : graph.value_info()) XOPT_RETURN_IF_ERROR(check_size(v));
  for (const Value* v : graph.initializers()) {
    available.insert(v);
    const Tensor* t = v->initializer();
    if (v->dtype() != DType::kUndefined && v->dtype() != t->dtype())
      return invalid_model("initializer '" + v->name() + "' is declared " +
                           std::string(dtype_name(v->dtype())) + " but holds " +
                           std::string(dtype_name(t->dtype())));
  }
  std::unordered_set<const Node*> seen;
  for (const Node* n : graph.nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      const Value* v = n->input(i);
      if (v == nullptr) continue;
      if (!use_index.has(v, Use{const_cast<Node*>(n), static_cast<int>(i)}))
        return internal_error(n->describe() + ": use list of '" + v->name() + "' is out of date");
      if (available.count(v)) continue;
      if (v->producer() == nullptr && !defined_outside_nodes(v))
        return invalid_model(
            n->describe() + " reads '" + v->name() +
            "', which no node produces and is neither a graph input nor an initializer");
      if (v->producer() != nullptr)
        return invalid_model(n->describe() + " reads '" + v->name() + "' before " +
                             v->producer()->describe() +
                             " produces it (not in topological order, or a cycle)");
    }
    for (const Value* v : n->implicit_inputs()) {
      if (available.count(v)) continue;
      if (v->producer() == nullptr && !defined_outside_nodes(v))
        return invalid_model(n->describe() + ": a subgraph reads '" + v->name() +
                             "', which is not defined");
      if (v->producer() != nullptr)
        return invalid_model(n->describe() + ": a subgraph reads '" + v->name() + "' before " +
                             v->producer()->describe() + " produces it");
    }
    // Subgraphs (If branches, Loop and Scan bodies) are graphs of their own, whose outer-scope
    // reads are checked above.
    for (const std::string& attr : subgraph_attrs(*n)) {
      XOPT_ASSIGN_OR_RETURN(Subgraph sg, load_subgraph(*n, attr));
      Status s = verify(*sg.model.graph);
      if (!s.is_ok()) return s.with_context(n->describe() + ": in " + attr + ": ");
    }
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      const Value* v = n->output(i);
      if (v == nullptr) continue;
      if (v->producer() != n || v->producer_index() != static_cast<int>(i))
        return invalid_model("value '" + v->name() + "' is written by more than one node (" +
                             n->describe() + ")");
      if (!available.insert(v).second)
        return invalid_model("value '" + v->name() + "' is defined twice (" + n->describe() + ")");
      XOPT_RETURN_IF_ERROR(check_size(v));
    }
    seen.insert(n);
  }
  for (const Value* v : graph.outputs()) {
    if (!available.count(v))
      return invalid_model("graph output '" + v->name() + "' is never produced");
  }
  return Status::ok();
}

}  // namespace xopt::ir
