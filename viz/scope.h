// Name scopes: "/layer1/layer1.0/conv1/Conv" (as PyTorch, tf2onnx and Paddle2ONNX write them) lies
// in layer1 > layer1.0 > conv1. The tree of scopes becomes nested Graphviz clusters.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace xopt::viz {

// The scope path of a node name: every '/'-separated part but the last. Empty for names
// without scopes ("conv1", "Conv_12").
std::vector<std::string> name_scope(const std::string& node_name);

struct ScopeTree {
  std::string name;           // the last part ("layer1.0"); empty for the root
  std::string path;           // "layer1/layer1.0"
  int depth = 0;              // the root is 0, a top-level scope 1
  std::vector<size_t> items;  // what lies directly in this scope (caller's indices)
  std::map<std::string, std::unique_ptr<ScopeTree>> children;
  size_t total = 0;  // items here and below

  // Puts `item` at `path` (creating the scopes on the way).
  void add(const std::vector<std::string>& path, size_t item);
  // Dissolves scopes holding a single item into their parent (a cluster around one node only
  // costs space) and counts totals. Call once after adding.
  void simplify();
};

}  // namespace xopt::viz
