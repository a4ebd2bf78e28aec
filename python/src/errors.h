// Raising the package's exceptions (xopt._errors) from C++: one class per category of the
// command line's exit code, carrying its one-line message and the Status's category.
#pragma once

#include <string>

#include "common/status.h"

namespace xopt::python {

// Raises xopt._errors.error_for(code, message, status) (UsageError for 1, BadModelError for 2,
// PassFailedError for 3); `status` is the Status category's name ("" when there is none).
[[noreturn]] void raise_error(int code, const std::string& message, const std::string& status = "");
// The exception for a Status: its category picks the class, its message (with `file` prefixed
// as the command line prints it) is the exception's.
[[noreturn]] void raise_status(const Status& st, const std::string& file = "");

}  // namespace xopt::python
