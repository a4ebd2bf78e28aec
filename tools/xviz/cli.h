// The xviz command line as a function: the executable and the Python package (xopt.viz) call it.
#pragma once

namespace xopt::viz {

// Parses `argv` (argv[0] is the program name), draws, writes the output file and returns the exit
// code (0 ok, 1 usage, 2 bad model or unwritable file). Prints like the executable; never exits.
int run_cli(int argc, char** argv);

}  // namespace xopt::viz
