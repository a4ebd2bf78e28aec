// The pipeline library's bindings (optimize, the pass registry) in the module xopt._xopt.
#pragma once

#include <nanobind/nanobind.h>

namespace xopt::python {

void bind_pipeline(nanobind::module_& m);

}  // namespace xopt::python
