// test_cli.cpp: end-to-end GoogleTest tests of the emprism-mpi program (conventions s. 12, 13): the command line,
// the exit codes 0/1/2/3, the one-line error "emprism-mpi: ERROR: <input file>: <key>: <reason>" and the HDF5
// output file, read back with the HDF5 C API. Each TEST checks one property.
// Convention: the program (EMPRISM_BINARY) runs as a child process (fork/execve, OMP_NUM_THREADS=1) from inside a
// per-test mkdtemp directory under /tmp that holds its input, output and captured stdout/stderr; the directory is
// removed afterwards. Inputs are tiny lattices with [metrics] peak = false and absolute output paths.
// Who may call: the test runner.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/gpu_aware.hpp"
#include "emprism_version.hpp"
#include "kernels/backend/runtime.hpp"
#include "tests/support/h5_reader.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

constexpr char kBinary[] = EMPRISM_BINARY;
constexpr unsigned kChildTimeoutS = 60;  // SIGALRM ends a hung child
constexpr char kStdoutName[] = "stdout.log";
constexpr char kStderrName[] = "stderr.log";
constexpr char kInputName[] = "input.toml";
constexpr char kOutputName[] = "out.h5";
constexpr char kKnownBytes[] = "not an HDF5 file: bytes that must survive\n\x01\x02\x03";

// ---- files and directories ----

// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/emprism_cli_XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << content;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Names in dir, without the captured stdout/stderr files.
std::set<std::string> list_dir(const TempDir& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string n = e.path().filename().string();
    if (n != kStdoutName && n != kStderrName) names.insert(n);
  }
  return names;
}

// Names in dir that look like the output file's partial file "<name>.partial" (or a leftover of its resume copy).
std::vector<std::string> temporary_files(const TempDir& dir) {
  std::vector<std::string> out;
  for (const std::string& n : list_dir(dir))
    if (n.find(".partial") != std::string::npos) out.push_back(n);
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);) lines.push_back(line);
  return lines;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// text with the one occurrence of from replaced by to; throws when from is absent.
std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  if (pos == std::string::npos) throw std::runtime_error("replace_once: '" + from + "' not in the input");
  return text.replace(pos, from.size(), to);
}

// ---- running the program ----

struct RunResult {
  int exit_code = -1;  // -1 when the child did not exit normally
  int signal = 0;      // the terminating signal, if any
  std::string out, err;
};

