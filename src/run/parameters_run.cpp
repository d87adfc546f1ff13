// parameters_run.cpp: the declaration of the keys of [lattice], [comm], [gauge], [generate], [dirac], [solver],
// [output], [log] and [metrics] (see parameters.hpp for what each field of a Param means). The order here is the
// order of reading, of the physics_inputs lines and of the reference.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "src/run/ensemble.hpp"
#include "src/run/parameters_detail.hpp"

namespace emprism::run::detail {

namespace {

constexpr const char* kExtentNames[4] = {"Lx", "Ly", "Lz", "Lt"};

bool always(const View&) { return true; }

void declare_lattice(std::vector<Param>& out) {
  Param p;
  p = Param{};
  p.table = "lattice", p.key = "extents", p.type = "4 integers", p.required = true;
  p.rule = "each even and >= 2";
  p.doc = "Global extents (Lx, Ly, Lz, Lt). The MPI process grid must also split them into even local extents.";
  p.example = "[8, 8, 8, 16]", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) {
    const std::vector<io::InputValue> a = v.array(4, "4 integers");
    for (int mu = 0; mu < 4; ++mu) {
      const std::int64_t e = a[static_cast<std::size_t>(mu)].integer();
      const std::string named = std::string(kExtentNames[mu]) + " = " + std::to_string(e);
      if (e < 2) v.fail(named + " is too small; every extent must be even and >= 2");
      if (e > kIntMax) v.fail(named + " is too large; every extent must be <= " + std::to_string(kIntMax));
      if (e % 2 != 0) v.fail(named + " is odd; every extent must be even");
      t.cfg.lattice.extents[static_cast<std::size_t>(mu)] = static_cast<int>(e);
    }
  };
  p.show = [](const View& v) { return str(v.cfg.lattice.extents); };
  out.push_back(p);

  p = Param{};
  p.table = "lattice", p.key = "procs", p.type = "4 integers", p.rule = "each >= 1, product = the number of ranks";
  p.def_doc =
      "chosen for the job's rank count to minimise the halo surface (the total face volume of the split "
      "directions, both sides); among equally good grids, t is split first, then z, y, x";
  p.doc =
      "MPI process grid (px, py, pz, pt); each must divide its extent into an even local extent (e.g. 16 / pt "
      "even). A grid that does not fit stops the program with a line suggesting one that does. Left unset in "
      "this example so that it runs on any rank count that fits (the line below is for 4 ranks).";
  p.example = "[1, 1, 2, 2]", p.example_active = false;
  // Only shape and sign here: the fit to the extents and the rank count is comm/process_grid.cpp's check.
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.lattice.procs = read_int4(v, 1, kIntMax); };
  out.push_back(p);
}

void declare_comm(std::vector<Param>& out) {
  Param p;
  p.table = "comm", p.key = "force_halo", p.type = "4 booleans", p.def = "[false, false, false, false]";
  p.doc =
      "Exchange halos through MPI in these directions (x, y, z, t) even where one rank spans the whole extent; "
      "the rank is then its own neighbour. For testing and timing the halo code on few ranks; directions split "
      "over ranks always exchange.";
  p.example = "[false, false, false, true]";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.comm.force_halo = read_bool4(v); };
  out.push_back(p);

  p = Param{};
  p.table = "comm", p.key = "transport", p.type = "string", p.def = "\"auto\"", p.rule = transports().listed();
  p.doc =
      "How the halo faces travel: \"staged\" (GPU: asynchronous copies through pinned host memory, MPI in "
      "between), \"gpu_aware\" (device buffers straight to a GPU-aware MPI; an input error when the MPI library "
      "does not say it is), \"peer\" (ranks on one node, and a rank that is its own neighbour, store faces "
      "straight into the receiver's buffers: CUDA/HIP IPC, MPI shared memory on the CPU backend; other directions "
      "are tuned between the others) or \"auto\": each operator times the candidates on its first use and keeps "
      "the fastest (the ranks agree; logged). Every choice gives bitwise the same results.";
  p.example = "\"auto\"";
  p.read = [](const io::InputValue& v, Target& t) {
    t.cfg.comm.transport = transports().read(v);
    t.cfg.comm.gpu_aware_in_auto = true;
    t.cfg.comm.transport_key = "comm.transport";
  };
  out.push_back(p);

  p = Param{};
  p.table = "comm", p.key = "gpu_aware", p.type = "true, false or \"auto\"";
  p.def_doc = "not given (comm.transport decides)";
  p.doc =
      "The older key for the transport, still read: true = \"gpu_aware\", \"auto\" = \"auto\", false = \"auto\" "
      "without device memory to MPI. Give comm.transport or comm.gpu_aware, not both.";
  p.example = "true", p.example_active = false;
  p.read = [](const io::InputValue& v, Target& t) {
    using T = CommConfig::Transport;
    CommConfig& c = t.cfg.comm;
    if (v.is_boolean()) {
      const bool on = v.boolean();
      c.transport = on ? T::GpuAware : T::Auto;
      c.gpu_aware_in_auto = on;
    } else if (v.is_string() && v.string() == "auto") {
      c.transport = T::Auto;
    } else {
      v.fail("expected true, false or \"auto\", got " + (v.is_string() ? "'" + v.string() + "'" : v.type_name()));
    }
    c.transport_key = v.path();
  };
  out.push_back(p);
}

