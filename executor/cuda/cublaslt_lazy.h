// cuBLASLt is loaded on first use, not at program start: the executor calls the cublasLt* functions
// as usual and executor/cuda/cublaslt_lazy.cc defines them, each forwarding to the library it opens
// (dlopen) the first time one is called. Loading libcublasLt maps and relocates ~150 MiB, which
// every `xopt` run paid even without --device cuda (issue 15: peak memory of fold,fuse,plan).
#pragma once

#include "common/status.h"

namespace xopt::cuda {

// Opens cuBLASLt if it is not open yet; an error names the library and why it cannot be loaded.
Status load_cublaslt();

}  // namespace xopt::cuda
