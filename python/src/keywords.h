// Keyword arguments as the command line's flags ('_' for '-'), shared by the bindings that turn
// them into the pipeline's request structs.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "pipeline/device.h"

namespace xopt::python {

inline std::string text_of(const nanobind::handle& v) {
  return nanobind::cast<std::string>(nanobind::str(v));
}

// A list of strings from one value or a list of them.
inline std::vector<std::string> list_of(const nanobind::handle& v) {
  if (nanobind::isinstance<nanobind::str>(v)) return {nanobind::cast<std::string>(v)};
  std::vector<std::string> out;
  for (nanobind::handle item : v) out.push_back(text_of(item));
  return out;
}

// Sets the device field `key` names (device, tf32, tune, no_graph, max_workspace,
// min_workspace); false when `key` is none of them.
inline bool set_device_field(pipeline::DeviceFlags& d, const std::string& key,
                             const nanobind::handle& v) {
  if (key == "device") return (d.device = text_of(v), true);
  if (key == "tf32") return (d.tf32 = nanobind::cast<bool>(v), true);
  if (key == "tune") return (d.tune = nanobind::cast<bool>(v), true);
  if (key == "no_graph") return (d.no_graph = nanobind::cast<bool>(v), true);
  if (key == "max_workspace") return (d.max_workspace = text_of(v), true);
  if (key == "min_workspace") return (d.min_workspace = text_of(v), true);
  return false;
}

}  // namespace xopt::python