void declare_gauge_source(std::vector<Param>& out) {
  Param p;
  p.table = "gauge", p.key = "source", p.type = "string", p.def = "\"unit\"", p.selector = true;
  p.rule = gauge_sources().listed();
  p.doc =
      "Where the gauge field comes from: \"unit\" (all links = identity), \"random\" (see width, seed), \"file\" "
      "(a configuration file: file, format) or \"heatbath\" (quenched Wilson action thermalised from a cold "
      "start: beta, sweeps, or_per_sweep, seed) or \"ensemble\" (every [[solve]] on every configuration of an "
      "ensemble: files, or pattern with first, last, step; the output holds /configs/<id> per configuration).";
  p.example = "\"random\"", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.source = gauge_sources().read(v); };
  p.show = [](const View& v) { return str(gauge_sources().name(v.cfg.gauge.source)); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "width", p.type = "float", p.def = "1.0", p.rule = "in [0, 1]";
  p.doc = "Random fields: spread of the links; 0 gives the unit field, 1 Haar-random SU(3).";
  p.example = "0.5";
  p.physics = [](const View& v) { return v.cfg.gauge.source == GaugeSource::Random; };
  p.read = [](const io::InputValue& v, Target& t) {
    const double w = v.real();
    if (w < 0.0 || w > 1.0) v.fail("must be in [0, 1], got " + io::format_double(w));
    t.cfg.gauge.width = w;
  };
  p.show = [](const View& v) { return str(v.cfg.gauge.width); };
  out.push_back(p);
}

bool heatbath(const View& v) { return v.cfg.gauge.source == GaugeSource::Heatbath; }
bool from_file(const View& v) { return v.cfg.gauge.source == GaugeSource::File; }
bool ensemble(const View& v) { return v.cfg.gauge.source == GaugeSource::Ensemble; }
bool from_files(const View& v) { return from_file(v) || ensemble(v); }

void declare_gauge_heatbath(std::vector<Param>& out) {
  const std::string only = "only for gauge.source = \"heatbath\"";
  Param p;
  p.table = "gauge", p.key = "beta", p.type = "float", p.def = "6.0", p.rule = "> 0";
  p.doc = "Heatbath: the Wilson gauge coupling beta = 6 / g^2.";
  p.example = "6.0", p.example_active = false, p.applies = heatbath, p.only = only, p.physics = heatbath;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.beta = read_positive(v); };
  p.show = [](const View& v) { return str(v.cfg.gauge.beta); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "sweeps", p.type = "integer", p.def = "200", p.rule = ">= 0";
  p.doc = "Heatbath: thermalisation sweeps (each a heatbath pass and or_per_sweep overrelaxation passes).";
  p.example = "200", p.example_active = false, p.applies = heatbath, p.only = only, p.physics = heatbath;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.sweeps = v.int_in(0, kIntMax); };
  p.show = [](const View& v) { return str(v.cfg.gauge.sweeps); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "or_per_sweep", p.type = "integer", p.def = "4", p.rule = "in 0..1000";
  p.doc = "Heatbath: overrelaxation passes per sweep.";
  p.example = "4", p.example_active = false, p.applies = heatbath, p.only = only, p.physics = heatbath;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.or_per_sweep = v.int_in(0, 1000); };
  p.show = [](const View& v) { return str(v.cfg.gauge.or_per_sweep); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "seed", p.type = "integer", p.def = "1", p.rule = ">= 0";
  p.doc = "Random fields and the heatbath: seed of the counter-based generator.";
  p.example = "1234";
  p.physics = [](const View& v) { return v.cfg.gauge.source == GaugeSource::Random || heatbath(v); };
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.seed = read_seed(v); };
  p.show = [](const View& v) { return str(v.cfg.gauge.seed); };
  out.push_back(p);
}

