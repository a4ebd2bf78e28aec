// Naive: one region per buffer, laid end to end.
#include "planner/strategies.h"

namespace xopt::planner {

Assignment assign_naive(const std::vector<Buffer>& buffers) {
  Assignment a;
  for (const Buffer& b : buffers) {
    a.offsets.push_back(a.arena);
    a.arena += b.size;
  }
  return a;
}

}  // namespace xopt::planner
