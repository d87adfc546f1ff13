// mpi_test.hpp: the one main of the MPI test programs (tests/mpi/test_*_mpi.cpp, started by ctest through
// tests/support/mpirun.sh). main() (mpi_test_main.cpp) sets up MPI, calls run_mpi_test() on every rank, sums the
// failed checks of all ranks, prints the verdict on rank 0 ("<program>: N rank(s): PASSED" or "... FAILED (k failed
// checks)") and exits 0 only when no check failed. An exception that escapes run_mpi_test on one rank ends the job at
// once (the other ranks could wait forever in a collective).
// Command line: the arguments after the program name. Positional ones (not starting with "--"): procs() and
// force_halo() read the form "px py pz pt [force mask]" (e.g. "1 1 1 2 1000": a 1x1x1x2 grid, halo forced in x);
// options: option("--name") is the value of "--name=value" (or the word after "--name"), flag("--name") whether it is
// given, option_grid() reads "--grid px,py,pz,pt". skip() on every rank ends the test as skipped (exit 77).
// collective_error(f, label) runs f on every rank and returns the InputError message it threw ("" if none), checking
// that every rank got rank 0's message (collective).
// Who may call: the MPI test programs; check() from any rank at any time.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "kernels/errors.hpp"

namespace emprism::test {

class MpiTest {
 public:
  MpiTest(int argc, char** argv, Communicator& comm);
  Communicator& comm() { return comm_; }
  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }
  const std::vector<std::string>& args() const { return args_; }
  std::vector<std::string> positional() const;
  std::optional<std::string> option(const std::string& name) const;
  bool flag(const std::string& name) const;
  // The positional process grid "px py pz pt" (nullopt when fewer than four arguments) and force mask ("1000").
  std::optional<std::array<int, 4>> procs() const;
  std::array<bool, 4> force_halo() const;
  // "<name> px,py,pz,pt" among the arguments, or nullopt.
  std::optional<std::array<int, 4>> option_grid(const std::string& name) const;
  // A scratch directory made by rank 0 under $TMPDIR (or /tmp) and known to every rank: collective on the first
  // call. Removed at the end when every check passed, kept (and named) otherwise.
  const std::string& scratch_dir();
  const std::string& made_scratch_dir() const { return scratch_; }  // "" until scratch_dir() was called
  // Counts a failed check on this rank and prints "[rank r] FAIL: what" to stderr.
  void check(bool ok, const std::string& what);
  int failures() const { return failures_; }
  // Marks the test skipped (every rank must call it); main prints "SKIPPED: why" on rank 0 and exits 77.
  void skip(const std::string& why) { skipped_ = why.empty() ? "skipped" : why; }
  const std::string& skipped() const { return skipped_; }

 private:
  Communicator& comm_;
  std::vector<std::string> args_;
  std::string scratch_, skipped_;
  int failures_ = 0;
};

// The test of the running program (for helpers that have no MpiTest at hand).
MpiTest& current_mpi_test();
// current_mpi_test().check(ok, what).
void check(bool ok, const std::string& what);
// Checks that msg, this rank's message, is rank 0's (label names the step in the failure line); returns msg.
// Collective over the running test's communicator.
std::string agreed_message(const std::string& msg, const std::string& label);

template <typename F>
std::string collective_error(F&& f, const std::string& label) {
  std::string msg;
  try {
    f();
  } catch (const InputError& e) {
    msg = e.what();
  }
  return agreed_message(msg, label);
}

}  // namespace emprism::test

// Defined by each MPI test program: the test, run on every rank; failures are reported through check().
void run_mpi_test(emprism::test::MpiTest& test);