void declare_gauge_file(std::vector<Param>& out) {
  const std::string only = "only for gauge.source = \"file\"";
  Param p;
  p.table = "gauge", p.key = "file", p.type = "string", p.required = true, p.rule = "a readable file";
  p.doc = "File: the path of the gauge configuration (ILDG/SciDAC LIME, NERSC, openQCD or MILC).";
  p.example = "\"conf.lime\"", p.example_active = false, p.applies = from_file, p.only = only, p.physics = from_file;
  p.read = [](const io::InputValue& v, Target& t) {
    const std::string file = read_nonempty(v);
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec))
      v.fail("'" + file + "' is a directory, not a gauge configuration file");
    if (std::FILE* f = std::fopen(file.c_str(), "rb")) {
      std::fclose(f);
    } else {
      v.fail("cannot read '" + file + "': " + std::strerror(errno));
    }
    t.cfg.gauge.file = file;
  };
  p.show = [](const View& v) { return str(v.cfg.gauge.file); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "format", p.type = "string", p.def = "\"auto\"", p.rule = gauge_formats().listed();
  p.doc = "File and ensemble: the format of the files; \"auto\" detects it from each file's header.";
  p.example = "\"auto\"", p.example_active = false, p.applies = from_files, p.physics = from_files;
  p.only = "only for gauge.source = \"file\" or \"ensemble\"";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.format = gauge_formats().read(v); };
  p.show = [](const View& v) { return str(gauge_formats().name(v.cfg.gauge.format)); };
  out.push_back(p);
}

void declare_gauge_ensemble(std::vector<Param>& out) {
  const std::string only = "only for gauge.source = \"ensemble\"";
  Param p;
  p.table = "gauge", p.key = "files", p.type = "string or array of strings", p.rule = "readable files, unique ids";
  p.def_doc = "none (give files or pattern)";
  p.doc =
      "Ensemble: a glob (\"cfg/conf.*.lime\", sorted naturally: conf.9 before conf.10) or a list of files (in "
      "its order). Each configuration's id, its group /configs/<id>, is the number in its file name when every "
      "name holds exactly one, else the name without its extension.";
  p.example = "\"cfg_*.ildg\"", p.example_active = false, p.applies = ensemble, p.only = only;
  p.physics = ensemble;  // the expanded list, whichever form gave it
  p.read = [](const io::InputValue& v, Target& t) {
    GaugeConfig& g = t.cfg.gauge;
    g.files_glob = v.is_string();
    g.files.clear();
    if (g.files_glob) {
      g.files.push_back(read_nonempty(v));
      return;
    }
    if (!v.is_array()) v.fail("expected a string (a glob) or an array of strings, got " + v.type_name());
    for (const io::InputValue& f : v.array_of("strings")) g.files.push_back(read_nonempty(f));
  };
  p.show = [](const View& v) { return ensemble_text(v.cfg.gauge.members); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "pattern", p.type = "string", p.rule = "one %d or %0<width>d";
  p.def_doc = "none (give files or pattern)";
  p.doc =
      "Ensemble: the file name of configuration n, with n as %d or zero-padded as %06d ([generate] writes "
      "<prefix>_%06d.<format>); with first, last, step as openQCD's [Configurations]. The id is n.";
  p.example = "\"cfg_%06d.ildg\"", p.example_active = false, p.applies = ensemble, p.only = only;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.pattern = read_nonempty(v); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "first", p.type = "integer", p.rule = ">= 0, <= last";
  p.def_doc = "required with pattern";
  p.doc = "Ensemble with pattern: the first configuration number (a Slurm array task sets first and last by --set).";
  p.example = "210", p.example_active = false, p.applies = ensemble, p.only = only;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.first = v.int_in(0, kIntMax); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "last", p.type = "integer", p.rule = ">= first";
  p.def_doc = "required with pattern";
  p.doc = "Ensemble with pattern: the last configuration number (included when first + k * step).";
  p.example = "240", p.example_active = false, p.applies = ensemble, p.only = only;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.last = v.int_in(0, kIntMax); };
  out.push_back(p);

  p = Param{};
  p.table = "gauge", p.key = "step", p.type = "integer", p.rule = "> 0", p.def_doc = "1";
  p.doc = "Ensemble with pattern: the step between configuration numbers.";
  p.example = "10", p.example_active = false, p.applies = ensemble, p.only = only;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.gauge.step = v.int_in(1, kIntMax); };
  out.push_back(p);
}