// Runs EMPRISM_BINARY with args from inside dir, OMP_NUM_THREADS=1, stdout/stderr captured to files in dir.
RunResult run_program(const TempDir& dir, const std::vector<std::string>& args) {
  const std::string out_path = dir.file(kStdoutName), err_path = dir.file(kStderrName);
  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("cannot create the capture files in " + dir.path());

  std::vector<std::string> arg_store = {kBinary};
  arg_store.insert(arg_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : arg_store) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e)
    if (!starts_with(*e, "OMP_NUM_THREADS=")) env_store.emplace_back(*e);
  env_store.emplace_back("OMP_NUM_THREADS=1");
  std::vector<char*> envp;
  for (std::string& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  const std::string cwd = dir.path();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {  // child: async-signal-safe calls only
    if (::chdir(cwd.c_str()) != 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) ::_exit(126);
    ::alarm(kChildTimeoutS);
    ::execve(kBinary, argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  RunResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

// A small valid input; tests change fields or edit the text.
struct Input {
  std::string extents = "[4, 4, 4, 8]";
  std::string kappa = "0.12";
  std::string precision = "double";
  std::string tol = "1e-8";
  std::string max_iter = "1000";
  bool overwrite = false;
  bool write_gauge = false;
  std::string solves = "[[solve]]\nname = \"pt\"\ntype = \"point\"\nsite = [1, 2, 3, 4]\nspin = 2\ncolour = 1\n";
  std::string comm;  // the [comm] table's lines, if any

  std::string toml(const std::string& output_file) const {
    std::ostringstream s;
    s << "# test_cli.cpp input\n"
      << "[lattice]\nextents = " << extents << "\n\n"
      << "[gauge]\nsource = \"random\"\nwidth = 0.5\nseed = 11\n\n"
      << "[dirac]\nkappa = " << kappa << "\ncsw = 1.0\n\n"
      << "[solver]\nprecision = \"" << precision << "\"\ntol = " << tol << "\nmax_iter = " << max_iter << "\n\n"
      << "[output]\nfile = \"" << output_file << "\"\noverwrite = " << (overwrite ? "true" : "false")
      << "\nwrite_gauge = " << (write_gauge ? "true" : "false") << "\n\n"
      << "[log]\nprogress_every = 10\n\n"
      << "[metrics]\npeak = false\n\n"
      << (comm.empty() ? "" : "[comm]\n" + comm + "\n") << solves;
    return s.str();
  }
};

std::string describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.signal ? " signal " + std::to_string(r.signal) : "") +
         "\n--- stdout ---\n" + r.out + "--- stderr ---\n" + r.err;
}

// ---- reading the output file: the tests' HDF5 reader (tests/support/h5_reader.hpp) ----

using H5File = emprism::test::H5Reader;

// ---- shared runs ----

// One run of the program kept for several tests (each test checks one property of it).
struct SharedRun {
  std::unique_ptr<TempDir> dir;
  std::string input_text, output;
  Input input;
  RunResult result;
};

SharedRun make_shared_run(const Input& in) {
  SharedRun r;
  r.dir = std::make_unique<TempDir>();
  r.input = in;
  r.output = r.dir->file(kOutputName);
  r.input_text = in.toml(r.output);
  write_file(r.dir->file(kInputName), r.input_text);
  r.result = run_program(*r.dir, {kInputName});
  return r;
}

// A valid run on a 2x4x6x8 lattice (distinct extents) in the default single precision, tol 1e-6.
const SharedRun& valid_run() {
  static const SharedRun run = [] {
    Input in;
    in.extents = "[2, 4, 6, 8]";
    in.precision = "single";
    in.tol = "1e-6";
    return make_shared_run(in);
  }();
  return run;
}

// The valid run's lattice with every direction forced through the halo code, peer transport (the rank to itself).
const SharedRun& forced_halo_run() {
  static const SharedRun run = [] {
    Input in;
    in.extents = "[2, 4, 6, 8]";
    in.precision = "single";
    in.tol = "1e-6";
    in.comm = "force_halo = [true, true, true, true]\ntransport = \"peer\"\n";
    return make_shared_run(in);
  }();
  return run;
}

// A double-precision solve that cannot reach tol = 1e-12 within max_iter = 2.
const SharedRun& unconverged_run() {
  static const SharedRun run = [] {
    Input in;
    in.precision = "double";
    in.tol = "1e-12";
    in.max_iter = "2";
    return make_shared_run(in);
  }();
  return run;
}

// Writes input_text as input.toml beside an output file of known bytes, runs the program on input_arg, and checks
// the input-error contract: exit 2; stderr is exactly one line, starting with expected_prefix; the output file is
// byte-identical and no other file appeared.
void expect_input_error(const TempDir& dir, const std::string& input_text, const std::string& input_arg,
                        const std::string& expected_prefix) {
  write_file(dir.file(kOutputName), kKnownBytes);
  write_file(dir.file(kInputName), input_text);
  const std::set<std::string> before = list_dir(dir);
  const RunResult r = run_program(dir, {input_arg});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << describe(r);
  EXPECT_TRUE(starts_with(lines[0], expected_prefix))
      << "expected a line starting with '" << expected_prefix << "', got '" << lines[0] << "'";
  EXPECT_GT(lines[0].size(), expected_prefix.size()) << "the error line gives no reason: " << lines[0];
  EXPECT_EQ(read_file(dir.file(kOutputName)), std::string(kKnownBytes)) << "the existing output file was changed";
  EXPECT_EQ(list_dir(dir), before) << "the run created or removed files";
}

// The input-error contract for a bad key: the error line names the input file and the key path.
void expect_key_error(const std::string& key, const std::function<std::string(const std::string&)>& make_text) {
  TempDir dir;
  const std::string text = make_text(dir.file(kOutputName));
  expect_input_error(dir, text, kInputName, std::string("emprism-mpi: ERROR: ") + kInputName + ": " + key + ": ");
}

Input overwriting_input() {
  Input in;
  in.overwrite = true;  // so that only the bad key can be the error
  return in;
}

// ---- command line ----

TEST(Cli, HelpPrintsUsageAndExitsZero) {
  TempDir dir;
  const RunResult r = run_program(dir, {"--help"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("Usage:"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("--dry-run"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err, "") << describe(r);
}

TEST(Cli, VersionPrintsProgramAndVersionAndExitsZero) {
  TempDir dir;
  const RunResult r = run_program(dir, {"--version"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u) << describe(r);
  const std::string expected = std::string("emprism-mpi ") + EMPRISM_VERSION;
  EXPECT_TRUE(lines[0] == expected || starts_with(lines[0], expected + " ")) << lines[0];
}

TEST(Cli, NoArgumentExitsTwoWithOneErrorLine) {
  TempDir dir;
  const RunResult r = run_program(dir, {});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << describe(r);
  EXPECT_TRUE(starts_with(lines[0], "emprism-mpi: ERROR: ")) << lines[0];
}

TEST(Cli, UnknownFlagExitsTwo) {
  TempDir dir;
  Input in;
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r = run_program(dir, {"--no-such-flag", kInputName});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << describe(r);
  EXPECT_TRUE(starts_with(lines[0], "emprism-mpi: ERROR: ")) << lines[0];
  EXPECT_NE(lines[0].find("--no-such-flag"), std::string::npos) << lines[0];
  EXPECT_FALSE(fs::exists(dir.file(kOutputName)));
}

// ---- a valid run ----

TEST(Cli, ValidRunExitsZeroAndWritesTheOutputFile) {
  const SharedRun& run = valid_run();
  EXPECT_EQ(run.result.exit_code, 0) << describe(run.result);
  EXPECT_TRUE(fs::is_regular_file(run.output));
  EXPECT_GT(H5Fis_hdf5(run.output.c_str()), 0);
}

TEST(Cli, ValidRunLeavesNoTemporaryFile) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  EXPECT_TRUE(temporary_files(*run.dir).empty());
  EXPECT_EQ(list_dir(*run.dir), (std::set<std::string>{kInputName, kOutputName}));
}

TEST(Cli, ValidRunPrintsProgressAndConvergedSummary) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  EXPECT_NE(run.result.out.find("solve 'pt': point source"), std::string::npos) << run.result.out;
  EXPECT_NE(run.result.out.find("solve 'pt': converged"), std::string::npos) << run.result.out;
  EXPECT_NE(run.result.out.find("wrote " + run.output), std::string::npos) << run.result.out;
  EXPECT_EQ(run.result.err.find("ERROR"), std::string::npos) << run.result.err;
}

TEST(Cli, ValidRunSolveIsConvergedWithTrueResidualWithinTol) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.attr_bool("/solves/pt", "converged"), 1);
  const double res = f.attr_double("/solves/pt", "true_residual");
  EXPECT_TRUE(std::isfinite(res));
  EXPECT_LE(res, 1e-6);
  EXPECT_GT(f.attr_int("/solves/pt", "iterations"), 0);
}

TEST(Cli, ValidRunSolutionHasShapeTZYXSpinColour) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  // extents (Lx, Ly, Lz, Lt) = (2, 4, 6, 8)
  EXPECT_EQ(f.dims("/solves/pt/solution"), (std::vector<hsize_t>{8, 6, 4, 2, 4, 3}));
}

