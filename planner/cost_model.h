// A roofline estimate of each node's GPU time, for schedules that must guess how long compute
// takes before anything has run (parameter offload: how far ahead a weight's copy must start to be
// hidden behind compute). A node costs one launch plus the larger of its arithmetic time and its
// memory time; a profile run (`xopt bench --profile`) replaces the estimate where one exists.
//
//   time(node) = launch + max(flops / flops_per_ms, bytes / bytes_per_ms)
//
// FLOPs are counted for the ops that dominate real models (convolutions, GEMMs and MatMuls,
// attention); every other op is memory-bound: the bytes of its inputs and outputs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace xopt::planner {

// What the estimate assumes of the device. The defaults are an H200 in fp32 with TF32 off, at
// the fractions of peak our kernels reach on ResNet-50 and BERT-base (bench/gpu/README.md):
// 30 of 67 TFLOP/s, 2.5 of 4.8 TB/s, 4 us per launch; and a host-to-device copy from pinned
// memory at 25 GB/s (PCIe Gen5 x16 reaches 50-55 in one direction, shared with everything else).
struct DeviceModel {
  double flops_per_ms = 30e9;
  double bytes_per_ms = 2.5e9;
  double launch_ms = 0.004;
  double h2d_bytes_per_ms = 25e6;
  std::string h2d_source = "default (25 GB/s)";  // or "measured on <device>"
};

// Floating-point operations of one node at its static shapes (0 for memory-bound ops and for
// nodes whose shapes are not static).
double node_flops(const ir::Node& node);
// Bytes a node reads and writes (its inputs' and outputs' tensors at static shapes).
double node_bytes(const ir::Node& node);
// The roofline time of each node of `order`, in milliseconds.
std::vector<double> estimate_node_ms(const std::vector<const ir::Node*>& order,
                                     const DeviceModel& device = {});

}  // namespace xopt::planner
