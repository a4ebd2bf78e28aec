// The text the front ends take (the command line's flags, the Python package's keywords) turned
// into values, with the error messages both show.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace xopt::pipeline {

// "64", "4KiB", "1MiB", "2GiB", "1.5MB" -> bytes.
Result<size_t> parse_size(const std::string& text);

// "a,b" given once or repeated -> {"a", "b"} (empty items dropped).
std::vector<std::string> split_list(const std::vector<std::string>& items);

}  // namespace xopt::pipeline
