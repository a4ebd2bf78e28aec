// printf into a std::string (no length limit), for the libraries that build text.
#pragma once

#include <string>

namespace xopt {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace xopt