TEST(Cli, ValidRunSolutionIsComplexCompoundRI) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.dataset_class("/solves/pt/solution"), H5T_COMPOUND);
  std::vector<std::string> members;
  for (const auto& field : f.compound_fields("/solves/pt/solution")) members.push_back(field.first);
  EXPECT_EQ(members, (std::vector<std::string>{"r", "i"}));
}

TEST(Cli, ValidRunKernelTableHasEoCloverWithCallsAndBytes) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  const std::vector<std::string> names = f.text_column("/metrics/kernels", "name");
  const std::vector<std::int64_t> calls = f.int_column("/metrics/kernels", "calls");
  const std::vector<double> bytes = f.double_column("/metrics/kernels", "bytes");
  int found = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "eo_clover") continue;
    ++found;
    EXPECT_GT(calls[i], 0);
    EXPECT_GT(bytes[i], 0.0);
  }
  EXPECT_EQ(found, 1) << "rows named eo_clover in /metrics/kernels (" << names.size() << " rows)";
}

TEST(Cli, ValidRunGaugeHasPlaquetteAttribute) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  const double p = f.attr_double("/gauge", "plaquette");
  EXPECT_TRUE(std::isfinite(p));
  EXPECT_LE(std::fabs(p), 1.0);
  EXPECT_FALSE(f.exists("/gauge/links")) << "links are written only with output.write_gauge = true";
}