bool generating(const View& v) { return v.cfg.generate.enabled; }

void declare_generate(std::vector<Param>& out) {
  Param p;
  p.table = "generate", p.key = "count", p.type = "integer", p.def = "1", p.rule = "> 0";
  p.doc = "Configurations to write.";
  p.example = "4", p.physics = generating;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.generate.count = v.int_in(1, kIntMax); };
  p.show = [](const View& v) { return str(v.cfg.generate.count); };
  out.push_back(p);

  p = Param{};
  p.table = "generate", p.key = "every", p.type = "integer", p.def = "10", p.rule = "> 0";
  p.doc = "Heatbath sweeps between two configurations.";
  p.example = "10", p.physics = generating;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.generate.every = v.int_in(1, kIntMax); };
  p.show = [](const View& v) { return str(v.cfg.generate.every); };
  out.push_back(p);

  p = Param{};
  p.table = "generate", p.key = "format", p.type = "string", p.def = "\"ildg\"", p.rule = generate_formats().listed();
  p.doc = "File format of the configurations (64-bit, big-endian, with checksums).";
  p.example = "\"ildg\"", p.physics = generating;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.generate.format = generate_formats().read(v); };
  p.show = [](const View& v) { return str(generate_formats().name(v.cfg.generate.format)); };
  out.push_back(p);

  p = Param{};
  p.table = "generate", p.key = "prefix", p.type = "string", p.def = "\"cfg\"", p.rule = "not empty";
  p.doc = "Path prefix of the files: <prefix>_<sweep, 6 digits>.<format>.";
  p.example = "\"cfg\"", p.physics = generating;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.generate.prefix = read_nonempty(v); };
  p.show = [](const View& v) { return str(v.cfg.generate.prefix); };
  out.push_back(p);
}

void declare_dirac(std::vector<Param>& out) {
  Param p;
  p.table = "dirac", p.key = "kappa", p.type = "float", p.required = true, p.rule = "> 0";
  p.doc = "Hopping parameter kappa.";
  p.example = "0.1250", p.physics = always, p.attribute = "kappa";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.dirac.kappa = read_positive(v); };
  p.show = [](const View& v) { return str(v.cfg.dirac.kappa); };
  p.value = [](const View& v) -> InputAttribute::Value { return v.cfg.dirac.kappa; };
  out.push_back(p);

  p = Param{};
  p.table = "dirac", p.key = "csw", p.type = "float", p.def = "0.0", p.rule = ">= 0";
  p.doc = "Clover coefficient c_sw; 0 skips the clover term.";
  p.example = "1.0", p.physics = always, p.attribute = "csw";
  p.read = [](const io::InputValue& v, Target& t) {
    const double csw = v.real();
    if (csw < 0.0) v.fail("must be >= 0, got " + io::format_double(csw));
    t.cfg.dirac.csw = csw;
  };
  p.show = [](const View& v) { return str(v.cfg.dirac.csw); };
  p.value = [](const View& v) -> InputAttribute::Value { return v.cfg.dirac.csw; };
  out.push_back(p);

  p = Param{};
  p.table = "dirac", p.key = "theta_over_pi", p.type = "4 floats", p.def = "[0.0, 0.0, 0.0, 1.0]";
  p.doc = "Boundary phases theta_mu / pi of the fermion fields in (x, y, z, t); the default is antiperiodic in t.";
  p.example = "[0.0, 0.0, 0.0, 1.0]", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.dirac.theta_over_pi = read_float4(v); };
  p.show = [](const View& v) { return str(v.cfg.dirac.theta_over_pi); };
  out.push_back(p);

  p = Param{};
  p.table = "dirac", p.key = "reconstruct", p.type = "integer", p.def = "18", p.rule = "18, 12 or 8";
  p.doc =
      "Reals stored per link of the operator: 18 (all), 12 (two rows; the third from their cross product) or 8 "
      "(QUDA's parametrisation); 12 and 8 move fewer bytes and need links in SU(3) (checked: |U U^dag - 1|, "
      "|det U - 1| and the unpacked link within 1e-10, or 1e-5 for a single-precision solver). Unpacking 8 costs "
      "arithmetic (two square roots and three reciprocals per link), which takes part of what its bytes save: on "
      "an H200 at 32^3x64 a double solve took 0.282 s with 8 and 0.305 s with 12, a mixed/single one 0.193 s "
      "against 0.207 s (BENCHMARKS.md, 2026-11-28). Not a physics input: the result changes only by rounding, and a "
      "resumed run may change it.";
  p.example = "12", p.attribute = "reconstruct";
  p.read = [](const io::InputValue& v, Target& t) {
    const int rc = v.int_in(8, 18);
    if (rc != 18 && rc != 12 && rc != 8) v.fail("must be 18, 12 or 8, got " + std::to_string(rc));
    t.cfg.dirac.reconstruct = static_cast<int>(rc);
  };
  p.value = [](const View& v) -> InputAttribute::Value { return v.cfg.dirac.reconstruct; };
  out.push_back(p);
}

