// test_distributed_mpi.cpp: the distributed operator and solver against the single-rank result, run by ctest
// (tests/support/mpirun.sh) with several process grids:
//   test_distributed_mpi px py pz pt [force_mask, e.g. 0001] [--transports=auto,staged,gpu_aware,peer] [--gpu]
// Every rank builds its block of the same random gauge field and source (counter-based RNG: independent of the
// decomposition), applies M and solves in double and single precision; rank 0 gathers the blocks and compares
// with the same computation on the whole lattice on one rank (MPI_COMM_SELF). Tolerances: fp64 relative 1e-12,
// fp32 1e-6 (the bar). Also checks that a second solve is bitwise identical (determinism), that the mixed solve
// has the same bits with its residual update fused into oe_clover_dag's kernel or not, and that every
// candidate halo policy of the operator (transport per direction, fused or split exterior) gives bitwise the same
// M. With links of 12 and 8 reals (dirac.reconstruct; operators built on the device) M in both precisions equals the
// single-rank result of the same format (1e-12, 1e-6) and the 18-real one (1e-12, 1e-5: the links round
// differently); the faces carry spinors only, so the halo exchange is the same. This runs once per transport of
// --transports (comm.transport; default auto); a forced transport that this build or MPI cannot offer (gpu_aware
// without GPU-aware MPI) is reported and skipped. --gpu: exit 77 (skipped) unless a GPU backend sees a device (ctest
// label gpu). The MPI test main (tests/support/mpi_test.hpp) counts the failed checks of every rank.
#include <mpi.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/errors.hpp"
#include "src/lattice/field_io.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/cg.hpp"
#include "src/physics/clover.hpp"
#include "src/physics/costs.hpp"
#include "src/physics/dirac.hpp"
#include "src/physics/sources.hpp"
#include "tests/support/mpi_test.hpp"