// CG makes exactly two global sums per iteration (|Mhat p|^2 fused into oe_clover, |r|^2 into the update).
TEST(Cli, ValidRunMakesTwoReductionsPerCgIteration) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.double_column("/metrics/ranks", "reductions_per_iteration"), (std::vector<double>{2.0}));
  EXPECT_EQ(f.dims("/metrics/comm"), (std::vector<hsize_t>{0})) << "no halo exchange on one rank";
}

// The same solve through the halo code converges and writes one /metrics/comm row per direction.
TEST(Cli, ForcedHaloRunWritesOneCommRowPerDirection) {
  const SharedRun& run = forced_halo_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.fixed_text_column("/metrics/comm", "direction"), (std::vector<std::string>{"x", "y", "z", "t"}));
  EXPECT_EQ(f.fixed_text_column("/metrics/comm", "transport"),
            (std::vector<std::string>{"peer", "peer", "peer", "peer"}));
  // Faces of the 2x4x6x8 lattice, one parity, 12 fp32 reals per site, two per direction: 2 * (V/2/L) * 48 bytes.
  EXPECT_EQ(f.double_column("/metrics/comm", "bytes_per_call"), (std::vector<double>{9216, 4608, 3072, 2304}));
  for (double calls : f.double_column("/metrics/comm", "calls")) EXPECT_GT(calls, 0);
  for (double h : f.double_column("/metrics/comm", "hidden_fraction")) {
    EXPECT_GE(h, 0.0);
    EXPECT_LE(h, 1.0);
  }
  EXPECT_EQ(f.double_column("/metrics/ranks", "reductions_per_iteration"), (std::vector<double>{2.0}));
}

TEST(Cli, ValidRunInputDatasetHoldsTheTomlText) {
  const SharedRun& run = valid_run();
  ASSERT_EQ(run.result.exit_code, 0) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.string_data("/input"), run.input_text);
}

// ---- dry run ----

TEST(Cli, DryRunExitsZeroAndCreatesNoOutputFile) {
  TempDir dir;
  Input in;
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r = run_program(dir, {"--dry-run", kInputName});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_FALSE(fs::exists(dir.file(kOutputName)));
  EXPECT_EQ(list_dir(dir), (std::set<std::string>{kInputName}));
}

// ---- input errors: exit 2, one line naming the key, the existing output file untouched ----

TEST(Cli, KappaZeroIsAnInputErrorNamingDiracKappa) {
  expect_key_error("dirac.kappa", [](const std::string& out) {
    Input in = overwriting_input();
    in.kappa = "0.0";
    return in.toml(out);
  });
}

TEST(Cli, KappaNegativeIsAnInputErrorNamingDiracKappa) {
  expect_key_error("dirac.kappa", [](const std::string& out) {
    Input in = overwriting_input();
    in.kappa = "-0.125";
    return in.toml(out);
  });
}

TEST(Cli, OddExtentIsAnInputErrorNamingLatticeExtents) {
  expect_key_error("lattice.extents", [](const std::string& out) {
    Input in = overwriting_input();
    in.extents = "[4, 4, 5, 8]";
    return in.toml(out);
  });
}

TEST(Cli, UnknownKeyIsAnInputErrorNamingTheKey) {
  expect_key_error("solver.tolerance", [](const std::string& out) {
    return replace_once(overwriting_input().toml(out), "[solver]\n", "[solver]\ntolerance = 1e-8\n");
  });
}

