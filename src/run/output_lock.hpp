// output_lock.hpp: a run's exclusive ownership of "<output.file>.partial", through the lock file
// "<output.file>.partial.lock" (created with O_EXCL, holding "host <name> pid <pid>", and locked with an fcntl write
// lock for as long as the run holds it).
// Taking the lock (OutputLock::acquire, before anything of the output is created, truncated or read):
//   - no lock file: created with O_EXCL (so two runs starting together cannot both create it), locked, ours;
//   - a lock file whose fcntl lock another process holds: another run owns the output: InputError naming
//     output.file and the owner ("host h pid p"), nothing touched;
//   - a lock file nobody holds an fcntl lock on: its owner died (the kernel drops the locks of a dead process; on
//     Lustre with the flock mount option and NFSv4 across nodes too): taken over, with a warning naming the old owner;
//   - file systems without fcntl locks (ENOLCK, EOPNOTSUPP, ENOSYS: Lustre without flock): the host and pid decide:
//     a lock of this host whose pid no longer runs is taken over with a warning; any other is refused (a lock of
//     another host cannot be checked: the message says to remove the lock file if that run has ended).
// Released (lock file removed) by release() or the destructor; a killed run leaves it behind, and the next run takes
// it over as above.
// Who may call: one rank (rank 0) of a run; every function is local. live_owner creates nothing (for --dry-run).
#pragma once

#include <string>

namespace emprism::run {

class OutputLock {
 public:
  OutputLock() = default;
  ~OutputLock() { release(); }
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  // Takes the lock of final_path's partial file. Throws InputError("output.file: ...") when another run owns it
  // (naming the owner) or the lock file cannot be created (naming the directory and the reason).
  void acquire(const std::string& final_path);
  // Removes the lock file and drops the lock, when held. Safe to call twice.
  void release();
  bool held() const { return fd_ >= 0; }
  // Non-empty after acquire() took over the lock of a run that no longer runs: one line for the log.
  const std::string& takeover() const { return takeover_; }

  // "host <name> pid <pid>" of a live run that holds final_path's lock, or "" when none does (creates nothing).
  static std::string live_owner(const std::string& final_path);
  // "<final_path>.partial.lock".
  static std::string lock_path(const std::string& final_path);

 private:
  std::string path_;
  int fd_ = -1;
  std::string takeover_;
};

}  // namespace emprism::run
