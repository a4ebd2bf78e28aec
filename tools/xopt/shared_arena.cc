#include "tools/xopt/shared_arena.h"

#include <cstdio>

namespace xopt::tool {

void print_shared_arena(const pipeline::SharedArenaOutcome& g, bool quiet) {
  std::fputs(g.text.c_str(), stdout);
  if (quiet) return;
  for (const std::string& path : g.written) std::printf("wrote %s\n", path.c_str());
}

}  // namespace xopt::tool