TEST(Cli, UnknownTransportIsAnInputErrorNamingCommTransport) {
  expect_key_error("comm.transport", [](const std::string& out) {
    Input in = overwriting_input();
    in.comm = "transport = \"nvlink\"\n";
    return in.toml(out);
  });
}

TEST(Cli, BothTransportKeysAreAnInputErrorNamingCommGpuAware) {
  expect_key_error("comm.gpu_aware", [](const std::string& out) {
    Input in = overwriting_input();
    in.comm = "transport = \"staged\"\ngpu_aware = true\n";
    return in.toml(out);
  });
}

// A transport the machine cannot offer is an input error before anything is written (GPU build, MPI not GPU-aware).
TEST(Cli, GpuAwareTransportWithoutGpuAwareMpiIsAnInputError) {
  if (emprism::backend::device_is_host() || emprism::mpi_is_gpu_aware())
    GTEST_SKIP() << "this build's MPI path takes the buffers as they are (CPU backend or GPU-aware MPI)";
  expect_key_error("comm.transport", [](const std::string& out) {
    Input in = overwriting_input();
    in.comm = "transport = \"gpu_aware\"\n";
    return in.toml(out);
  });
}

TEST(Cli, WrongTypeIsAnInputErrorNamingTheKey) {
  expect_key_error("solver.max_iter", [](const std::string& out) {
    Input in = overwriting_input();
    in.max_iter = "100.0";  // integer keys do not accept floats
    return in.toml(out);
  });
}

TEST(Cli, PointSiteOutsideTheLatticeIsAnInputErrorNamingTheKey) {
  expect_key_error("solve[0].site", [](const std::string& out) {
    Input in = overwriting_input();  // extents (4, 4, 4, 8): t = 8 is one past the end
    in.solves = "[[solve]]\nname = \"pt\"\ntype = \"point\"\nsite = [0, 0, 0, 8]\n";
    return in.toml(out);
  });
}

TEST(Cli, MissingInputFileIsAnInputErrorNamingTheFile) {
  TempDir dir;
  // input.toml exists (a valid input writing out.h5) but the program is pointed at a file that does not.
  expect_input_error(dir, overwriting_input().toml(dir.file(kOutputName)), "missing.toml",
                     "emprism-mpi: ERROR: missing.toml: ");
}

TEST(Cli, TomlSyntaxErrorIsAnInputErrorNamingFileAndLine) {
  TempDir dir;
  const std::string good = overwriting_input().toml(dir.file(kOutputName));
  const std::string bad = replace_once(good, "[dirac]\n", "[dirac\n");
  const auto line = 1 + std::count(good.begin(), good.begin() + good.find("[dirac]"), '\n');
  expect_input_error(dir, bad, kInputName,
                     std::string("emprism-mpi: ERROR: ") + kInputName + ":" + std::to_string(line) + ":");
  const std::string err = read_file(dir.file(kStderrName));
  EXPECT_NE(err.find("syntax"), std::string::npos) << err;
}

// ---- the output file ----

TEST(Cli, ExistingOutputWithoutOverwriteIsAnInputErrorNamingOutputFile) {
  TempDir dir;
  Input in;  // overwrite defaults to false
  std::string text = in.toml(dir.file(kOutputName));
  text = replace_once(text, "overwrite = false\n", "");  // rely on the default
  expect_input_error(dir, text, kInputName, std::string("emprism-mpi: ERROR: ") + kInputName + ": output.file: ");
}

TEST(Cli, OverwriteTrueReplacesTheExistingFile) {
  TempDir dir;
  write_file(dir.file(kOutputName), kKnownBytes);
  Input in;
  in.overwrite = true;
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r = run_program(dir, {kInputName});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_GT(H5Fis_hdf5(dir.file(kOutputName).c_str()), 0);
  H5File f(dir.file(kOutputName));
  ASSERT_GE(f.id(), 0);
  EXPECT_TRUE(f.exists("/solves/pt/solution"));
  EXPECT_TRUE(temporary_files(dir).empty());
}

// ---- convergence ----