void declare_solver(std::vector<Param>& out) {
  Param p;
  p.table = "solver", p.key = "precision", p.type = "string", p.def = "\"single\"", p.rule = precisions().listed();
  p.doc =
      "Floating-point precision: \"single\" (fields, operator and CG in fp32; reductions in fp64; a true "
      "residual much below 1e-6 is out of its reach), \"double\" (everything in fp64), or \"mixed\" (the solution "
      "and the true residual in fp64, the CG in fp32 with reliable updates from the fp64 residual: fp64 accuracy "
      "at mostly fp32 cost).";
  p.example = "\"double\"", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.solver.precision = precisions().read(v); };
  p.show = [](const View& v) { return str(precisions().name(v.cfg.solver.precision)); };
  out.push_back(p);

  p = Param{};
  p.table = "solver", p.key = "tol", p.type = "float", p.def = "1e-6", p.rule = "0 < tol < 1";
  p.doc = "Target relative true residual |b - M x| / |b| of the full system.";
  p.example = "1e-8", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.solver.tol = read_tol(v); };
  p.show = [](const View& v) { return str(v.cfg.solver.tol); };
  out.push_back(p);

  p = Param{};
  p.table = "solver", p.key = "max_iter", p.type = "integer", p.def = "10000", p.rule = "> 0";
  p.doc = "Maximum total CG iterations per solve.";
  p.example = "5000", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.solver.max_iter = v.int_in(1, kIntMax); };
  p.show = [](const View& v) { return str(v.cfg.solver.max_iter); };
  out.push_back(p);

  p = Param{};
  p.table = "solver", p.key = "reliable_delta", p.type = "float", p.def = "0.1", p.rule = "0 < reliable_delta < 1";
  p.doc =
      "Mixed precision: the true residual (fp64) replaces the fp32 CG's iterated one whenever the latter has fallen "
      "by this factor below the largest since the last such reliable update (QUDA's reliable_delta); the CG goes on "
      "with its search direction. Smaller: fewer fp64 operator applications, more drift of the fp32 recursion.";
  p.example = "0.1", p.physics = always, p.attribute = "reliable_delta";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.solver.reliable_delta = read_tol(v); };
  p.show = [](const View& v) { return str(v.cfg.solver.reliable_delta); };
  p.value = [](const View& v) -> InputAttribute::Value { return v.cfg.solver.reliable_delta; };
  out.push_back(p);

  p = Param{};
  p.table = "solver", p.key = "sloppy", p.type = "string", p.def = "\"single\"", p.rule = sloppies().listed();
  p.doc =
      "Mixed precision only (\"half\" or \"single_fp64\" with another solver.precision is an input error): the "
      "fields of the sloppy CG in fp32 (\"single\"); in \"half\", 16-bit fixed point with one fp32 norm per chiral "
      "half of a site, 56 instead of 96 bytes per spinor, and the sloppy operator's clover term A^-1 likewise with one "
      "fp32 norm per 6x6 chiral block, 152 instead of 288 bytes per site (the operator's arithmetic and links stay "
      "fp32; the CG's partial solution too); or in fp32 with every arithmetic of the sloppy operator and vectors in "
      "fp64 (\"single_fp64\": the bytes of \"single\", fp64 flops and registers). fp32 arithmetic inside the "
      "stencil costs the fp64 result iterations near critical kappa on smooth fields (unit gauge, kappa 0.124, 8^3x16 "
      "to 16^3x32: 13-23% more than the double CG with \"single\", 26-29% with \"half\"); \"single_fp64\" needs "
      "the double CG's count. \"half\" and \"single_fp64\" need dirac.reconstruct 18 or 12. Changes the result "
      "only by rounding.";
  p.example = "\"half\"", p.example_active = false, p.attribute = "sloppy";  // (the example is in double)
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.solver.sloppy = sloppies().read(v); };
  p.show = [](const View& v) { return str(sloppies().name(v.cfg.solver.sloppy)); };
  p.value = [](const View& v) -> InputAttribute::Value { return sloppies().name(v.cfg.solver.sloppy); };
  out.push_back(p);

  p = Param{};
  p.table = "solver", p.key = "stop", p.type = "string", p.def = "\"full\"", p.rule = stops().listed();
  p.doc =
      "The residual that must meet tol: \"full\", the true residual |b - M x| / |b| of the full system; or "
      "\"normal\", QUDA's criterion for its even-odd CG, the true residual |c - A x_o| / |c| of the normal system "
      "(A = Mhat^dag Mhat, c = Mhat^dag bhat), for one-to-one comparisons with QUDA: fewer iterations, and the full "
      "residual, still computed and written as true_residual, may exceed tol (by a few times near critical kappa).";
  p.example = "\"full\"", p.physics = always, p.attribute = "stop";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.solver.stop = stops().read(v); };
  p.show = [](const View& v) { return str(stops().name(v.cfg.solver.stop)); };
  p.value = [](const View& v) -> InputAttribute::Value { return stops().name(v.cfg.solver.stop); };
  out.push_back(p);
}

