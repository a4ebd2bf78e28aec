// The one kernel registry template both executors use (executor/kernel_registry.h): lookup by
// domain, op type and opset range. The CUDA executor's instance is checked in tests/cuda.
#include "executor/kernel_registry.h"

#include <gtest/gtest.h>

#include "executor/cpu/kernel.h"

namespace xopt::exec {
namespace {

struct FakeDef {
  std::string domain;
  std::string op_type;
  int since_version;
  int until_version;
  int id;
};

TEST(KernelRegistryOf, FindsByDomainOpAndOpsetRange) {
  KernelRegistryOf<FakeDef> r;
  r.add({"", "Relu", 6, 13, 1});
  r.add({"", "Relu", 14, 21, 2});
  r.add({"com.microsoft", "Relu", 1, 1, 3});
  r.add({"", "Relu", 14, 30, 4});  // covered by the earlier one: the first match wins
  ASSERT_EQ(r.all().size(), 4u);
  EXPECT_EQ(r.find("", "Relu", 6)->id, 1);
  EXPECT_EQ(r.find("", "Relu", 13)->id, 1);
  EXPECT_EQ(r.find("", "Relu", 14)->id, 2);
  EXPECT_EQ(r.find("ai.onnx", "Relu", 21)->id, 2);  // the default domain by its name
  EXPECT_EQ(r.find("", "Relu", 22)->id, 4);
  EXPECT_EQ(r.find("com.microsoft", "Relu", 1)->id, 3);
  EXPECT_EQ(r.find("", "Relu", 5), nullptr);
  EXPECT_EQ(r.find("", "Relu", 31), nullptr);
  EXPECT_EQ(r.find("", "Sigmoid", 13), nullptr);
  EXPECT_EQ(r.find("com.microsoft", "Relu", 2), nullptr);
}

TEST(KernelRegistryOf, TheCpuExecutorsKernelsAreOneInstance) {
  // Every XOPT_CPU_KERNEL registration landed in the one global registry.
  EXPECT_EQ(&KernelRegistry::global(), &KernelRegistryOf<KernelDef>::global());
  const KernelDef* relu = KernelRegistry::global().find("", "Relu", 14);
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->op_type, "Relu");
  EXPECT_EQ(KernelRegistry::global().find("", "NoSuchOp", 14), nullptr);
}

}  // namespace
}  // namespace xopt::exec
