// output_lock.cpp: the lock file of a run's partial file (see output_lock.hpp): O_EXCL creation, fcntl write locks,
// the host-and-pid fallback, the take-over of a lock whose owner died.
#include "src/run/output_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "kernels/errors.hpp"

namespace emprism::run {

namespace {

enum class Os { Locked, HeldByOther, Unsupported };

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string me() { return "host " + host_name() + " pid " + std::to_string(::getpid()); }

// A write lock on the whole file, without waiting.
Os try_lock(int fd) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(fd, F_SETLK, &fl) == 0) return Os::Locked;
  return errno == EAGAIN || errno == EACCES ? Os::HeldByOther : Os::Unsupported;
}

// The owner text of the lock file (at most one short line).
std::string read_owner(int fd) {
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string s(buf, static_cast<std::size_t>(n));
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

void write_owner(int fd, const std::string& owner) {
  const std::string line = owner + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
    return;  // the owner text is informative; the O_EXCL file and the fcntl lock are what count
  ::fsync(fd);
}

// True when `owner` ("host H pid P") names a process of this host that no longer runs.
bool dead_on_this_host(const std::string& owner) {
  std::istringstream s(owner);
  std::string host_word, host, pid_word;
  long pid = 0;
  if (!(s >> host_word >> host >> pid_word >> pid) || host_word != "host" || pid_word != "pid" || pid <= 0)
    return false;
  return host == host_name() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// True when fd is still the file at path (not removed or replaced by its owner's release meanwhile).
bool same_file(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::string directory_of(const std::string& path) {
  const std::filesystem::path p(path);
  return p.parent_path().empty() ? std::string(".") : p.parent_path().string();
}

[[noreturn]] void refuse(const std::string& final_path, const std::string& lock, const std::string& owner,
                         bool checkable) {
  std::string msg = "output.file: '" + final_path + "' is being written by another run (" +
                    (owner.empty() ? std::string("owner not yet recorded") : owner) + ", lock file '" + lock + "')";
  if (!checkable) msg += "; if that run has ended, remove the lock file";
  throw InputError(msg);
}

}  // namespace

std::string OutputLock::lock_path(const std::string& final_path) { return final_path + ".partial.lock"; }

void OutputLock::acquire(const std::string& final_path) {
  release();
  const std::string lock = lock_path(final_path);
  for (int attempt = 0; attempt < 4; ++attempt) {
    int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    const bool created = fd >= 0;
    if (!created) {
      const int err = errno;
      if (err == EEXIST) fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) {
        if (err == EEXIST && errno == ENOENT) continue;  // released meanwhile
        throw InputError("output.file: cannot create the lock file '" + lock + "' in directory '" + directory_of(lock) +
                         "': " + std::strerror(err == EEXIST ? errno : err));
      }
    }
    const Os os = try_lock(fd);
    const std::string owner = read_owner(fd);
    if (os == Os::HeldByOther) {
      ::close(fd);
      refuse(final_path, lock, owner, true);
    }
    if (os == Os::Locked && !same_file(fd, lock)) {  // its owner removed it between our open and our lock
      ::close(fd);
      continue;
    }
    if (os == Os::Unsupported && !created) {
      ::close(fd);
      if (!dead_on_this_host(owner)) refuse(final_path, lock, owner, false);
      takeover_ = "took over the lock of '" + final_path + "' left by " + owner + ", which no longer runs";
      ::unlink(lock.c_str());  // then created anew with O_EXCL
      continue;
    }
    if (os == Os::Locked && !created && !owner.empty())
      takeover_ = "took over the lock of '" + final_path + "' left by " + owner + ", which no longer runs";
    write_owner(fd, me());
    fd_ = fd;
    path_ = lock;
    return;
  }
  throw InputError("output.file: cannot take the lock file '" + lock + "': it keeps changing (another run?)");
}

void OutputLock::release() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before dropping the fcntl lock: a waiting run then finds the file gone and retries
  ::close(fd_);
  fd_ = -1;
}

std::string OutputLock::live_owner(const std::string& final_path) {
  const std::string lock = lock_path(final_path);
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  const bool queried = ::fcntl(fd, F_GETLK, &fl) == 0;
  std::string owner = read_owner(fd);
  ::close(fd);
  if (queried) return fl.l_type == F_UNLCK ? "" : (owner.empty() ? "owner not yet recorded" : owner);
  return dead_on_this_host(owner) ? "" : (owner.empty() ? "owner not yet recorded" : owner);
}

}  // namespace emprism::run