TEST(Cli, UnconvergedSolveExitsThreeAndStillWritesTheFile) {
  const SharedRun& run = unconverged_run();
  EXPECT_EQ(run.result.exit_code, 3) << describe(run.result);
  EXPECT_GT(H5Fis_hdf5(run.output.c_str()), 0);
  EXPECT_TRUE(temporary_files(*run.dir).empty());
}

TEST(Cli, UnconvergedSolveRecordsConvergedFalseWithinMaxIter) {
  const SharedRun& run = unconverged_run();
  ASSERT_EQ(run.result.exit_code, 3) << describe(run.result);
  H5File f(run.output);
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.attr_bool("/solves/pt", "converged"), 0);
  const int iterations = f.attr_int("/solves/pt", "iterations");
  EXPECT_GE(iterations, 0);
  EXPECT_LE(iterations, 2) << "restarts count toward the same max_iter";
  EXPECT_GT(f.attr_double("/solves/pt", "true_residual"), 1e-12);
}

// Runs in with tol 1e-10 and returns the true_residual attribute of /solves/pt (NaN when the run failed).
double true_residual_at_tol_1e10(const std::string& precision) {
  TempDir dir;
  Input in;
  in.precision = precision;
  in.tol = "1e-10";
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r = run_program(dir, {kInputName});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  if (!fs::exists(dir.file(kOutputName))) return std::nan("");
  H5File f(dir.file(kOutputName));
  EXPECT_EQ(f.attr_bool("/solves/pt", "converged"), 1);
  return f.attr_double("/solves/pt", "true_residual");
}

TEST(Cli, DoublePrecisionMeetsTol1e10) {
  const double res = true_residual_at_tol_1e10("double");
  EXPECT_LE(res, 1e-10);
}

TEST(Cli, MixedPrecisionMeetsTol1e10) {
  const double res = true_residual_at_tol_1e10("mixed");
  EXPECT_LE(res, 1e-10);
}

// ---- gauge links and determinism ----

TEST(Cli, WriteGaugeWritesLinksWithShapeTZYXMuRowCol) {
  TempDir dir;
  Input in;
  in.extents = "[2, 4, 6, 8]";
  in.write_gauge = true;
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r = run_program(dir, {kInputName});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  H5File f(dir.file(kOutputName));
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.dims("/gauge/links"), (std::vector<hsize_t>{8, 6, 4, 2, 4, 3, 3}));
}

TEST(Cli, SameInputTwiceGivesBitwiseIdenticalSolutions) {
  TempDir dir;
  Input in;
  in.precision = "single";
  in.tol = "1e-6";
  in.overwrite = true;
  in.solves += "\n[[solve]]\nname = \"noise\"\ntype = \"random\"\ndistribution = \"gaussian\"\nseed = 5\n";
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r1 = run_program(dir, {kInputName});
  ASSERT_EQ(r1.exit_code, 0) << describe(r1);
  fs::rename(dir.file(kOutputName), dir.file("first.h5"));
  const RunResult r2 = run_program(dir, {kInputName});
  ASSERT_EQ(r2.exit_code, 0) << describe(r2);
  H5File first(dir.file("first.h5")), second(dir.file(kOutputName));
  ASSERT_GE(first.id(), 0);
  ASSERT_GE(second.id(), 0);
  for (const char* path : {"/solves/pt/solution", "/solves/noise/solution"}) {
    const std::vector<unsigned char> a = first.bytes(path), b = second.bytes(path);
    EXPECT_FALSE(a.empty()) << path;
    EXPECT_TRUE(a == b) << path << " differs between two runs of the same input";
  }
}

