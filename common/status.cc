#include "common/status.h"

namespace xopt {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kInvalidModel: return "invalid model";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kPassFailed: return "pass failed";
    case ErrorCode::kMismatch: return "mismatch";
    case ErrorCode::kInternal: return "internal error";
  }
  return "error";
}

}  // namespace xopt