void declare_output(std::vector<Param>& out) {
  Param p;
  p.table = "output", p.key = "file", p.type = "string", p.required = true, p.rule = "not empty";
  p.doc = "Path of the HDF5 output file.";
  p.example = "\"full_reference.h5\"";
  p.read = [](const io::InputValue& v, Target& t) {
    const std::string file = read_nonempty(v);
    if (file.find('\0') != std::string::npos) v.fail("must not contain a NUL character");
    t.cfg.output.file = file;
  };
  out.push_back(p);

  p = Param{};
  p.table = "output", p.key = "overwrite", p.type = "boolean", p.def = "false";
  p.doc = "Replace an existing file of that name (true) or stop with an error (false).";
  p.example = "true";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.output.overwrite = v.boolean(); };
  out.push_back(p);

  p = Param{};
  p.table = "output", p.key = "fields", p.type = "boolean", p.def = "true";
  p.doc =
      "Write each solve's solution and source (true), or only its attributes and residual history (false: the "
      "fields are 12 complex numbers per site each, 680 MB per field at 48^3x64 in single precision).";
  p.example = "true", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.output.fields = v.boolean(); };
  p.show = [](const View& v) { return str(v.cfg.output.fields); };
  out.push_back(p);

  p = Param{};
  p.table = "output", p.key = "write_gauge", p.type = "boolean", p.def = "false";
  p.doc = "Also write the gauge links to /gauge/links (true) or only the gauge summary (false).";
  p.example = "true", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.output.write_gauge = v.boolean(); };
  p.show = [](const View& v) { return str(v.cfg.output.write_gauge); };
  out.push_back(p);

  p = Param{};
  p.table = "output", p.key = "io", p.type = "string", p.def = "\"auto\"", p.rule = output_ios().listed();
  p.doc =
      "How distributed fields reach the file: \"collective\" (parallel HDF5: every rank writes its own block; an "
      "error if HDF5 was built without MPI), \"gather\" (through rank 0, one timeslice at a time; works with any "
      "HDF5) or \"auto\" (collective when available and there is more than one rank, else gather). The file is "
      "the same either way.";
  p.example = "\"gather\"";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.output.io = output_ios().read(v); };
  out.push_back(p);

  p = Param{};
  p.table = "output", p.key = "resume", p.type = "boolean", p.def = "false";
  p.doc =
      "Continue an interrupted run: the run writes <file>.partial and renames it to <file> when every solve is "
      "done; each solve (a propagator with its correlators) is flushed there as soon as it is complete. With "
      "resume = true the solves already complete in <file>.partial are kept and not solved again, provided the "
      "physics inputs are the same (anything else is refused); if <file> itself is already complete for this "
      "input there is nothing to do. The command-line flag --resume does the same. With false an existing "
      "<file>.partial is an error unless overwrite = true.";
  p.example = "true";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.output.resume = v.boolean(); };
  out.push_back(p);
}

