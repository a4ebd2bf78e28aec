#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace xopt {

namespace fs = std::filesystem;

namespace {

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

// Streams into `stream_path` (already created) and checks every step.
Status fill(const std::string& path, const std::string& stream_path,
            const std::function<bool(std::ostream&)>& write) {
  std::ofstream out(stream_path, std::ios::binary | std::ios::trunc);
  if (!out) return io_error(path + ": cannot write: " + std::strerror(errno));
  errno = 0;
  const bool ok = write(out) && out.flush();
  const int err = errno;
  out.close();
  if (!ok || out.fail())
    return io_error(path + ": cannot write" +
                    (err != 0 ? std::string(": ") + std::strerror(err) : ""));
  return Status::ok();
}

}  // namespace

Status write_file_atomically(const std::string& path,
                             const std::function<bool(std::ostream&)>& write) {
  const fs::path dest(path);
  const std::string dir = dest.parent_path().empty() ? "." : dest.parent_path().string();
  const std::string tmp = path + unique_suffix();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd >= 0) {
    // Mode 0666 less the umask, as a plain create gives. No fsync: the guarantee is against
    // failures and kills, not power loss.
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    Status st = fill(path, self, write);
    if (st.is_ok() &&
        ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0)
      st = io_error(path + ": cannot create: " + std::strerror(errno));
    ::close(fd);
    if (!st.is_ok()) return st;  // the unnamed file goes away with its descriptor
  } else {
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT)
      return io_error(path + ": cannot create: " + std::strerror(errno));
    if (errno == ENOENT && !fs::is_directory(dir))
      return io_error(path + ": cannot create: " + std::strerror(ENOENT));
    Status st = fill(path, tmp, write);
    if (!st.is_ok()) {
      std::remove(tmp.c_str());
      return st;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return io_error(path + ": cannot write: " + std::strerror(err));
  }
  return Status::ok();
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
  return write_file_atomically(path, [&](std::ostream& os) {
    return static_cast<bool>(os.write(bytes.data(), static_cast<std::streamsize>(bytes.size())));
  });
}

}  // namespace xopt
