// schema.cpp: the output file's groups, attributes and datasets (see schema.hpp), written through io/h5: each
// writer checks its arguments in one agreed step, creates its objects in the next, then writes the fields.
#include "src/run/schema.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "comm/collectives.hpp"
#include "kernels/errors.hpp"

namespace emprism::run {

using io::h5::FieldIo;
using io::h5::FieldShape;
using io::h5::FieldWriter;
using io::h5::File;
using io::h5::Object;

namespace {

// Axis names of the datasets (attribute `dims`, slowest first; docs/conventions.md section 13).
constexpr char kSpinorDims[] = "t,z,y,x,spin,colour";
constexpr char kPropagatorDims[] = "source_spin,source_colour,t,z,y,x,spin,colour";
constexpr char kLinkDims[] = "t,z,y,x,mu,row,col";
constexpr char kTimeDims[] = "t";
constexpr char kLatticeUnits[] = "lattice units";

void check_name(const File& file, const std::string& name, const std::string& what, const std::string& rule) {
  if (name.empty() || name == "." || name.find('/') != std::string::npos)
    throw RuntimeFailure("HDF5 output '" + file.label() + "': cannot write " + what + " '" + name + "': " + rule);
}

void write_inputs(Object& g, const std::vector<InputAttribute>& inputs) {
  for (const InputAttribute& a : inputs) {
    std::visit([&](const auto& v) { g.attr(a.name.c_str(), v); }, a.value);
  }
}

// The attributes every /solves/<name> group has (a propagator's sum or combine those of its columns).
struct SolveAttributes {
  int iterations = 0, restarts = 0;
  double true_residual = 0, seconds = 0;
  bool converged = false;
  std::string source_kind;
};

void write_solve_attributes(Object& g, const SolveAttributes& a, const std::vector<InputAttribute>& inputs) {
  g.attr("iterations", a.iterations);
  g.attr("true_residual", a.true_residual);
  g.attr_bool("converged", a.converged);
  g.attr("seconds", a.seconds);
  write_inputs(g, inputs);
  g.attr("restarts", a.restarts);
  g.attr("source_kind", a.source_kind);
}

// Row layouts of the metrics tables in memory.
struct KernelRow {
  const char* name;
  std::int64_t calls;
  double total_s, mean_s, min_s, flops, bytes, gbs, percent_of_peak;
  std::int32_t registers, spill_bytes, shared_bytes, block;
  double occupancy;
  const char* variant;
};

struct RankRow {
  std::int32_t rank;
  double compute_s, halo_wait_s, reduction_s, reductions_per_iteration, reduction_wait_s;
};

struct CommRowMem {
  std::int32_t rank, precision_bits;
  char direction[2];
  char transport[10];
  char exterior[6];
  std::int64_t calls;
  double bytes_per_call, exchange_s, exposed_s, hidden_fraction;
};

using Col = io::h5::Column;
const std::vector<Col> kKernelColumns = {
    {"name", Col::Type::Text, offsetof(KernelRow, name)},
    {"calls", Col::Type::Int64, offsetof(KernelRow, calls)},
    {"total_s", Col::Type::Float64, offsetof(KernelRow, total_s)},
    {"mean_s", Col::Type::Float64, offsetof(KernelRow, mean_s)},
    {"min_s", Col::Type::Float64, offsetof(KernelRow, min_s)},
    {"flops", Col::Type::Float64, offsetof(KernelRow, flops)},
    {"bytes", Col::Type::Float64, offsetof(KernelRow, bytes)},
    {"gbs", Col::Type::Float64, offsetof(KernelRow, gbs)},
    {"percent_of_peak", Col::Type::Float64, offsetof(KernelRow, percent_of_peak)},
    {"registers", Col::Type::Int32, offsetof(KernelRow, registers)},
    {"spill_bytes", Col::Type::Int32, offsetof(KernelRow, spill_bytes)},
    {"shared_bytes", Col::Type::Int32, offsetof(KernelRow, shared_bytes)},
    {"block", Col::Type::Int32, offsetof(KernelRow, block)},
    {"occupancy", Col::Type::Float64, offsetof(KernelRow, occupancy)},
    {"variant", Col::Type::Text, offsetof(KernelRow, variant)},
};
const std::vector<Col> kRankColumns = {
    {"rank", Col::Type::Int32, offsetof(RankRow, rank)},
    {"compute_s", Col::Type::Float64, offsetof(RankRow, compute_s)},
    {"halo_wait_s", Col::Type::Float64, offsetof(RankRow, halo_wait_s)},
    {"reduction_s", Col::Type::Float64, offsetof(RankRow, reduction_s)},
    {"reductions_per_iteration", Col::Type::Float64, offsetof(RankRow, reductions_per_iteration)},
    {"reduction_wait_s", Col::Type::Float64, offsetof(RankRow, reduction_wait_s)},
};
const std::vector<Col> kCommColumns = {
    {"rank", Col::Type::Int32, offsetof(CommRowMem, rank)},
    {"precision_bits", Col::Type::Int32, offsetof(CommRowMem, precision_bits)},
    {"direction", Col::Type::FixedText, offsetof(CommRowMem, direction), sizeof(CommRowMem::direction)},
    {"transport", Col::Type::FixedText, offsetof(CommRowMem, transport), sizeof(CommRowMem::transport)},
    {"exterior", Col::Type::FixedText, offsetof(CommRowMem, exterior), sizeof(CommRowMem::exterior)},
    {"calls", Col::Type::Int64, offsetof(CommRowMem, calls)},
    {"bytes_per_call", Col::Type::Float64, offsetof(CommRowMem, bytes_per_call)},
    {"exchange_s", Col::Type::Float64, offsetof(CommRowMem, exchange_s)},
    {"exposed_s", Col::Type::Float64, offsetof(CommRowMem, exposed_s)},
    {"hidden_fraction", Col::Type::Float64, offsetof(CommRowMem, hidden_fraction)},
};

CommRowMem comm_row_mem(const CommRow& r) {
  CommRowMem m{};
  m.rank = r.rank;
  m.precision_bits = r.precision_bits;
  m.direction[0] = "xyzt"[r.direction & 3];
  std::snprintf(m.transport, sizeof(m.transport), "%s", r.transport.c_str());
  std::snprintf(m.exterior, sizeof(m.exterior), "%s", r.exterior.c_str());
  m.calls = r.calls;
  m.bytes_per_call = r.bytes_per_call;
  m.exchange_s = r.exchange_s;
  m.exposed_s = r.exposed_s;
  m.hidden_fraction = r.hidden_fraction;
  return m;
}

std::vector<KernelRow> kernel_rows(const std::vector<KernelMetric>& kernels) {
  std::vector<KernelRow> rows;
  rows.reserve(kernels.size());
  for (const KernelMetric& k : kernels) {
    rows.push_back(KernelRow{k.name.c_str(), k.calls, k.total_s, k.mean_s, k.min_s, k.flops, k.bytes, k.gbs,
                             k.percent_of_peak, k.res.registers, k.res.spill_bytes, k.res.shared_bytes, k.res.block,
                             k.res.occupancy, k.variant.c_str()});
  }
  return rows;
}

// The correlators of one momentum: in the group itself for (0, 0, 0), in p<nx>_<ny>_<nz> for the others.
void write_momentum(Object& g, const CorrelatorRecord& rec, const std::array<int, 3>& p) {
  Object sub;
  Object* where = &g;
  if (p != std::array<int, 3>{0, 0, 0}) {
    sub = g.create_group("p" + std::to_string(p[0]) + "_" + std::to_string(p[1]) + "_" + std::to_string(p[2]));
    where = &sub;
  }
  Object meff = where->create_group("effective_mass");
  for (const CorrelatorRecord::Entry& e : rec.entries) {
    if (e.momentum != p) continue;
    Object d = where->write(e.channel, {e.values.size()}, e.values.data());
    d.attr("gamma_sink", e.gamma_sink);
    d.attr("gamma_source", e.gamma_source);
    d.attr("time_parity", e.time_parity);
    d.attr_ints("momentum", {3}, {e.momentum[0], e.momentum[1], e.momentum[2]});
    d.attr("dims", std::string(kTimeDims));
    Object m = meff.write(e.channel, {e.effective_mass.size()}, e.effective_mass.data());
    m.attr("form", std::string(e.time_parity > 0 ? "cosh" : "sinh"));
    m.attr("dims", std::string(kTimeDims));
    m.attr("units", std::string(kLatticeUnits));
  }
}

}  // namespace

void write_root(File& file, const RootInfo& info) {
  file.step([&] {
    Object r = file.root();
    r.attr("program_version", info.program_version);
    r.attr("git_hash", info.git_hash);
    r.attr("date", info.date);
    r.attr("backend", info.backend);
    r.attr("device", info.device);
    r.attr("precision", info.precision);
    r.attr("ranks", info.ranks);
    r.attr("process_grid", info.process_grid);
    r.attr("extents", info.extents);
    r.attr("physics_inputs", info.physics_inputs);
    r.attr("input_hash", info.input_hash);
  });
}

void write_ensemble_list(File& file, const std::vector<EnsembleMember>& members) {
  std::vector<std::string> ids, files;
  for (const EnsembleMember& m : members) {
    ids.push_back(m.id);
    files.push_back(m.file);
  }
  file.step([&] {
    Object r = file.root();
    r.attr_strings("config_ids", ids);
    r.attr_strings("config_files", files);
  });
}

void write_input(File& file, const std::string& toml_text) {
  file.step([&] { file.root().write_string("input", toml_text); });
}

void write_gauge(File& file, const GaugeInfo& gauge, const std::array<int, 4>& extents) {
  write_gauge(file, gauge, BlockLayout::whole(extents), gauge.links.empty() ? nullptr : &gauge.links);
}

void write_gauge(File& file, const GaugeInfo& gauge, const BlockLayout& block, const std::vector<cplx>* local_links) {
  const FieldShape field{"/gauge/links", {4, 3, 3}, false};
  FieldWriter fields(file, block, local_links != nullptr);
  bool links = false;
  file.step([&] {
    links = fields.has_data();
    fields.check_has_data(field.path);
    if (!links) return;
    fields.check_blocks("dataset '/gauge/links'");
    fields.check_size(local_links->size(), field);
  });
  Object group, dset;
  file.step([&] {
    if (links) fields.reserve(field);
    group = file.root().create_group("gauge");
    group.attr("plaquette", gauge.plaquette);
    group.attr("link_trace", gauge.link_trace);
    group.attr("source", gauge.source);
    group.attr("file", gauge.file);
    group.attr("format", gauge.format);
    group.attr("checksum", gauge.checksum);
    if (!links) return;
    dset = fields.create(group, "links", field);
    dset.attr("dims", std::string(kLinkDims));
  });
  if (!links) return;
  fields.write(dset, field, {}, local_links->data());
  file.step([&] { fields.check_written(); });
}

void write_solve(File& file, const SolveRecord& rec, const BlockLayout& block) {
  const std::string path = "/solves/" + rec.name;
  const FieldShape sol{path + "/solution", {4, 3}, rec.single_precision};
  const FieldShape src{path + "/source", {4, 3}, rec.single_precision};
  FieldWriter fields(file, block);
  // residual_history is rank 0's; every rank that creates the dataset needs its length.
  std::uint64_t history = rec.residual_history.size();
  if (file.mode() == FieldIo::Collective) broadcast(file.comm(), history);
  file.step([&] {
    check_name(file, rec.name, "solve", "a solve name must be non-empty and contain no '/'");
    fields.check_blocks("group '" + path + "'");
    if (!rec.write_fields) return;
    fields.check_size(rec.solution.size(), sol);
    fields.check_size(rec.source.size(), src);
  });
  Object group, sol_dset, src_dset;
  file.step([&] {
    if (rec.write_fields) fields.reserve(sol);
    group = file.root().open_or_create_group("solves").create_group(rec.name);
    write_solve_attributes(
        group,
        SolveAttributes{rec.iterations, rec.restarts, rec.true_residual, rec.seconds, rec.converged, rec.source_kind},
        rec.inputs);
    if (!rec.write_fields) return;
    sol_dset = fields.create(group, "solution", sol);
    src_dset = fields.create(group, "source", src);
    sol_dset.attr("dims", std::string(kSpinorDims));
    src_dset.attr("dims", std::string(kSpinorDims));
  });
  if (rec.write_fields) {
    fields.write(sol_dset, sol, {}, rec.solution.data());
    fields.write(src_dset, src, {}, rec.source.data());
  }
  file.step([&] {
    fields.check_written();
    group.write("residual_history", {history}, rec.residual_history.data()).attr("dims", std::string("iteration"));
  });
}

void write_propagator(File& file, const PropagatorRecord& rec, const BlockLayout& block) {
  const std::string path = "/solves/" + rec.name;
  const FieldShape prop{path + "/propagator", {4, 3}, rec.single_precision, {4, 3}};
  FieldWriter fields(file, block);
  // The residual histories are rank 0's; every rank that creates the datasets needs their lengths.
  std::array<std::uint64_t, 12> history{};
  for (int k = 0; k < 12; ++k) history[k] = rec.residual_history[k].size();
  if (file.mode() == FieldIo::Collective) broadcast(file.comm(), history);
  file.step([&] {
    check_name(file, rec.name, "solve", "a solve name must be non-empty and contain no '/'");
    fields.check_blocks("group '" + path + "'");
    if (!rec.write_fields) return;
    if (rec.columns == nullptr)
      throw RuntimeFailure("HDF5 output '" + file.label() + "': cannot write dataset '" + prop.path +
                           "': no columns given");
    for (const auto& column : *rec.columns) fields.check_size(column.size(), prop);
  });
  Object group, dset;
  file.step([&] {
    if (rec.write_fields) fields.reserve(prop);
    group = file.root().open_or_create_group("solves").create_group(rec.name);
    SolveAttributes a{0, 0, 0, 0, true, "propagator"};
    std::vector<std::int32_t> column_iterations;
    std::vector<double> column_residual;
    for (int k = 0; k < 12; ++k) {
      a.iterations += rec.iterations[k];
      a.restarts += rec.restarts[k];
      a.seconds += rec.seconds[k];
      a.true_residual = std::max(a.true_residual, rec.true_residual[k]);
      a.converged = a.converged && rec.converged[k];
      column_iterations.push_back(rec.iterations[k]);
      column_residual.push_back(rec.true_residual[k]);
    }
    write_solve_attributes(group, a, rec.inputs);
    group.attr("smeared_plaquette", rec.smeared_plaquette);
    group.write("column_iterations", {4, 3}, column_iterations.data())
        .attr("dims", std::string("source_spin,source_colour"));
    group.write("column_true_residual", {4, 3}, column_residual.data())
        .attr("dims", std::string("source_spin,source_colour"));
    Object histories = group.create_group("residual_history");
    for (int k = 0; k < 12; ++k)
      histories
          .write("s" + std::to_string(k / 3) + "c" + std::to_string(k % 3), {history[k]},
                 rec.residual_history[k].data())
          .attr("dims", std::string("iteration"));
    if (!rec.write_fields) return;
    dset = fields.create(group, "propagator", prop);
    dset.attr("dims", std::string(kPropagatorDims));
  });
  if (!rec.write_fields) return;
  for (std::uint64_t k = 0; k < 12; ++k) fields.write(dset, prop, {k / 3, k % 3}, (*rec.columns)[k].data());
  file.step([&] { fields.check_written(); });
}

void write_correlators(File& file, const CorrelatorRecord& rec) {
  file.step([&] {
    check_name(file, rec.name, "correlators", "a name must be non-empty and contain no '/'");
    Object g = file.root().open_or_create_group("correlators").create_group(rec.name);
    g.attr("source_site", rec.source_site);
    std::vector<std::int32_t> momenta;
    for (const auto& p : rec.momenta) momenta.insert(momenta.end(), p.begin(), p.end());
    g.attr_ints("momenta", {rec.momenta.size(), 3}, momenta);
    g.attr_strings("channels", rec.channels);
    g.attr("sink", std::string("point"));
    g.attr("convention", rec.convention);
    for (const auto& p : rec.momenta) write_momentum(g, rec, p);
    if (rec.pcac_mass.empty()) return;
    Object pcac = g.write("pcac_mass", rec.pcac_mass);
    pcac.attr("dims", std::string(kTimeDims));
    pcac.attr("units", std::string(kLatticeUnits));
  });
}

void write_complete_flag(File& file, const std::string& name) {
  file.step([&] { file.root().open_group("solves").open_group(name).attr_bool("complete", true); });
}

void write_metrics(File& file, const std::vector<KernelMetric>& kernels, const PeakBandwidth& peak,
                   const std::vector<RankTimes>& my_rows) {
  // /metrics/ranks: every rank's rows, in rank order, on rank 0.
  std::vector<RankRow> mine;
  for (const RankTimes& r : my_rows)
    mine.push_back(
        RankRow{r.rank, r.compute_s, r.halo_wait_s, r.reduction_s, r.reductions_per_iteration, r.reduction_wait_s});
  const std::vector<RankRow> rows = gather_rows(file.comm(), mine);
  std::uint64_t total_rows = rows.size();
  broadcast(file.comm(), total_rows);
  // The kernel table is rank 0's; every rank that creates the dataset needs its length.
  std::uint64_t nk = kernels.size();
  if (file.mode() == FieldIo::Collective) broadcast(file.comm(), nk);
  file.step([&] {
    Object metrics = file.root().create_group("metrics");
    Object p = metrics.create_group("peak");
    p.attr("copy_gbs", peak.copy_gbs);
    p.attr("triad_gbs", peak.triad_gbs);
    p.attr("read_gbs", peak.read_gbs);
    p.attr("peak_gbs", peak.peak_gbs);
    p.attr_bool("measured", peak.measured);
    const std::vector<KernelRow> krows = kernel_rows(kernels);
    metrics.write_table("kernels", kKernelColumns, sizeof(KernelRow), krows.data(), nk);
    metrics.write_table("ranks", kRankColumns, sizeof(RankRow), rows.data(), total_rows);
  });
}

void write_comm_metrics(File& file, const std::vector<CommRow>& my_rows) {
  // Every rank's rows, in rank order, on rank 0 (as /metrics/ranks).
  std::vector<CommRowMem> mine;
  for (const CommRow& r : my_rows) mine.push_back(comm_row_mem(r));
  const std::vector<CommRowMem> rows = gather_rows(file.comm(), mine);
  std::uint64_t total_rows = rows.size();
  broadcast(file.comm(), total_rows);
  file.step([&] {
    Object metrics = file.root().open_group("metrics");
    metrics.write_table("comm", kCommColumns, sizeof(CommRowMem), rows.data(), total_rows);
  });
}

}  // namespace emprism::run
