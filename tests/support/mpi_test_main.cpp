// mpi_test_main.cpp: main() of the MPI test programs and the MpiTest helpers (see mpi_test.hpp).
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>

#include "comm/collectives.hpp"
#include "tests/support/mpi_test.hpp"

namespace emprism::test {

namespace {

MpiTest* g_test = nullptr;

}  // namespace

MpiTest::MpiTest(int argc, char** argv, Communicator& comm) : comm_(comm) {
  for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
}

std::optional<std::array<int, 4>> MpiTest::procs() const {
  if (args_.size() < 4) return std::nullopt;
  std::array<int, 4> p{};
  for (int mu = 0; mu < 4; ++mu) p[mu] = std::atoi(args_[static_cast<std::size_t>(mu)].c_str());
  return p;
}

std::array<bool, 4> MpiTest::force_halo() const {
  std::array<bool, 4> force{false, false, false, false};
  if (args_.size() < 5) return force;
  for (int mu = 0; mu < 4 && mu < static_cast<int>(args_[4].size()); ++mu) force[mu] = args_[4][mu] == '1';
  return force;
}

std::optional<std::array<int, 4>> MpiTest::option_grid(const std::string& name) const {
  for (std::size_t i = 0; i + 1 < args_.size(); ++i) {
    if (args_[i] != name) continue;
    std::array<int, 4> g{};
    if (std::sscanf(args_[i + 1].c_str(), "%d,%d,%d,%d", &g[0], &g[1], &g[2], &g[3]) == 4) return g;
  }
  return std::nullopt;
}

const std::string& MpiTest::scratch_dir() {
  if (!scratch_.empty()) return scratch_;
  std::string name;
  if (rank() == 0) {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/emprism_mpi_test_XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) name = templ;
  }
  broadcast(comm_, name);
  if (name.empty()) throw std::runtime_error("cannot make a scratch directory");
  scratch_ = name;
  return scratch_;
}

void MpiTest::check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures_;
  std::fprintf(stderr, "[rank %d] FAIL: %s\n", rank(), what.c_str());
}

MpiTest& current_mpi_test() { return *g_test; }

void check(bool ok, const std::string& what) { current_mpi_test().check(ok, what); }

}  // namespace emprism::test

int main(int argc, char** argv) {
  emprism::MpiSession mpi(&argc, &argv);
  emprism::Communicator comm;
  emprism::test::MpiTest test(argc, argv, comm);
  emprism::test::g_test = &test;
  try {
    run_mpi_test(test);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] FAIL: unexpected exception: %s\n", comm.rank(), e.what());
    std::fflush(stderr);
    comm.abort(1);
  }
  std::uint64_t failures = static_cast<std::uint64_t>(test.failures());
  emprism::reduce_sum(comm, &failures, 1);
  const char* name = std::strrchr(argv[0], '/') ? std::strrchr(argv[0], '/') + 1 : argv[0];
  if (comm.rank() == 0) {
    if (failures == 0) {
      std::printf("%s: %d rank(s): PASSED\n", name, comm.size());
    } else {
      std::printf("%s: %d rank(s): FAILED (%llu failed checks)\n", name, comm.size(),
                  static_cast<unsigned long long>(failures));
    }
  }
  comm.barrier();
  if (comm.rank() == 0 && !test.made_scratch_dir().empty()) {
    if (failures == 0) {
      std::error_code ec;
      std::filesystem::remove_all(test.made_scratch_dir(), ec);
    } else {
      std::printf("%s: files kept in %s\n", name, test.made_scratch_dir().c_str());
    }
  }
  return failures == 0 ? 0 : 1;
}
