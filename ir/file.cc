// Reading user-named files safely (file.h).
#include "ir/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

// Closes a file descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

absl::Status OpenError(const std::string& path, absl::string_view what, int err) {
  const std::string message =
      absl::StrCat("cannot open ", what, " '", path, "': ", std::strerror(err));
  return err == ENOENT || err == ENOTDIR ? absl::NotFoundError(message)
                                         : absl::InvalidArgumentError(message);
}

absl::Status NotRegular(const std::string& path, absl::string_view what, unsigned mode) {
  return absl::InvalidArgumentError(absl::StrCat(what, " '", path, "' is not a regular file (",
                                                 FileKindName(mode),
                                                 "); kiln reads models and tensors only from "
                                                 "regular files"));
}

}  // namespace

const char* FileKindName(unsigned st_mode) {
  const mode_t m = static_cast<mode_t>(st_mode);
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a file";
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, absl::string_view what,
                                            int64_t max_bytes, absl::string_view too_large_hint) {
  // Look before opening: opening a device can have effects of its own (a
  // tape rewinds, a terminal becomes the controlling one).
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0) return OpenError(path, what, errno);
  if (!S_ISREG(before.st_mode)) return NotRegular(path, what, before.st_mode);
  // O_NONBLOCK: if the path was replaced by a FIFO since, open returns at
  // once instead of waiting for a writer; fstat below then refuses it.
  Fd file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (file.fd < 0) return OpenError(path, what, errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) return OpenError(path, what, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, what, st.st_mode);
  const int flags = ::fcntl(file.fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK);
  const int64_t size = static_cast<int64_t>(st.st_size);
  if (size > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", path, "' is ", size,
                                                   " bytes; the limit is ", max_bytes, " bytes",
                                                   too_large_hint.empty() ? "" : " (",
                                                   too_large_hint, too_large_hint.empty() ? "" : ")"));
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const std::string why = got < 0 ? std::strerror(errno) : "unexpected end of file";
      return absl::DataLossError(absl::StrCat("reading ", what, " '", path, "' failed: ", why));
    }
    done += static_cast<size_t>(got);
  }
  return bytes;
}

}  // namespace kiln
