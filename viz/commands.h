// The files xviz writes, as library calls: read the model(s), draw, write the output. `xviz` and
// the Python package's xopt.viz both call them, so both write the same bytes. `step`, when given,
// hears each long step ("reading m.onnx", "laying out and rendering 120 nodes", ...). Errors come
// back as a Status naming the file; nothing is printed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace xopt::viz {

using StepObserver = std::function<void(const std::string& step)>;

// The output's extension is one the subcommand ("graph", "diff", "timeline", "breakdown")
// writes; else an invalid argument saying which it writes.
Status check_output_extension(const std::string& command, const std::string& out);

// xviz graph MODEL -o OUT [--collapse-depth N] [--show-weights]
Status write_graph_file(const std::string& model, const std::string& out, int collapse_depth,
                        bool show_weights, const StepObserver& step = {});
// xviz timeline MODEL -o OUT [--batch ...]
Status write_timeline_file(const std::string& model, const std::string& out,
                           const std::vector<int64_t>& batches, const StepObserver& step = {});
// xviz diff A B -o OUT
Status write_diff_file(const std::string& a, const std::string& b, const std::string& out,
                       const StepObserver& step = {});
// xviz breakdown MODEL... -o OUT [--batch ...]
Status write_breakdown_file(const std::vector<std::string>& models, const std::string& out,
                            const std::vector<int64_t>& batches, const StepObserver& step = {});

}  // namespace xopt::viz