// The gauge chain through the program: a heatbath ensemble written as NERSC files (plaquette logged per sweep),
// gauge-info on one of them (checksum ok), and a solve on it read back with source = "file".
TEST(Cli, HeatbathEnsembleIsWrittenCheckedAndSolvedOn) {
  TempDir dir;
  write_file(dir.file("gen.toml"),
             "[lattice]\nextents = [4, 4, 4, 4]\n[gauge]\nsource = \"heatbath\"\nbeta = 6.0\nsweeps = 3\nseed = 9\n"
             "[generate]\ncount = 2\nevery = 2\nformat = \"nersc\"\nprefix = \"ens\"\n"
             "[dirac]\nkappa = 0.12\n[output]\nfile = \"" +
                 dir.file("gen.h5") + "\"\n[metrics]\npeak = false\n");
  const RunResult gen = run_program(dir, {"gen.toml"});
  ASSERT_EQ(gen.exit_code, 0) << describe(gen);
  EXPECT_NE(gen.out.find("heatbath sweep 7 of 7: plaquette"), std::string::npos) << gen.out;
  ASSERT_TRUE(fs::exists(dir.file("ens_000005.nersc")));
  ASSERT_TRUE(fs::exists(dir.file("ens_000007.nersc")));

  const RunResult info = run_program(dir, {"gauge-info", "ens_000007.nersc"});
  ASSERT_EQ(info.exit_code, 0) << describe(info);
  EXPECT_NE(info.out.find("\"format\": \"nersc\""), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("\"checksum\": \"ok\""), std::string::npos) << info.out;

  write_file(dir.file("solve.toml"),
             "[lattice]\nextents = [4, 4, 4, 4]\n[gauge]\nsource = \"file\"\nfile = \"ens_000007.nersc\"\n"
             "[dirac]\nkappa = 0.12\ncsw = 1.0\n[solver]\nprecision = \"double\"\ntol = 1e-10\n[output]\nfile = \"" +
                 dir.file("s.h5") + "\"\n[metrics]\npeak = false\n[[solve]]\nname = \"p\"\ntype = \"point\"\n");
  const RunResult solve = run_program(dir, {"solve.toml"});
  ASSERT_EQ(solve.exit_code, 0) << describe(solve);
  H5File f(dir.file("s.h5"));
  EXPECT_EQ(f.attr_bool("/solves/p", "converged"), 1);
  EXPECT_LE(f.attr_double("/solves/p", "true_residual"), 1e-10);
}

TEST(Cli, GaugeInfoOnAFileOfNoKnownFormatExitsTwo) {
  TempDir dir;
  write_file(dir.file("junk.cfg"), "this is not a gauge configuration\n");
  const RunResult r = run_program(dir, {"gauge-info", "junk.cfg"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("junk.cfg"), std::string::npos) << r.err;
}

// ---- propagators, checkpoints and resume ----

const char kTwoSolves[] =
    "[[solve]]\nname = \"pt\"\ntype = \"point\"\nsite = [1, 2, 3, 4]\n"
    "[[solve]]\nname = \"prop\"\ntype = \"propagator\"\nsite = [0, 1, 0, 2]\nchannels = [\"pion\", \"axial\"]\n"
    "momenta = [[1, 0, 0]]\n";

// Runs the program with EMPRISM_TEST_CRASH_AFTER_SOLVES=k in its environment.
RunResult run_crashing_after(const TempDir& dir, int k, const std::vector<std::string>& args) {
  ::setenv("EMPRISM_TEST_CRASH_AFTER_SOLVES", std::to_string(k).c_str(), 1);
  RunResult r = run_program(dir, args);
  ::unsetenv("EMPRISM_TEST_CRASH_AFTER_SOLVES");
  return r;
}

TEST(Cli, PropagatorWritesTheColumnsAndTheCorrelators) {
  TempDir dir;
  Input in;
  in.solves = kTwoSolves;
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r = run_program(dir, {kInputName});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  H5File f(dir.file(kOutputName));
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.dims("/solves/prop/propagator"), (std::vector<hsize_t>{4, 3, 8, 4, 4, 4, 4, 3}));
  EXPECT_EQ(f.dims("/correlators/prop/pion"), (std::vector<hsize_t>{8}));
  EXPECT_EQ(f.dims("/correlators/prop/p1_0_0/axial"), (std::vector<hsize_t>{8}));
  EXPECT_TRUE(f.exists("/correlators/prop/pcac_mass"));
  EXPECT_FALSE(f.exists("/correlators/prop/rho"));
  EXPECT_EQ(f.attr_bool("/solves/prop", "converged"), 1);
  EXPECT_EQ(f.attr_bool("/solves/prop", "complete"), 1);
  EXPECT_EQ(f.attr_bool("/solves/pt", "complete"), 1);
  EXPECT_LE(f.attr_double("/solves/prop", "true_residual"), 1e-8);
}

