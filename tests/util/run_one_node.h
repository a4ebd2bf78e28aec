// Running one kernel by hand: the single node of a model in ONNX text, with inputs given in the
// node's input order, straight through the CPU kernel registry (no planning, no session).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "executor/cpu/kernel.h"
#include "ir/text.h"

namespace xopt::test {

// Runs the single node of the model `text` with `inputs` (an empty Tensor stands for an omitted
// input) and returns its outputs. With `status` the kernel's status is stored there; without, a
// failing kernel is a test failure.
inline std::vector<ir::Tensor> run_one(const std::string& text,
                                       const std::vector<ir::Tensor>& inputs,
                                       Status* status = nullptr) {
  auto model = ir::parse_model_text(text);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  if (!model.is_ok()) return {};
  const ir::Node* node = *model->graph->nodes().begin();
  const exec::KernelDef* k =
      exec::KernelRegistry::global().find(node->domain(), node->op_type(), node->opset());
  EXPECT_NE(k, nullptr) << node->op_type();
  if (k == nullptr) return {};
  std::vector<const ir::Tensor*> ins;
  ins.reserve(inputs.size());
  for (const auto& t : inputs) ins.push_back(t.empty() ? nullptr : &t);
  std::vector<ir::Tensor> outs(node->num_outputs());
  exec::KernelContext ctx(*node, ins, &outs, nullptr);
  Status s = k->fn(ctx);
  if (status != nullptr)
    *status = s;
  else
    EXPECT_TRUE(s.is_ok()) << s.message();
  return outs;
}

// The elements of `t` as a vector of T.
template <typename T>
std::vector<T> values(const ir::Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

}  // namespace xopt::test