namespace {

using namespace emprism;
using Cd = std::complex<double>;

const Extents kGlobal{4, 8, 4, 12};
const double kKappa = 0.118, kCsw = 1.2;
const std::array<double, 4> kTheta{0.25, 0.0, 0.0, 3.14159265358979323846};
using emprism::test::check;

struct Results {
  std::vector<Cd> m_double, m_single, x_double, x_single, x_mixed;
  std::vector<Cd> m_packed[2][2];  // links of [12, 8] reals, [fp64, fp32]
  int it_double = 0, it_single = 0;
};

const int kFormats[2] = {12, 8};

template <typename R>
std::vector<Cd> apply_m(WilsonClover<R>& op, const Geometry& geom, const std::vector<Cd>& src) {
  SpinorField<R> b(geom), y(geom);
  spinor_from_natural(geom, src, b);
  op.apply_m(y, b);
  return spinor_to_natural(geom, y);
}

// M with links of 12 and 8 reals, the operators built on the device from u.
void compute_packed(Context& ctx, const Geometry& geom, const HostGauge& u, DiracParams dp, const std::vector<Cd>& src,
                    Results& r) {
  for (int k = 0; k < 2; ++k) {
    dp.reconstruct = kFormats[k];
    WilsonClover<double> opd(ctx, geom, u, dp);
    WilsonClover<float> ops(ctx, geom, u, dp);
    r.m_packed[k][0] = apply_m(opd, geom, src);
    r.m_packed[k][1] = apply_m(ops, geom, src);
  }
}

// M of op under each of its candidate halo policies equals y bitwise (this rank's block).
template <typename R>
void check_policies(WilsonClover<R>& op, const SpinorField<R>& b, const std::vector<Cd>& y, const Geometry& geom) {
  for (const HaloPolicy& p : op.halo_candidates()) {
    op.use_halo_policy(p);
    SpinorField<R> out(geom);
    op.apply_m(out, b);
    check(spinor_to_natural(geom, out) == y,
          std::string("M (fp") + std::to_string(8 * sizeof(R)) + ") under policy '" +
              p.describe({geom.partitioned(0), geom.partitioned(1), geom.partitioned(2), geom.partitioned(3)}) +
              "' differs bitwise from the tuned policy's");
  }
}

// The dry run's iteration cost (src/physics/costs.hpp) on this grid: a mixed solve whose fp32 operator records into a
// registry of its own; per call, the rows of a CG iteration (the four hot kernels, the |Mhat p|^2 sum, the residual
// update, and x's and p's updates: two launches on several ranks, one on one) add up to cg_iteration_cost<float>.
void check_iteration_cost(Communicator& comm, const ProcessGrid& grid, const Geometry& geom, const HostGauge& u,
                          const HostClover& clover, const DiracParams& dp, WilsonClover<double>& outer,
                          const SpinorField<double>& b) {
  MetricsRegistry own;
  Context ctx{own, comm, grid};
  WilsonClover<float> inner(ctx, geom, u, clover, dp);
  SpinorField<double> x(geom);
  CgParams p;
  p.tol = 1e-11;
  solve_eo_cg(outer, inner, b, x, p);
  std::vector<std::string> rows{
      "eo_clover", "oe_clover", "eo_clover_dag", "oe_clover_norm", "oe_clover_dag_update", "oe_clover_dag_update_norm"};
  if (comm.size() == 1)
    rows.push_back("blas_cg_direction");
  else
    rows.insert(rows.end(), {"blas_cg_solution", "blas_axpby"});
  SiteCost sum;
  for (const std::string& row : rows) {
    bool found = false;
    for (const KernelMetric& m : own.table())
      if (m.name == row && m.calls > 0) {
        found = true;
        sum = sum + SiteCost{m.flops / m.calls, m.bytes / m.calls};
      }
    check(found, "iteration cost: no row " + row);
  }
  const SiteCost c = cg_iteration_cost<float>(18, comm.size());
  const double n = geom.half_volume();
  check(std::abs(sum.bytes / n - c.bytes) <= 1e-9 * c.bytes && std::abs(sum.flops / n - c.flops) <= 1e-9 * c.flops,
        "iteration cost: the launches record " + std::to_string(sum.bytes / n) + " bytes and " +
            std::to_string(sum.flops / n) + " flops per site, cg_iteration_cost<float> says " +
            std::to_string(c.bytes) + " and " + std::to_string(c.flops));
}

// The whole computation on the geometry of this communicator/grid, with the given halo transport.
Results compute(Communicator& comm, const ProcessGrid& grid, const Geometry& geom,
                const TransportRequest& transport = {}, std::string* policy = nullptr) {
  MetricsRegistry metrics;
  Context ctx{metrics, comm, grid};
  HostGauge u = make_random_gauge(geom, 2027, 0.7);
  u.fill_halo(&grid);
  const HostClover clover = make_clover(u, kKappa, kCsw);
  DiracParams dp;
  dp.kappa = kKappa;
  dp.csw = kCsw;
  dp.theta = kTheta;
  dp.transport = transport;
  WilsonClover<double> opd(ctx, geom, u, clover, dp);
  WilsonClover<float> ops(ctx, geom, u, clover, dp);
  SourceParams sc;
  sc.kind = SourceKind::Random;
  sc.seed = 99;
  const auto src = make_source(geom, sc, kTheta);

  Results r;
  SpinorField<double> bd(geom), yd(geom), xd(geom);
  spinor_from_natural(geom, src, bd);
  opd.apply_m(yd, bd);
  r.m_double = spinor_to_natural(geom, yd);
  SpinorField<float> bs(geom), ys(geom), xs(geom);
  spinor_from_natural(geom, src, bs);
  ops.apply_m(ys, bs);
  r.m_single = spinor_to_natural(geom, ys);

  compute_packed(ctx, geom, u, dp, src, r);
  if (policy) *policy = opd.halo_policy();
  check_policies(opd, bd, r.m_double, geom);
  check_policies(ops, bs, r.m_single, geom);

  CgParams p;
  p.tol = 1e-12;
  const CgResult rd = solve_eo_cg(opd, opd, bd, xd, p);
  r.x_double = spinor_to_natural(geom, xd);
  r.it_double = rd.iterations;
  p.tol = 1e-5;
  const CgResult rs = solve_eo_cg(ops, ops, bs, xs, p);
  r.x_single = spinor_to_natural(geom, xs);
  r.it_single = rs.iterations;
  p.tol = 1e-11;
  const CgResult rm = solve_eo_cg(opd, ops, bd, xd, p);
  r.x_mixed = spinor_to_natural(geom, xd);
  p.fuse_update = false;  // the residual update a kernel of its own after oe_clover_dag: the same bits (physics/cg.hpp)
  const CgResult rm_unfused = solve_eo_cg(opd, ops, bd, xd, p);
  check(spinor_to_natural(geom, xd) == r.x_mixed && rm.history == rm_unfused.history,
        "mixed solve: the residual update fused into oe_clover_dag's kernel changed the bits");
  check_iteration_cost(comm, grid, geom, u, clover, dp, opd, bd);
  return r;
}

// Gathers the blocks of a local natural-order field into the global natural order on rank 0.
std::vector<Cd> gather(const Communicator& comm, const Geometry& geom, const std::vector<Cd>& local) {
  const int n = static_cast<int>(local.size() * 2);
  std::vector<double> all(comm.rank() == 0 ? static_cast<std::size_t>(n) * comm.size() : 0);
  MPI_Gather(local.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0, comm.handle());
  int my_origin[4] = {geom.origin()[0], geom.origin()[1], geom.origin()[2], geom.origin()[3]};
  std::vector<int> origins(comm.rank() == 0 ? 4 * comm.size() : 0);
  MPI_Gather(my_origin, 4, MPI_INT, origins.data(), 4, MPI_INT, 0, comm.handle());
  std::vector<Cd> global;
  if (comm.rank() != 0) return global;
  const Geometry whole = Geometry::single_rank(kGlobal);
  global.resize(static_cast<std::size_t>(whole.local_volume()) * 12);
  for (int r = 0; r < comm.size(); ++r) {
    const Geometry part(kGlobal, geom.local(),
                        {origins[4 * r], origins[4 * r + 1], origins[4 * r + 2], origins[4 * r + 3]});
    for (std::int64_t lex = 0; lex < part.local_volume(); ++lex) {
      int x[4];
      part.local_coords(lex, x);
      const std::int64_t g = part.global_lex(x);
      for (int k = 0; k < 12; ++k) {
        const std::size_t src = (static_cast<std::size_t>(r) * local.size() + lex * 12 + k) * 2;
        global[g * 12 + k] = Cd(all[src], all[src + 1]);
      }
    }
  }
  return global;
}

double rel_diff(const std::vector<Cd>& a, const std::vector<Cd>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

TransportRequest parse_transport(const std::string& name) {
  TransportRequest r;
  if (name == "staged")
    r.choice = TransportRequest::Choice::Staged;
  else if (name == "gpu_aware")
    r.choice = TransportRequest::Choice::GpuAware;
  else if (name == "peer")
    r.choice = TransportRequest::Choice::Peer;
  else if (name != "auto")
    throw std::invalid_argument("unknown transport '" + name + "'");
  return r;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = s.find(',', start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// M with packed links (every rank gathers, rank 0 compares): against one rank's of the same format and its 18-real M.
void check_packed(const Communicator& comm, const Geometry& geom, const Results& dist, const Results& one,
                  const std::string& t) {
  for (int k = 0; k < 2; ++k) {
    const std::vector<Cd> md = gather(comm, geom, dist.m_packed[k][0]), ms = gather(comm, geom, dist.m_packed[k][1]);
    if (comm.rank() != 0) continue;
    const std::string f = t + "links of " + std::to_string(kFormats[k]) + " reals: ";
    const double d_md = rel_diff(md, one.m_packed[k][0]), d_ms = rel_diff(ms, one.m_packed[k][1]);
    std::printf("%sM fp64 %.2e, M fp32 %.2e (one rank), against 18 reals %.2e, %.2e\n", f.c_str(), d_md, d_ms,
                rel_diff(md, one.m_double), rel_diff(ms, one.m_single));
    check(d_md < 1e-12, f + "M fp64 differs from one rank");
    check(d_ms < 1e-6, f + "M fp32 differs from one rank");
    check(rel_diff(md, one.m_double) < 1e-12, f + "M fp64 differs from the 18-real M");
    check(rel_diff(ms, one.m_single) < 1e-5, f + "M fp32 differs from the 18-real M");
  }
}

// The distributed computation with one transport, compared with the single-rank result `one` (rank 0's).
void run_transport(Communicator& comm, const ProcessGrid& grid, const Geometry& geom, const std::string& name,
                   const std::array<int, 4>& procs, const Results& one) {
  Results dist, again;
  std::string policy;
  try {
    dist = compute(comm, grid, geom, parse_transport(name), &policy);
  } catch (const InputError& e) {  // the same on every rank: the transport is not offered here
    if (comm.rank() == 0) std::printf("transport %s: not available here, skipped (%s)\n", name.c_str(), e.what());
    return;
  }
  again = compute(comm, grid, geom, parse_transport(name));
  check(dist.x_double == again.x_double && dist.x_single == again.x_single,
        "transport " + name + ": two identical distributed solves are not bitwise identical");
  const std::vector<Cd> md = gather(comm, geom, dist.m_double), ms = gather(comm, geom, dist.m_single),
                        xd = gather(comm, geom, dist.x_double), xs = gather(comm, geom, dist.x_single),
                        xm = gather(comm, geom, dist.x_mixed);
  check_packed(comm, geom, dist, one, "transport " + name + ": ");  // (collective: its gathers)
  if (comm.rank() != 0) return;
  const std::string grid_str = std::to_string(procs[0]) + "x" + std::to_string(procs[1]) + "x" +
                               std::to_string(procs[2]) + "x" + std::to_string(procs[3]);
  const double d_md = rel_diff(md, one.m_double), d_ms = rel_diff(ms, one.m_single), d_xd = rel_diff(xd, one.x_double),
               d_xs = rel_diff(xs, one.x_single), d_xm = rel_diff(xm, one.x_mixed);
  std::printf(
      "grid %s, transport %s (%s): M fp64 %.2e, M fp32 %.2e, x fp64 %.2e (%d vs %d it), x fp32 %.2e (%d vs %d it), "
      "x mixed %.2e\n",
      grid_str.c_str(), name.c_str(), policy.empty() ? "no halo" : policy.c_str(), d_md, d_ms, d_xd, dist.it_double,
      one.it_double, d_xs, dist.it_single, one.it_single, d_xm);
  const std::string t = "transport " + name + ": ";
  check(d_md < 1e-12, t + "M fp64 differs from one rank");
  check(d_ms < 1e-6, t + "M fp32 differs from one rank");
  check(d_xd < 1e-12, t + "solution fp64 differs from one rank");
  check(d_xs < 1e-6, t + "solution fp32 differs from one rank");
  check(d_xm < 1e-12, t + "solution mixed differs from one rank");
}

}  // namespace

void run_mpi_test(emprism::test::MpiTest& test) {
  using namespace emprism;
  Communicator& comm = test.comm();
  const std::vector<std::string> transports = split_list(test.option("--transports").value_or("auto"));
  if (!test.procs())
    throw std::invalid_argument(
        "usage: test_distributed_mpi px py pz pt [force_mask] "
        "[--transports=auto,staged,gpu_aware,peer] [--gpu]");
  if (test.flag("--gpu") && (backend::device_is_host() || backend::device_count() == 0)) {
    test.skip(std::string("no GPU (backend ") + backend::name() + ")");
    return;
  }
  const std::array<int, 4> procs = *test.procs();
  const std::array<bool, 4> force = test.force_halo();
  // One device per rank, by node-local rank (GPU backends; a no-op on the CPU). Ranks beyond the device count
  // share devices.
  const int device = backend::select_device(comm.local_rank());
  std::printf("rank %d: %s (device %d)\n", comm.rank(), backend::device_name().c_str(), device);
  const ProcessGrid grid = make_process_grid(comm, kGlobal, procs, force);
  const Geometry geom(kGlobal, grid.local_extents(kGlobal), grid.origin(kGlobal), grid.partitioned);

  Results one;
  if (comm.rank() == 0) {
    Communicator self(MPI_COMM_SELF);
    ProcessGrid single;
    single.cart = MPI_COMM_SELF;
    one = compute(self, single, Geometry::single_rank(kGlobal));
  }
  for (const std::string& t : transports) run_transport(comm, grid, geom, t, procs, one);
}
