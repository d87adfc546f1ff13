// tune_cache.cpp: reading and the locked, atomic merge-and-write of the tune-cache file (see tune_cache.hpp).
// POSIX: flock on "<path>.lock" (created if missing, left in place), mkstemp in the file's directory, fsync, rename.
// Who may call: see tune_cache.hpp.
#include "io/tune_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace emprism::io {

namespace {

std::runtime_error file_error(const std::string& what, const std::string& path) {
  return std::runtime_error("tune cache '" + path + "': " + what + " (" + std::strerror(errno) + ")");
}

// An exclusive flock of "<path>.lock", held while the object lives.
class CacheLock {
 public:
  explicit CacheLock(const std::string& path) : name_(path + ".lock") {
    fd_ = ::open(name_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) throw file_error("cannot open the lock file " + name_, path);
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        throw file_error("cannot lock " + name_, path);
      }
  }
  ~CacheLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  std::string name_;
  int fd_ = -1;
};

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw file_error("cannot write a temporary file", path);
    done += static_cast<std::size_t>(n);
  }
}

// text into a temporary file of path's directory, then renamed over path.
void replace_atomically(const std::string& path, const std::string& text) {
  std::vector<char> tmp(path.begin(), path.end());
  const std::string suffix = ".tmp.XXXXXX";
  tmp.insert(tmp.end(), suffix.begin(), suffix.end());
  tmp.push_back('\0');
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw file_error("cannot create a temporary file in its directory", path);
  try {
    write_all(fd, text, path);
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) throw file_error("cannot flush a temporary file", path);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.data());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.data(), path.c_str()) != 0) {
    ::unlink(tmp.data());
    throw file_error("cannot rename the temporary file over it", path);
  }
}

}  // namespace

std::optional<std::string> read_tune_cache(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) return std::nullopt;
    throw file_error("cannot be read", path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw file_error("cannot be read", path);
  return text.str();
}

std::size_t save_tune_cache(const std::string& path, const TuneIdentity& id,
                            const std::vector<LaunchVariant>& candidates, const TuneEntries& entries) {
  const CacheLock lock(path);
  TuneEntries merged = entries;
  if (const auto text = read_tune_cache(path)) {
    const TuneCacheText old = parse_tune_cache(*text, id, candidates);
    if (old.status == TuneCacheText::Status::Ok) merged.insert(old.entries.begin(), old.entries.end());
  }
  replace_atomically(path, format_tune_cache(id, merged));
  return merged.size();
}

}  // namespace emprism::io
