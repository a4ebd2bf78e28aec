// The one "open a library and look up these symbols" helper the driver, NVML and cuBLASLt loaders
// share (executor/cuda/dynamic_library.h). CPU only: the C library stands in for theirs.
#include "executor/cuda/dynamic_library.h"

#include <gtest/gtest.h>

#include <cstddef>

namespace xopt::cuda {
namespace {

TEST(CudaDynamicLibrary, FindsSymbolsOfAnOpenLibrary) {
  const DynamicLibrary libc("libc.so.6");
  ASSERT_TRUE(libc.is_open()) << libc.error();
  EXPECT_EQ(libc.error(), "");
  EXPECT_EQ(libc.name(), "libc.so.6");
  size_t (*len)(const char*) = nullptr;
  ASSERT_TRUE(libc.find("strlen", &len));
  EXPECT_EQ(len("xopt"), 4u);
  int (*none)() = reinterpret_cast<int (*)()>(1);
  EXPECT_FALSE(libc.find("xopt_no_such_symbol", &none));
  EXPECT_EQ(none, nullptr);
}

TEST(CudaDynamicLibrary, AMissingLibrarySaysWhyAndFindsNothing) {
  const DynamicLibrary missing("libxopt-no-such-library.so.7");
  EXPECT_FALSE(missing.is_open());
  EXPECT_NE(missing.error().find("libxopt-no-such-library.so.7"), std::string::npos)
      << missing.error();
  size_t (*len)(const char*) = nullptr;
  EXPECT_FALSE(missing.find("strlen", &len));
  EXPECT_EQ(len, nullptr);
  EXPECT_EQ(missing.address("strlen"), nullptr);
}

}  // namespace
}  // namespace xopt::cuda