void declare_log_metrics(std::vector<Param>& out) {
  Param p;
  p.table = "log", p.key = "level", p.type = "string", p.def = "\"info\"", p.rule = log_levels().listed();
  p.doc = "Log verbosity.";
  p.example = "\"debug\"";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.log.level = log_levels().read(v); };
  out.push_back(p);

  p = Param{};
  p.table = "log", p.key = "progress_every", p.type = "integer", p.def = "50", p.rule = "> 0";
  p.doc = "CG iterations between progress lines.";
  p.example = "100";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.log.progress_every = v.int_in(1, kIntMax); };
  out.push_back(p);

  p = Param{};
  p.table = "log", p.key = "per_rank", p.type = "boolean", p.def = "false";
  p.doc =
      "Every rank also writes its whole log, at the level above, to <output.file>.rank<N>.log, for debugging "
      "(without it only rank 0 logs at that level; other ranks log warnings and errors only).";
  p.example = "true";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.log.per_rank = v.boolean(); };
  out.push_back(p);

  p = Param{};
  p.table = "metrics", p.key = "peak", p.type = "boolean", p.def = "true";
  p.doc = "Measure the empirical memory bandwidth (copy, triad, read) at start-up to rate the kernels against.";
  p.example = "false";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.metrics.peak = v.boolean(); };
  out.push_back(p);
}

void declare_tune(std::vector<Param>& out) {
  Param p;
  p.table = "tune", p.key = "cache", p.type = "string", p.def = "\"\"",
  p.def_doc = "none: $EMPRISM_TUNE_CACHE when set, else no file (tuned in memory, anew in every run)";
  p.rule = "its directory exists";
  p.doc =
      "Tune-cache file, read at start-up and written at the end with this run's choices merged in (under a lock, "
      "atomically: several ranks and jobs may share it). It wins over the environment variable EMPRISM_TUNE_CACHE. "
      "A corrupt file, or one written by another build or for another device, is ignored with a warning and "
      "rewritten.";
  p.example = "\"tunecache.tsv\"";
  p.read = [](const io::InputValue& v, Target& t) {
    const std::string file = v.string();
    if (file.find('\0') != std::string::npos) v.fail("must not contain a NUL character");
    const std::size_t slash = file.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : file.substr(0, slash == 0 ? 1 : slash);
    if (!file.empty() && !std::filesystem::is_directory(dir)) v.fail("directory '" + dir + "' does not exist");
    t.cfg.tune.cache = file;
  };
  out.push_back(p);

  p = Param{};
  p.table = "tune", p.key = "enabled", p.type = "boolean", p.def = "true";
  p.doc =
      "Tune the hot kernels' launches (true), or launch every kernel with its default variant (false: nothing is "
      "timed, the cache is neither read nor written).";
  p.example = "true";
  p.read = [](const io::InputValue& v, Target& t) { t.cfg.tune.enabled = v.boolean(); };
  out.push_back(p);
}

}  // namespace

void declare_run_keys(std::vector<Param>& out) {
  declare_lattice(out);
  declare_comm(out);
  declare_gauge_source(out);
  declare_gauge_heatbath(out);
  declare_gauge_file(out);
  declare_gauge_ensemble(out);
  declare_generate(out);
  declare_dirac(out);
  declare_solver(out);
  declare_output(out);
  declare_log_metrics(out);
  declare_tune(out);
}

}  // namespace emprism::run::detail
