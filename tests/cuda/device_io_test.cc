// Session::run_device: a model runs on tensors the caller already holds on the GPU (what the Python
// package does with a PyTorch CUDA tensor through DLPack): inputs copied device-to-device into
// their planned slots, outputs device-to-device into the caller's buffers, no byte through the
// host. The CPU twin states the outputs; the GPU half checks them, that no host transfer was
// counted, that the staged run() gives the same bits, and that bad buffers are refused by name.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>

#include "executor/cpu/session.h"
#include "executor/cuda/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/planner.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"

namespace xopt::cuda {
namespace {

// Two inputs (one int64), two outputs of different types and shapes.
constexpr const char* kModel = R"(<ir_version: 8, opset_import: ["" : 17]>
  g (float[4,8] x, int64[4] idx) => (float[4,8] y, float[4] z) {
    s = Add(x, x)
    y = Relu(s)
    t = Gather <axis = 1> (y, idx)
    axes = Constant <value = int64[1] {1}> ()
    u = ReduceSum <keepdims = 0> (t, axes)
    zz = Mul(u, u)
    z = Identity(zz)
  })";

struct Planned {
  ir::Model model;
  planner::MemoryPlan plan;
  std::map<std::string, ir::Tensor> inputs;
  std::vector<ir::Tensor> cpu;  // the expectation: y, z
};

Planned make() {
  Planned p;
  auto parsed = ir::parse_model_text(kModel);
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  p.model = std::move(parsed).value();
  EXPECT_TRUE(ir::infer_shapes(*p.model.graph).is_ok());
  p.plan = planner::plan(*p.model.graph).value();
  p.inputs["x"] = test::random_inputs(*p.model.graph).at("x");
  p.inputs["idx"] = ir::Tensor::of<int64_t>({4}, {7, 0, 3, 3});
  exec::RunOptions ro;
  ro.plan = &p.plan;
  auto out = exec::run_model(p.model, p.inputs, ro);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (out.is_ok()) p.cpu = *out;
  return p;
}

// Device memory freed at scope exit.
struct DeviceBytes {
  void* p = nullptr;
  explicit DeviceBytes(size_t n) { EXPECT_EQ(cudaMalloc(&p, n), cudaSuccess); }
  ~DeviceBytes() { cudaFree(p); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
};

TensorRef ref(const std::string& name, const ir::Tensor& like, void* data) {
  return {name, like.dtype(), like.dims(), data};
}

TEST(CudaDeviceIo, DeviceTensorsInAndOutWithoutTheHost) {
  Planned p = make();
  // The CPU twin: y = relu(2x), z[i] = (sum_j y[i, idx[j]])^2.
  ASSERT_EQ(p.cpu.size(), 2u);
  ASSERT_EQ(p.cpu[1].dims(), (std::vector<int64_t>{4}));
  const float* x = p.inputs["x"].data<float>();
  const float* z = p.cpu[1].data<float>();
  for (int i = 0; i < 4; ++i) {
    float sum = 0;
    for (int64_t j : {7, 0, 3, 3}) sum += std::max(0.f, 2 * x[i * 8 + j]);
    EXPECT_NEAR(z[i], sum * sum, 1e-4 * std::max(1.f, sum * sum)) << i;
  }
  XOPT_REQUIRE_GPU();
  for (bool graph : {true, false}) {
    SessionOptions so;
    so.use_graph = graph;
    auto s = Session::create(p.model, p.plan, so);
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    const std::vector<IoSpec> outs = (*s)->output_specs();
    ASSERT_EQ(outs.size(), 2u);
    EXPECT_EQ(outs[0].name, "y");
    EXPECT_EQ(outs[1].dims, (std::vector<int64_t>{4}));
    DeviceBytes dx(p.inputs["x"].nbytes()), didx(p.inputs["idx"].nbytes());
    DeviceBytes dy(outs[0].nbytes()), dz(outs[1].nbytes());
    ASSERT_EQ(
        cudaMemcpy(dx.p, p.inputs["x"].raw_data(), p.inputs["x"].nbytes(), cudaMemcpyHostToDevice),
        cudaSuccess);
    ASSERT_EQ(cudaMemcpy(didx.p, p.inputs["idx"].raw_data(), p.inputs["idx"].nbytes(),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    cudaStream_t caller = nullptr;
    ASSERT_EQ(cudaStreamCreate(&caller), cudaSuccess);
    for (void* stream : {static_cast<void*>(nullptr), static_cast<void*>(caller)}) {
      std::vector<ir::Tensor> got = {ir::Tensor(outs[0].dtype, outs[0].dims),
                                     ir::Tensor(outs[1].dtype, outs[1].dims)};
      ASSERT_EQ(cudaMemset(dy.p, 0xff, outs[0].nbytes()), cudaSuccess);  // NaN until written
      RunTiming timing;
      Status st =
          (*s)->run_device({ref("idx", p.inputs["idx"], didx.p), ref("x", p.inputs["x"], dx.p)},
                           {ref("y", got[0], dy.p), ref("z", got[1], dz.p)}, stream, &timing);
      ASSERT_TRUE(st.is_ok()) << st.message();
      EXPECT_EQ((*s)->host_transfer_bytes(), 0u) << "a device tensor went through the host";
      EXPECT_GT(timing.gpu_ms, 0.f);
      ASSERT_EQ(
          cudaMemcpy(got[0].mutable_raw_data(), dy.p, outs[0].nbytes(), cudaMemcpyDeviceToHost),
          cudaSuccess);
      ASSERT_EQ(
          cudaMemcpy(got[1].mutable_raw_data(), dz.p, outs[1].nbytes(), cudaMemcpyDeviceToHost),
          cudaSuccess);
      EXPECT_EQ(test::outputs_difference(got, p.cpu), "") << "graph " << graph;
    }
    cudaStreamDestroy(caller);
    // The staged run gives the same bits, and counts what it moved through the host.
    auto staged = (*s)->run(p.inputs);
    ASSERT_TRUE(staged.is_ok()) << staged.status().message();
    EXPECT_EQ((*s)->host_transfer_bytes(), p.inputs["x"].nbytes() + p.inputs["idx"].nbytes() +
                                               outs[0].nbytes() + outs[1].nbytes());
    std::vector<ir::Tensor> again = {ir::Tensor(outs[0].dtype, outs[0].dims),
                                     ir::Tensor(outs[1].dtype, outs[1].dims)};
    // Host buffers work too (pageable memory, copied by CUDA's unified addressing).
    Status st = (*s)->run_device(
        {ref("x", p.inputs["x"], const_cast<void*>(p.inputs["x"].raw_data())),
         ref("idx", p.inputs["idx"], const_cast<void*>(p.inputs["idx"].raw_data()))},
        {ref("y", again[0], again[0].mutable_raw_data()),
         ref("z", again[1], again[1].mutable_raw_data())});
    ASSERT_TRUE(st.is_ok()) << st.message();
    for (size_t i = 0; i < 2; ++i)
      EXPECT_EQ(std::memcmp(again[i].raw_data(), (*staged)[i].raw_data(), again[i].nbytes()), 0)
          << i;
  }
}

TEST(CudaDeviceIo, BadBuffersAreRefusedByName) {
  Planned p = make();
  ASSERT_EQ(p.cpu.size(), 2u);  // the twin: the model plans and runs
  XOPT_REQUIRE_GPU();
  auto s = Session::create(p.model, p.plan);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  DeviceBytes dx(p.inputs["x"].nbytes()), didx(p.inputs["idx"].nbytes()), dy(128), dz(16);
  const std::vector<TensorRef> outs = {{"y", ir::DType::kFloat, {4, 8}, dy.p},
                                       {"z", ir::DType::kFloat, {4}, dz.p}};
  auto message = [&](const std::vector<TensorRef>& in, const std::vector<TensorRef>& out) {
    Status st = (*s)->run_device(in, out);
    return st.is_ok() ? std::string("accepted") : st.message();
  };
  const TensorRef x{"x", ir::DType::kFloat, {4, 8}, dx.p},
      idx{"idx", ir::DType::kInt64, {4}, didx.p};
  EXPECT_EQ(message({x, idx}, outs), "accepted");
  EXPECT_NE(message({x}, outs).find("input 'idx' is not given"), std::string::npos);
  EXPECT_NE(
      message({x, idx, {"w", ir::DType::kFloat, {1}, dx.p}}, outs).find("'w' is not an input"),
      std::string::npos);
  EXPECT_NE(message({x, x, idx}, outs).find("given twice"), std::string::npos);
  EXPECT_NE(message({{"x", ir::DType::kFloat, {4, 7}, dx.p}, idx}, outs).find("dim 1 is 7, not 8"),
            std::string::npos);
  EXPECT_NE(
      message({{"x", ir::DType::kDouble, {4, 8}, dx.p}, idx}, outs).find("input 'x' is double"),
      std::string::npos);
  EXPECT_NE(message({x, idx}, {outs[0]}).find("1 output buffers for 2 graph outputs"),
            std::string::npos);
  EXPECT_NE(message({x, idx}, {outs[1], outs[0]}).find("output 'y'"), std::string::npos);
  EXPECT_NE(message({x, {"idx", ir::DType::kInt64, {4}, nullptr}}, outs).find("'idx' has no data"),
            std::string::npos);
}

}  // namespace
}  // namespace xopt::cuda
