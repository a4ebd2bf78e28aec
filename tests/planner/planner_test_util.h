// Graph builders, random DAGs and an independent replay of a plan, shared by the planner tests.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "planner/intervals.h"
#include "planner/memory_plan.h"

namespace xopt::planner::test {

// A graph with static shapes, built node by node.
class GraphBuilder {
 public:
  explicit GraphBuilder(int64_t opset = 17);
  ir::Value* input(const std::string& name, const std::vector<int64_t>& dims,
                   ir::DType dtype = ir::DType::kFloat);
  ir::Value* weight(const std::string& name, const std::vector<int64_t>& dims);
  // Adds a node with one output of the given shape (dtype: the first input's, or float).
  ir::Value* op(const std::string& op_type, const std::vector<ir::Value*>& inputs,
                const std::string& out, const std::vector<int64_t>& dims,
                const std::string& domain = "", ir::DType dtype = ir::DType::kUndefined);
  ir::Node* last() const { return last_; }
  void output(ir::Value* v);
  ir::Graph& graph() { return *model_.graph; }
  ir::Model& model() { return model_; }

 private:
  ir::Model model_;
  ir::Node* last_ = nullptr;
  std::vector<ir::Value*> outputs_;
};

// Parses ONNX text and gives the listed values static float shapes (the text form has no
// value_info).
ir::Model parse_with_shapes(const std::string& text,
                            const std::map<std::string, std::vector<int64_t>>& shapes);

// A random DAG: unary and binary elementwise ops (some broadcasting), views, and opaque ops with
// several inputs and outputs, on float tensors of random sizes.
void build_random_dag(GraphBuilder& b, std::mt19937& rng, int nodes);

// A random topological order of the graph (random choice among ready nodes).
std::vector<const ir::Node*> random_topological_order(const ir::Graph& g, std::mt19937& rng);

// Replays `order` against the plan, tracking which value's content each aligned chunk of the arena
// holds: every read must find the content its producer wrote (a view carries its input's content),
// and graph outputs in the arena must hold theirs at the end. Independent of the planner's own
// aliasing decisions. Returns "" or the first violation.
std::string replay(const ir::Graph& g, const std::vector<const ir::Node*>& order,
                   const MemoryPlan& plan);

// Random offset-assignment problems.
std::vector<Buffer> random_buffers(std::mt19937& rng, int count, int steps, int max_units,
                                   size_t unit);

// Smallest arena by exhaustive search over offsets that are multiples of `unit` (tiny problems
// only).
size_t brute_force_arena(const std::vector<Buffer>& buffers, size_t unit);

// x[1, 256] -> MatMul(w_i[k, widths_i]) -> ...: a chain whose weights are k * widths_i floats,
// in graph order, planned (the offload and breakdown tests' model).
struct Chain {
  GraphBuilder b;
  std::vector<const ir::Node*> order;
  MemoryPlan plan;
};
std::unique_ptr<Chain> chain(const std::vector<int64_t>& widths);

}  // namespace xopt::planner::test
