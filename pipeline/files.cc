#include "pipeline/files.h"

#include <filesystem>

namespace xopt::pipeline {

namespace fs = std::filesystem;

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

Status in_file(const Status& st, const std::string& file) {
  if (st.is_ok() || file.empty() || st.message().rfind(file, 0) == 0) return st;
  return st.with_context(file + ": ");
}

Status create_folder(const std::string& dir) {
  if (dir.empty()) return Status::ok();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return invalid_argument(dir + ": cannot create: " + ec.message());
  return Status::ok();
}

}  // namespace xopt::pipeline
