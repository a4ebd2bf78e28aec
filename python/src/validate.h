// The validation library's binding (pipeline/validate.h) in the module xopt._xopt.
#pragma once

#include <nanobind/nanobind.h>

namespace xopt::python {

void bind_validate(nanobind::module_& m);

}  // namespace xopt::python
