// xviz: draws ONNX graphs, graph diffs, memory timelines and breakdowns (tools/xviz/cli.cc).
#include "tools/xviz/cli.h"

int main(int argc, char** argv) {
  return xopt::viz::run_cli(argc, argv);
}
