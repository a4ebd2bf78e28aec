#include "python/src/errors.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "tools/xopt/command.h"

namespace nb = nanobind;

namespace xopt::python {

void raise_error(int code, const std::string& message, const std::string& status) {
  nb::object factory = nb::module_::import_("xopt._errors").attr("error_for");
  nb::object exc = factory(code, message, status);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw nb::python_error();
}

void raise_status(const Status& st, const std::string& file) {
  raise_error(tool::exit_code_for(st), tool::error_line(st.message(), file),
              error_code_name(st.code()));
}

}  // namespace xopt::python
