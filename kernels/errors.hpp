// errors.hpp: the exception types that map to the program's exit codes.
// InputError -> exit 2 (bad input: one line naming the key or file and the reason);
// RuntimeFailure -> exit 1. A solve that does not converge is not an exception (exit 3, decided in main).
// Who may call: anyone.
#pragma once

#include <stdexcept>
#include <string>

namespace emprism {

enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitInput = 2, kExitNotConverged = 3 };

// Bad input. what() is the whole message, already naming the key or file, e.g.
// "lattice.extents: Lx = 7 is odd; every extent must be even".
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace emprism
