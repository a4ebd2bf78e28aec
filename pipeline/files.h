// Small file helpers the pipeline's phases share.
#pragma once

#include <string>

#include "common/status.h"

namespace xopt::pipeline {

// Whether the two paths name one file (also when neither exists yet).
bool same_file(const std::string& a, const std::string& b);
// `st` with "file: " prefixed unless its message already starts with `file` (as the tools print).
Status in_file(const Status& st, const std::string& file);
// Creates `dir` and its parents (nothing when empty); an invalid argument naming it when it cannot.
Status create_folder(const std::string& dir);

}  // namespace xopt::pipeline
