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

std::vector<std::string> MpiTest::positional() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (args_[i].rfind("--", 0) != 0) {
      out.push_back(args_[i]);
    } else if (args_[i].find('=') == std::string::npos && i + 1 < args_.size() && args_[i] == "--grid") {
      ++i;  // the value of an option given as two words
    }
  }
  return out;
}

std::optional<std::string> MpiTest::option(const std::string& name) const {
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (args_[i].rfind(name + "=", 0) == 0) return args_[i].substr(name.size() + 1);
    if (args_[i] == name && i + 1 < args_.size()) return args_[i + 1];
  }
  return std::nullopt;
}

bool MpiTest::flag(const std::string& name) const {
  for (const std::string& a : args_)
    if (a == name) return true;
  return false;
}

std::optional<std::array<int, 4>> MpiTest::procs() const {
  const std::vector<std::string> p = positional();
  if (p.size() < 4) return std::nullopt;
  std::array<int, 4> dims{};
  for (int mu = 0; mu < 4; ++mu) dims[mu] = std::atoi(p[static_cast<std::size_t>(mu)].c_str());
  return dims;
}

std::array<bool, 4> MpiTest::force_halo() const {
  std::array<bool, 4> force{false, false, false, false};
  const std::vector<std::string> p = positional();
  if (p.size() < 5) return force;
  for (int mu = 0; mu < 4 && mu < static_cast<int>(p[4].size()); ++mu) force[mu] = p[4][mu] == '1';
  return force;
}

std::optional<std::array<int, 4>> MpiTest::option_grid(const std::string& name) const {
  const auto v = option(name);
  std::array<int, 4> g{};
  if (v && std::sscanf(v->c_str(), "%d,%d,%d,%d", &g[0], &g[1], &g[2], &g[3]) == 4) return g;
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

std::string agreed_message(const std::string& msg, const std::string& label) {
  std::string root = msg;
  broadcast(current_mpi_test().comm(), root);
  check(msg == root, label + ": this rank's error '" + msg + "' differs from rank 0's '" + root + "'");
  return msg;
}

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
  if (!test.skipped().empty()) {
    if (comm.rank() == 0) std::printf("SKIPPED: %s\n", test.skipped().c_str());
    return 77;
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