TEST(Cli, KilledRunLeavesThePartialFileWithItsCompleteSolves) {
  TempDir dir;
  Input in;
  in.solves = kTwoSolves;
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r = run_crashing_after(dir, 1, {kInputName});
  EXPECT_EQ(r.signal, SIGKILL) << describe(r);
  EXPECT_FALSE(fs::exists(dir.file(kOutputName)));
  ASSERT_TRUE(fs::exists(dir.file("out.h5.partial")));
  H5File f(dir.file("out.h5.partial"));
  ASSERT_GE(f.id(), 0) << "the partial file of a killed run must be readable";
  EXPECT_EQ(f.attr_bool("/solves/pt", "complete"), 1);
  EXPECT_FALSE(f.exists("/solves/prop"));
}

// Writes `in` with the two solves of kTwoSolves into dir and runs it until the test hook kills it after the first
// solve: dir then holds out.h5.partial with solve 'pt' complete. Returns whether the run was killed.
bool interrupted_run(const TempDir& dir, Input& in) {
  in.solves = kTwoSolves;
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  return run_crashing_after(dir, 1, {kInputName}).signal == SIGKILL;
}

TEST(Cli, PartialFileWithoutResumeExitsTwoAndIsKept) {
  TempDir dir;
  Input in;
  ASSERT_TRUE(interrupted_run(dir, in));
  const std::string before = read_file(dir.file("out.h5.partial"));
  const RunResult r = run_program(dir, {kInputName});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_TRUE(starts_with(lines[0], "emprism-mpi: ERROR: input.toml: output.file: '" + dir.file("out.h5.partial") +
                                        "' holds the results of an interrupted run; set output.resume = true"))
      << lines[0];
  EXPECT_EQ(read_file(dir.file("out.h5.partial")), before);
}

TEST(Cli, ResumeWithAnotherInputExitsTwoNamingTheDifference) {
  TempDir dir;
  Input in;
  ASSERT_TRUE(interrupted_run(dir, in));
  const std::string before = read_file(dir.file("out.h5.partial"));
  in.kappa = "0.121";
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult r = run_program(dir, {"--resume", kInputName});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("output.resume: the partial file"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("dirac.kappa is 0.121 here but 0.12 in the file"), std::string::npos) << lines[0];
  EXPECT_EQ(read_file(dir.file("out.h5.partial")), before);
}

TEST(Cli, ResumeSolvesOnlyWhatIsMissingAndRenamesTheFile) {
  TempDir dir;
  Input in;
  ASSERT_TRUE(interrupted_run(dir, in));
  const RunResult r = run_program(dir, {"--resume", kInputName});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("solve 'pt': complete in the partial file of the interrupted run"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("solve 'pt': point source"), std::string::npos) << "pt was solved again\n" << r.out;
  EXPECT_TRUE(temporary_files(dir).empty());
  H5File f(dir.file(kOutputName));
  ASSERT_GE(f.id(), 0);
  EXPECT_EQ(f.attr_bool("/solves/pt", "complete"), 1);
  EXPECT_EQ(f.attr_bool("/solves/prop", "complete"), 1);
  EXPECT_TRUE(f.exists("/correlators/prop/pion"));
  EXPECT_TRUE(f.exists("/metrics/kernels"));
}

TEST(Cli, ResumeOnACompleteFileOfTheSameInputDoesNothing) {
  TempDir dir;
  Input in;
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  ASSERT_EQ(run_program(dir, {kInputName}).exit_code, 0);
  const std::string before = read_file(dir.file(kOutputName));
  const RunResult r = run_program(dir, {"--resume", kInputName});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("nothing to do"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(dir.file(kOutputName)), before);
  in.tol = "1e-9";
  write_file(dir.file(kInputName), in.toml(dir.file(kOutputName)));
  const RunResult other = run_program(dir, {"--resume", kInputName});
  EXPECT_EQ(other.exit_code, 2) << describe(other);
  EXPECT_NE(other.err.find("solver.tol is 1e-09 here but 1e-08 in the file"), std::string::npos) << other.err;
  EXPECT_EQ(read_file(dir.file(kOutputName)), before);
}

}  // namespace
