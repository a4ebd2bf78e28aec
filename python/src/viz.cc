// xopt._xopt.viz_*: the drawings xviz writes, through the same library calls (viz/commands.h),
// with the GIL released; errors raise what xviz exits with (1 for a usage error, 2 otherwise).
#include "python/src/viz.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <string>
#include <vector>

#include "python/src/errors.h"
#include "viz/commands.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace xopt::python {
namespace {

// Checks the output's extension, then runs `draw` without the GIL.
void draw(const std::string& command, const std::string& out, const std::function<Status()>& fn) {
  if (Status st = viz::check_output_extension(command, out); !st.is_ok())
    raise_error(1, st.message() + " (see xviz --help)", error_code_name(st.code()));
  Status st = Status::ok();
  {
    nb::gil_scoped_release release;
    st = fn();
  }
  if (!st.is_ok()) raise_error(2, st.message(), error_code_name(st.code()));
}

}  // namespace

void bind_viz(nb::module_& m) {
  m.def(
      "viz_graph",
      [](const std::string& model, const std::string& out, int depth, bool weights) {
        draw("graph", out, [&] { return viz::write_graph_file(model, out, depth, weights); });
      },
      "model"_a, "out"_a, "collapse_depth"_a = -1, "show_weights"_a = false,
      "xviz graph MODEL -o OUT.");
  m.def(
      "viz_diff",
      [](const std::string& a, const std::string& b, const std::string& out) {
        draw("diff", out, [&] { return viz::write_diff_file(a, b, out); });
      },
      "a"_a, "b"_a, "out"_a, "xviz diff A B -o OUT.");
  m.def(
      "viz_timeline",
      [](const std::string& model, const std::string& out, const std::vector<int64_t>& batches) {
        draw("timeline", out, [&] { return viz::write_timeline_file(model, out, batches); });
      },
      "model"_a, "out"_a, "batches"_a = std::vector<int64_t>{}, "xviz timeline MODEL -o OUT.");
  m.def(
      "viz_breakdown",
      [](const std::vector<std::string>& models, const std::string& out,
         const std::vector<int64_t>& batches) {
        for (int64_t b : batches)
          if (b < 1)
            raise_error(1,
                        "--batch: " + std::to_string(b) + " is not a batch size (see xviz --help)",
                        "invalid argument");
        draw("breakdown", out, [&] { return viz::write_breakdown_file(models, out, batches); });
      },
      "models"_a, "out"_a, "batches"_a = std::vector<int64_t>{}, "xviz breakdown MODEL... -o OUT.");
}

}  // namespace xopt::python
