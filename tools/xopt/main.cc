// xopt: optimizes ONNX models (tools/xopt/cli.cc parses the command line and dispatches).
#include "tools/xopt/command.h"

int main(int argc, char** argv) {
  return xopt::tool::run_cli(argc, argv);
}
