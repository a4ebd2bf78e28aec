// Running a node's subgraph attribute (If, Loop, Scan, SequenceMap, FlexAttention's modifiers) in
// the CPU executor: in simple mode, the body's values in their own buffers outside any arena (only
// the node's outputs land in the plan; planner/README.md, "Control flow"). Outer-scope values reach
// the body as the extra inputs ir::load_subgraph declares for them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cpu/kernel.h"
#include "executor/cpu/value.h"
#include "ir/subgraph.h"

namespace xopt::exec {

// How the executor loads a subgraph: outer reads untyped, declared input shapes dropped (the
// node's values decide them at run time).
ir::SubgraphOptions subgraph_exec_options();

// Adds the outer-scope values `sg` reads, by name, from the node's implicit inputs.
Status add_outer_values(const KernelContext& ctx, const ir::Subgraph& sg,
                        std::map<std::string, ExecValue>& ins);

// Runs `sg` on `ins` (formal and outer inputs by name) with the executor's intra-op threads; an
// error names the node and the subgraph.
Result<std::vector<ExecValue>> run_body_values(const KernelContext& ctx, const ir::Subgraph& sg,
                                               const std::map<std::string, ExecValue>& ins);

}  // namespace xopt::exec
