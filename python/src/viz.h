// The drawings' bindings (viz_graph, viz_diff, viz_timeline, viz_breakdown) in xopt._xopt.
#pragma once

#include <nanobind/nanobind.h>

namespace xopt::python {

void bind_viz(nanobind::module_& m);

}  // namespace xopt::python
