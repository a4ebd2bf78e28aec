// The algorithms a `--tune` search chose on the GPU, kept in the model so that the next load takes
// them without searching: metadata "xopt.cuda_algorithms" = {"version": 1, "device": "<the GPU,
// driver, CUDA and cuDNN it was tuned on>", "nodes": {"<planner::node_key>": "<choice>"}}. A
// choice is the kernel's own words ("6:1": cuDNN algorithm 6, math type 1); the kernel checks it
// is still a valid candidate at load (another GPU or cuDNN may not offer it) and searches again
// otherwise. The memory plan stays device-neutral: the workspace these choices need is already in
// it (planning with --device cuda measures it).
#pragma once

#include <map>
#include <string>

#include "common/status.h"
#include "ir/graph.h"

namespace xopt::pipeline {

inline constexpr const char* kAlgorithmChoicesKey = "xopt.cuda_algorithms";

struct AlgorithmChoices {
  std::string device;                        // DeviceInfo::summary() of the GPU tuned on
  std::map<std::string, std::string> nodes;  // node key -> choice
};

void write_algorithm_choices(ir::Model& model, const AlgorithmChoices& choices);
// The stored choices; none (empty) when the model has no such metadata. A malformed document is
// an error naming the key and what is wrong.
Result<AlgorithmChoices> read_algorithm_choices(const ir::Model& model);

}  // namespace xopt::pipeline
