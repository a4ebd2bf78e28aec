// The `mixed` choice: float16, bfloat16 or fp32 per node, from one calibration run (calibrate.h)
// and each node's local error (local_error.h), under an error budget on the outputs, with a cost
// model that counts the Casts each choice adds. Nothing re-runs the model.
//
// Error model. Errors are relative RMS errors, ||y_low - y|| / ||y|| over a tensor's elements. A
// node in type t adds its local error e(t) and, to first order, relative errors pass through later
// nodes unchanged (gain 1: true of linear ops, normalizations and activations of slope <= 1).
// Rounding errors of different nodes are taken as independent, so at graph output o the estimate
// is
//     E(o) = sqrt( sum over low-precision nodes n that reach o of e_n^2 )
// and the budget is E(o) <= max_error for every output. An output within relative RMS error E of
// fp32 has cosine >= sqrt(1 - E^2) against it, whatever the error's direction: the default budget
// 1e-2 (1% RMS) means cosine >= 0.99995, twenty times closer to 1 than the 0.999 the converted
// models are held to (that bar is E = 4.5e-2). In float16 a node's local error is typically
// 3e-4..6e-4, so about three hundred nodes fit the default budget; in bfloat16 (8 bits) it is
// 2e-3..5e-3, so a handful do, and bfloat16 is taken only where float16's range does not fit. It is
// an estimate, not a bound (a softmax of large logits or a cancelling subtraction has gain above
// 1; the local error is carried a few nodes downstream to catch those): the accuracy report (xopt
// validate) measures the converted model afterwards.
//
// Cost model (bytes moved, the memory-bound view of inference): a node in type t reads and writes
// its float inputs and outputs at t's size (weights are stored converted); every value whose
// producer and a consumer differ in type needs one Cast, shared by the consumers of that type,
// which reads the value in one type and writes it in the other, plus `cast_overhead_bytes` for the
// launch. Graph inputs and outputs stay fp32 (keep-io-types).
//
// Search. (1) Each node allowed by the rules whose values fit the type (max |x| * range_margin
// within the type's max, at most `underflow_share` of an activation's non-zero values subnormal)
// starts in the low type with the smaller local error. (2) While an output's estimate is over the
// budget, the low-precision node with the largest error that reaches it goes back to fp32. (3)
// Until nothing changes: a connected group of low-precision nodes that costs at least as much as
// fp32 (its Casts outweigh what it saves) goes back to fp32, as does a single node whose return
// saves bytes; an fp32 node that fits the budget and saves bytes in its low type takes it. Each
// step lowers the cost or reverts at equal cost, so the search ends.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "passes/precision/precision_options.h"
#include "precision/calibrate.h"
#include "precision/local_error.h"

namespace xopt::precision {

// What the rules (the precision pass's analysis, the user's --keep-fp32 / --force-lowp) allow for
// one node. A node the map does not name may take either type.
struct NodeRule {
  bool fp16 = true;
  bool bf16 = true;
  bool user_keep_fp32 = false;   // --keep-fp32 named it
  bool user_force_lowp = false;  // --force-lowp named it: low precision whatever the budget
  std::string rule;              // which rule decided, when it forbids a type ("" otherwise)
};
using NodeRules = std::map<std::string, NodeRule, std::less<>>;

struct ChooseOptions {
  // The budget on each output's estimated relative RMS error (above).
  double max_error = 1e-2;
  // A value fits a type when max |x| * range_margin <= the type's largest finite value: the
  // calibration data may not hold the largest input the model will see.
  double range_margin = 2.0;
  // A node stays out of float16 when more than this share of the non-zero values of one of its
  // activations (inputs and outputs that are not constants) is subnormal.
  double underflow_share = 0.01;
  double cast_overhead_bytes = 0.0;
};

struct NodeDecision {
  std::string node;  // node_key (local_error.h)
  std::string op_type;
  ir::DType dtype = ir::DType::kFloat;
  // Why: "rule", "user", "range", "not-measured", "local-error" (alone over the budget), "budget",
  // "cast-cost", "chosen" (low precision); `reason` says it in words with the figures.
  std::string kind;
  std::string reason;
  double max_abs = 0.0;  // largest |x| of its float inputs and outputs in the calibration run
  double min_nonzero_abs = 0.0;
  double fp16_saturate_share = 0.0;  // of its float inputs and outputs, the worst value's share
  double fp16_subnormal_share = 0.0;
  double headroom = 0.0;  // the chosen type's largest value / max_abs (inf when max_abs is 0)
  LocalError local;
};

struct ChoiceReport {
  double max_error = 0.0;
  std::vector<NodeDecision> nodes;                // graph order, nodes with a float output
  std::map<std::string, double> output_estimate;  // E(o) per graph output
  double bytes_fp32 = 0.0;                        // the cost model's figure with every node in fp32
  double bytes_chosen = 0.0;                      // and with the choice
  int casts = 0;                                  // Casts the choice adds
  std::vector<std::string> notes;                 // where the calibration data came from

  int count(ir::DType t) const;
};

// The choice for `graph`, whose values `calibration` measured.
ChoiceReport choose_precision(const ir::Graph& graph, const Calibration& calibration,
                              const std::map<std::string, LocalError, std::less<>>& local,
                              const NodeRules& rules, const ChooseOptions& options);

// The nodes the report puts in float16 or bfloat16.
passes::PrecisionChoice to_choice(const ChoiceReport& report);

// The report as JSON (format "xopt.precision_choice", version 1).
nlohmann::json choice_json(const ChoiceReport& report);

}  // namespace xopt::precision
