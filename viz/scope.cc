#include "viz/scope.h"

namespace xopt::viz {

std::vector<std::string> name_scope(const std::string& node_name) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= node_name.size()) {
    size_t slash = node_name.find('/', pos);
    if (slash == std::string::npos) slash = node_name.size();
    if (slash > pos) parts.push_back(node_name.substr(pos, slash - pos));
    pos = slash + 1;
  }
  if (!parts.empty()) parts.pop_back();  // the node's own name
  return parts;
}

void ScopeTree::add(const std::vector<std::string>& parts, size_t item) {
  ScopeTree* at = this;
  for (const auto& part : parts) {
    auto& child = at->children[part];
    if (!child) {
      child = std::make_unique<ScopeTree>();
      child->name = part;
      child->path = at->path.empty() ? part : at->path + "/" + part;
      child->depth = at->depth + 1;
    }
    at = child.get();
  }
  at->items.push_back(item);
}

void ScopeTree::simplify() {
  total = items.size();
  for (auto it = children.begin(); it != children.end();) {
    ScopeTree& c = *it->second;
    c.simplify();
    if (c.total <= 1) {
      items.insert(items.end(), c.items.begin(), c.items.end());
      total += c.total;
      it = children.erase(it);
    } else {
      total += c.total;
      ++it;
    }
  }
}

}  // namespace xopt::viz
