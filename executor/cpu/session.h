// Runs a model on the CPU with the reference kernels.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cpu/value.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "planner/memory_plan.h"

namespace xopt::exec {

// What a run measured.
struct RunStats {
  size_t nodes_run = 0;
  // Simple mode: the most activation bytes alive at once (inputs and initializers not counted).
  size_t peak_activation_bytes = 0;
  // Arena mode: the arena's size, and how many kernel outputs did not land in their planned slot
  // (a kernel that made its output share another tensor's bytes) and were copied there.
  size_t arena_bytes = 0;
  size_t outputs_copied_into_arena = 0;
};

struct RunOptions {
  // When set, every planned activation lives in one arena at the plan's offsets. The plan is
  // checked (check_plan) before anything runs, and a kernel output whose size disagrees with it is
  // an error. A plan made for a range of shapes (MemoryPlan::input_ranges) refuses an input outside
  // its range, naming the input and the dim, and holds smaller values in their planned slots. Nodes
  // run in plan->node_order when it is given (the order the plan's steps refer to); every
  // activation read by a node or returned must be planned, and a value read outside its planned
  // [first_step, last_step] is an error. Values not in the plan (graph inputs and outputs when
  // io_in_arena is false, initializers, outputs nobody reads) get their own buffers.
  const planner::MemoryPlan* plan = nullptr;
  // Called after each node for each of its outputs (validation, debugging, plan building).
  std::function<void(const ir::Node&, const ir::Value&, const ir::Tensor&)> on_output;
  // Filled when set.
  RunStats* stats = nullptr;
  // Threads the kernels may use (see executor/cpu/parallel.h); 0: default_intra_op_threads()
  // (XOPT_NUM_THREADS, else every hardware thread). Two runs with the same count give the same
  // bits; another count may change the last bits of float products (BLAS blocks differ).
  int threads = 0;
};

// Named inputs in, graph outputs out (in graph output order). Errors name the missing input, the
// input of the wrong shape or dtype, or the node whose op has no kernel ("no CPU kernel for Foo at
// opset N", an unsupported error). An initializer that is also a graph input (IR < 4) may be
// overridden by name.
Result<std::vector<ir::Tensor>> run_model(const ir::Model& model,
                                          const std::map<std::string, ir::Tensor>& inputs,
                                          const RunOptions& options = {});

// The same for models whose inputs or outputs may be sequences or optionals (executor/cpu/value.h):
// run_model is this with every value a tensor, and refuses a graph output that is not one. An input
// declared optional may be given as its content (a tensor or a sequence), which is then present.
Result<std::vector<ExecValue>> run_model_values(const ir::Model& model,
                                                const std::map<std::string, ExecValue>& inputs,
                                                const RunOptions& options = {});

// Nodes in the order run_model executes them for `plan` (plan order when given, else graph order).
Result<std::vector<const ir::Node*>> execution_order(const ir::Graph& graph,
                                                     const planner::MemoryPlan* plan);

// A plan with no sharing at all: every activation (and every graph input and output when
// io_in_arena) at its own aligned offset, one after another, with lifetimes from the graph order.
// Sizes come from running the model once in simple mode with `inputs`. Running a model in this plan
// must give exactly the outputs of simple mode; tests use it to exercise arena mode on any model.
Result<planner::MemoryPlan> sequential_plan(const ir::Model& model,
                                            const std::map<std::string, ir::Tensor>& inputs,
                                            bool io_in_arena = false, size_t alignment = 256);

}  // namespace xopt::exec
