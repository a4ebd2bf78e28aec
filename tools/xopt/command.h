// Plumbing shared by xopt's subcommands: registration, exit codes and one-line error reporting.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "pipeline/parse.h"

namespace xopt::tool {

// Exit codes: 0 ok, 1 usage, 2 bad model (or unreadable / unwritable file), 3 a pass failed.
enum ExitCode { kExitOk = 0, kExitUsage = 1, kExitBadModel = 2, kExitPassFailed = 3 };

// A subcommand: `setup` adds its options to `sub` and returns the function that runs it once the
// command line is parsed (returning the exit code).
struct Subcommand {
  std::string name;
  std::string description;
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Subcommand>& subcommands();

struct SubcommandRegistration {
  explicit SubcommandRegistration(Subcommand c) { subcommands().push_back(std::move(c)); }
};

// In a subcommand's file: XOPT_SUBCOMMAND("validate", "compares two models' outputs", setup_fn);
#define XOPT_SUBCOMMAND(name, description, setup)                \
  static const ::xopt::tool::SubcommandRegistration XOPT_CONCAT( \
      xopt_subcmd_, __LINE__)({name, description, setup})

// Prints "xopt: error: <message>" as one line on stderr (newlines inside become "; ") and returns
// `code`. `file`, when given and not already at the start of the message, is prefixed.
int report_error(int code, const std::string& message, const std::string& file = "");
// The line report_error prints after "xopt: error: ": `file` prefixed unless the message starts
// with it, newlines joined with "; " (the Python package raises it).
std::string error_line(const std::string& message, const std::string& file = "");
// The exit code for a library error: usage for bad arguments, pass failure for kPassFailed, bad
// model for everything else.
int exit_code_for(const Status& status);
int report(const Status& status, const std::string& file = "");

// "64", "4KiB", "1MiB", "2GiB", "1.5MB" -> bytes (pipeline/parse.h).
using pipeline::parse_size;

}  // namespace xopt::tool

namespace xopt::tool {
// The default command (no subcommand): optimize one model. Adds its options to the top-level app.
std::function<int()> setup_optimize(CLI::App& app);
// The whole command line (`argv[0]` is the program name): parses, runs and returns the exit code.
// Prints like the executable (results on stdout, one-line errors on stderr) and never exits.
int run_cli(int argc, char** argv);
}  // namespace xopt::tool
