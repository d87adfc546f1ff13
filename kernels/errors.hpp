// errors.hpp: the exception types that map to the program's exit codes.
// InputError -> exit 2 (bad input: one line naming the key or file and the reason);
// RuntimeFailure -> exit 1; NonFiniteError -> exit 3 (a value that is not finite where a number must be: the CG
// residual or a global sum; every rank sees the same global value, so every rank throws it alike). A solve that
// merely does not converge is not an exception (exit 3 too, decided in main).
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

// The mark of an exception that every rank throws alike (after an agreement in comm/, or from a value every rank
// shares): the caller may close collective resources together and end every rank cleanly, rank 0 alone reporting.
class Agreed {
 public:
  virtual ~Agreed() = default;
};

class AgreedInputError : public InputError, public Agreed {
 public:
  using InputError::InputError;
};

class AgreedRuntimeFailure : public RuntimeFailure, public Agreed {
 public:
  using RuntimeFailure::RuntimeFailure;
};

class NonFiniteError : public std::runtime_error, public Agreed {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace emprism
