// The sliding-window geometry of Conv, ConvTranspose and the pools, shared by both executors (the
// CPU reference's nn_util.h and the CUDA kernels' conv_util.h wrap window_of with their node
// context): kernel_shape, strides, dilations, pads and auto_pad read from the node, and the output
// spatial dims per the ONNX spec.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/dims_string.h"
#include "ir/graph.h"

namespace xopt::exec {

// Geometry of a sliding window over the spatial dims of an [N, C, D1, ..., Dr] tensor.
struct Window {
  std::vector<int64_t> kernel;     // r
  std::vector<int64_t> strides;    // r
  std::vector<int64_t> dilations;  // r
  std::vector<int64_t> pads;       // 2r: begins then ends
  std::vector<int64_t> in;         // r input spatial dims
  std::vector<int64_t> out;        // r output spatial dims
  size_t rank() const { return kernel.size(); }
  int64_t extent(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
  bool symmetric() const {
    for (size_t i = 0; i < rank(); ++i)
      if (pads[i] != pads[i + rank()]) return false;
    return true;
  }
};

namespace window_detail {

// Output dim i (and, for SAME_*, its pads) under `auto_pad`; false for an unknown auto_pad.
inline bool output_dim(Window& w, size_t i, const std::string& auto_pad, bool ceil_mode) {
  const size_t r = w.rank();
  const int64_t ext = w.extent(i);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    w.out[i] = (w.in[i] + w.strides[i] - 1) / w.strides[i];
    const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.strides[i] + ext - w.in[i]);
    const int64_t small = total / 2;
    w.pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
    w.pads[i + r] = total - w.pads[i];
  } else if (auto_pad == "VALID") {
    w.pads[i] = w.pads[i + r] = 0;
    w.out[i] = w.in[i] >= ext ? (w.in[i] - ext) / w.strides[i] + 1 : 0;
  } else if (auto_pad == "NOTSET" || auto_pad.empty()) {
    const int64_t span = w.in[i] + w.pads[i] + w.pads[i + r] - ext;
    if (span < 0) {
      w.out[i] = 0;
    } else if (ceil_mode) {
      w.out[i] = (span + w.strides[i] - 1) / w.strides[i] + 1;
      // The last window must start inside the input or its left padding.
      if ((w.out[i] - 1) * w.strides[i] >= w.in[i] + w.pads[i]) --w.out[i];
    } else {
      w.out[i] = span / w.strides[i] + 1;
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace window_detail

// The window `node` slides over an input of `x_dims`: kernel_shape (or `kernel` when the
// attribute is absent), strides, dilations (all 1 unless `use_dilations`), pads and auto_pad.
// `ceil_mode` is the pooling flag (false for Conv). Errors are invalid-model errors whose message
// says what is wrong, without the node (the executors' contexts add it).
inline Result<Window> window_of(const ir::Node& node, const std::vector<int64_t>& x_dims,
                                std::vector<int64_t> kernel, bool ceil_mode,
                                bool use_dilations = true) {
  if (x_dims.size() < 3)
    return invalid_model("input must have rank >= 3 ([N, C, spatial...]), got rank " +
                         std::to_string(x_dims.size()) + " (" + ir::dims_string(x_dims) + ")");
  const size_t r = x_dims.size() - 2;
  Window w;
  w.in.assign(x_dims.begin() + 2, x_dims.end());
  if (node.has_attr("kernel_shape")) kernel = node.attr_ints("kernel_shape");
  if (kernel.size() != r)
    return invalid_model("kernel_shape has " + std::to_string(kernel.size()) +
                         " dims but the input has " + std::to_string(r) + " spatial dims");
  w.kernel = kernel;
  w.strides = node.attr_ints("strides", std::vector<int64_t>(r, 1));
  w.dilations = use_dilations ? node.attr_ints("dilations", std::vector<int64_t>(r, 1))
                              : std::vector<int64_t>(r, 1);
  w.pads = node.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (w.strides.size() != r || w.dilations.size() != r || w.pads.size() != 2 * r)
    return invalid_model("strides/dilations/pads do not match the " + std::to_string(r) +
                         " spatial dims of the input");
  for (size_t i = 0; i < r; ++i) {
    if (w.strides[i] < 1 || w.dilations[i] < 1 || w.kernel[i] < 1)
      return invalid_model("kernel_shape, strides and dilations must be positive");
    if (w.pads[i] < 0 || w.pads[i + r] < 0) return invalid_model("pads must be non-negative");
  }
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  w.out.resize(r);
  for (size_t i = 0; i < r; ++i)
    if (!window_detail::output_dim(w, i, auto_pad, ceil_mode))
      return invalid_model("unknown auto_pad '" + auto_pad + "'");
  return w;
}

}  // namespace xopt::exec
