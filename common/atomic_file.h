// Writing an output file whole or not at all (issue 15): the bytes go to a file without a name in
// the destination's folder (O_TMPFILE), which is given its name only once every byte is written and
// flushed. A failure midway (a full disk, a write error) and a process killed midway both leave the
// destination as it was: no partial file, no temporary file. Where the filesystem has no O_TMPFILE,
// a named temporary beside the destination is used instead (removed on failure, left only if the
// process is killed).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "common/status.h"

namespace xopt {

// `write` streams the content and returns false on failure (its own errors); the stream's state is
// checked too. Errors name `path`.
Status write_file_atomically(const std::string& path,
                             const std::function<bool(std::ostream&)>& write);
Status write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace xopt
