// parameters_solve.cpp: the declaration of the keys of a [[solve]] table (see parameters.hpp for what each field of
// a Param means): the keys of every type, then those of point, random, plane-wave and propagator solves. The order
// here is the order of reading, of the physics_inputs lines and of the reference.
#include <algorithm>
#include <limits>

#include "src/physics/contractions.hpp"
#include "src/run/parameters_detail.hpp"

namespace emprism::run::detail {

namespace {

constexpr const char* kExtentNames[4] = {"Lx", "Ly", "Lz", "Lt"};
constexpr const char* kCoordNames[4] = {"x", "y", "z", "t"};
constexpr KindSet kPoint = kind_bit(SolveKind::Point), kRandom = kind_bit(SolveKind::Random),
                  kWave = kind_bit(SolveKind::PlaneWave), kProp = kind_bit(SolveKind::Propagator);

bool always(const View&) { return true; }
SolveConfig& solve(Target& t) { return *t.solve; }
const SolveConfig& solve(const View& v) { return *v.solve; }

bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  if (name.find_first_not_of('.') == std::string::npos) return false;  // "." and ".." read as path steps
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

void declare_common(std::vector<Param>& out) {
  Param p;
  p.table = "solve", p.key = "name", p.type = "string", p.rule = "letters, digits, '_', '.', '-'; unique";
  p.def_doc = "\"solve<i>\", i the 0-based position of the table";
  p.doc = "Names the /solves/<name> group.";
  p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) {
    const std::string name = v.string();
    if (!valid_name(name))
      v.fail(io::quoted(name) + " is not a valid name; use letters, digits, '_', '.', '-' (not only dots)");
    solve(t).name = name;
  };
  p.show = [](const View& v) { return str(solve(v).name); };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "type", p.type = "string", p.required = true, p.selector = true;
  p.rule = solve_kind_list().listed();
  p.doc = "What is solved.";
  p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { solve(t).kind = solve_kind_list().read(v); };
  p.show = [](const View& v) { return str(solve_kind_list().name(solve(v).kind)); };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "tol", p.type = "float", p.rule = "0 < tol < 1", p.def_doc = "solver.tol";
  p.doc = "Per-solve override of solver.tol.";
  p.example = "1e-10", p.attribute = "tol";
  p.physics = [](const View& v) { return solve(v).tol.has_value(); };
  p.read = [](const io::InputValue& v, Target& t) { solve(t).tol = read_tol(v); };
  p.show = [](const View& v) { return str(*solve(v).tol); };
  p.value = [](const View& v) -> InputAttribute::Value { return solve(v).tol.value_or(v.cfg.solver.tol); };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "max_iter", p.type = "integer", p.rule = "> 0", p.def_doc = "solver.max_iter";
  p.doc = "Per-solve override of solver.max_iter.";
  p.example = "8000";
  p.physics = [](const View& v) { return solve(v).max_iter.has_value(); };
  p.read = [](const io::InputValue& v, Target& t) { solve(t).max_iter = v.int_in(1, kIntMax); };
  p.show = [](const View& v) { return str(*solve(v).max_iter); };
  out.push_back(p);
}

void declare_point_random(std::vector<Param>& out) {
  Param p;
  p.table = "solve", p.key = "site", p.kinds = kPoint | kProp, p.type = "4 integers", p.def = "[0, 0, 0, 0]";
  p.rule = "0 <= site[mu] < extents[mu]";
  p.doc = "Global coordinates (x, y, z, t) of the point source.";
  p.example = "[1, 2, 3, 4]", p.physics = always, p.attribute = "source_site", p.attribute_kinds = kProp;
  p.read = [](const io::InputValue& v, Target& t) {
    const std::vector<io::InputValue> a = v.array(4, "4 integers");
    for (int mu = 0; mu < 4; ++mu) {
      const std::int64_t x = a[static_cast<std::size_t>(mu)].integer();
      const int l = t.cfg.lattice.extents[static_cast<std::size_t>(mu)];
      if (x < 0 || x >= l)
        v.fail(std::string(kCoordNames[mu]) + " = " + std::to_string(x) + " is outside the lattice (0 <= " +
               kCoordNames[mu] + " < " + kExtentNames[mu] + " = " + std::to_string(l) + ")");
      solve(t).site[static_cast<std::size_t>(mu)] = static_cast<int>(x);
    }
  };
  p.show = [](const View& v) { return str(solve(v).site); };
  p.value = [](const View& v) -> InputAttribute::Value { return solve(v).site; };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "spin", p.kinds = kPoint, p.type = "integer", p.def = "0", p.rule = "in 0..3";
  p.doc = "Spin index of the point source.";
  p.example = "2", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { solve(t).spin = v.int_in(0, 3); };
  p.show = [](const View& v) { return str(solve(v).spin); };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "colour", p.kinds = kPoint, p.type = "integer", p.def = "0", p.rule = "in 0..2";
  p.doc = "Colour index of the point source.";
  p.example = "1", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { solve(t).colour = v.int_in(0, 2); };
  p.show = [](const View& v) { return str(solve(v).colour); };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "seed", p.kinds = kRandom, p.type = "integer", p.def = "1", p.rule = ">= 0";
  p.doc = "Seed of the source generator.";
  p.example = "42", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { solve(t).seed = read_seed(v); };
  p.show = [](const View& v) { return str(solve(v).seed); };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "distribution", p.kinds = kRandom, p.type = "string", p.def = "\"gaussian\"";
  p.rule = noise_kinds().listed();
  p.doc = "Noise distribution: gaussian (re, im ~ N(0, 1/2)) or z2 (+1 or -1).";
  p.example = "\"z2\"", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) { solve(t).noise = noise_kinds().read(v); };
  p.show = [](const View& v) { return str(noise_kinds().name(solve(v).noise)); };
  out.push_back(p);
}

void declare_plane_wave(std::vector<Param>& out) {
  Param p;
  p.table = "solve", p.key = "momentum", p.kinds = kWave, p.type = "4 integers", p.def = "[0, 0, 0, 0]";
  p.rule = "any sign";
  p.doc = "The integers n_mu of the plane wave's momentum.";
  p.example = "[1, 0, 0, -1]", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) {
    solve(t).momentum = read_int4(v, std::numeric_limits<int>::min(), kIntMax);
  };
  p.show = [](const View& v) { return str(solve(v).momentum); };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "spinor", p.kinds = kWave, p.type = "12 [re, im] pairs", p.required = true;
  p.rule = "not all zero";
  p.doc = "eta, in the order index = 3 * spin + colour.";
  p.example =
      "[\n"
      "  [1.0, 0.0], [0.0, 0.0], [0.0, 0.0],   # spin 0, colours 0..2\n"
      "  [0.0, 0.0], [0.0, 0.5], [0.0, 0.0],   # spin 1\n"
      "  [0.0, 0.0], [0.0, 0.0], [-1.0, 0.0],  # spin 2\n"
      "  [0.0, 0.0], [0.0, 0.0], [0.25, 0.25], # spin 3\n"
      "]";
  p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) {
    const std::vector<io::InputValue> pairs = v.array(12, "12 [re, im] pairs");
    bool all_zero = true;
    for (std::size_t k = 0; k < 12; ++k) {
      const std::vector<io::InputValue> pair = pairs[k].array(2, "2 floats [re, im]");
      const double re = pair[0].real(), im = pair[1].real();
      solve(t).spinor[k] = {re, im};
      if (re != 0.0 || im != 0.0) all_zero = false;
    }
    if (all_zero) v.fail("must not be all zero");
  };
  p.show = [](const View& v) {
    std::string out = "[";
    for (std::size_t k = 0; k < 12; ++k)
      out += (k ? ", [" : "[") + str(solve(v).spinor[k].real()) + ", " + str(solve(v).spinor[k].imag()) + "]";
    return out + "]";
  };
  out.push_back(p);
}

// "[\"pion\", \"axial\", ...]": every channel src/physics/contractions.hpp knows.
std::string all_channels() {
  std::string out = "[";
  for (const MesonChannel& c : meson_channels()) out += (out.size() > 1 ? ", \"" : "\"") + c.name + "\"";
  return out + "]";
}

// n and q are one lattice momentum when n_i = q_i modulo L_i in each spatial direction (exp(2 pi i n x / L) is
// periodic in n with period L).
bool same_momentum_on(const std::array<int, 3>& l, const std::array<int, 3>& n, const std::array<int, 3>& q) {
  for (std::size_t i = 0; i < 3; ++i)
    if (l[i] > 0 ? (n[i] - q[i]) % l[i] != 0 : n[i] != q[i]) return false;
  return true;
}

void declare_channels_momenta(std::vector<Param>& out) {
  Param p;
  p.table = "solve", p.key = "channels", p.kinds = kProp, p.type = "array of strings", p.def = all_channels();
  p.def_doc = "all of them";
  p.rule = "distinct, not empty";
  p.doc =
      "Meson channels, any of \"pion\" (g5-g5), \"axial\" (g4g5-g5, for the PCAC mass), \"axial_axial\" "
      "(g4g5-g4g5), \"rho\" (gi-gi), \"rho_t\" (gig4-gig4), \"a0\" (1-1), \"a1\" (gig5-gig5).";
  p.example = "[\"pion\", \"axial\", \"rho\", \"a0\"]", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) {
    const std::vector<io::InputValue> names = v.array_of("channel names");
    if (names.empty()) v.fail("must name at least one channel (leave the key out for all channels)");
    io::KeyList known;
    std::string listed;
    for (const MesonChannel& c : meson_channels()) {
      known.push_back(c.name);
      listed += (listed.empty() ? "'" : ", '") + c.name + "'";
    }
    std::vector<std::string> channels;
    for (const io::InputValue& n : names) {
      const std::string name = n.string();
      if (!find_meson_channel(name))
        n.fail("unknown channel " + io::quoted(name) + io::did_you_mean(name, known) + "; known: " + listed);
      if (std::find(channels.begin(), channels.end(), name) != channels.end())
        n.fail("channel " + io::quoted(name) + " is listed twice");
      channels.push_back(name);
    }
    solve(t).channels = channels;
  };
  p.show = [](const View& v) {
    std::string out = "[";
    for (std::size_t k = 0; k < solve(v).channels.size(); ++k) out += (k ? ", " : "") + str(solve(v).channels[k]);
    return out + "]";
  };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "momenta", p.kinds = kProp, p.type = "array of [nx, ny, nz] integer triples";
  p.def = "[]", p.rule = "distinct modulo (Lx, Ly, Lz): n and n + L are one momentum";
  p.doc = "Spatial momenta (units of 2 pi / L) besides zero momentum, which is always computed.";
  p.example = "[[1, 0, 0], [0, 1, 1]]", p.physics = always;
  p.read = [](const io::InputValue& v, Target& t) {
    std::vector<std::array<int, 3>> momenta{{0, 0, 0}};
    for (const io::InputValue& m : v.array_of("[nx, ny, nz] integer triples")) {
      const std::vector<io::InputValue> triple = m.array(3, "3 integers [nx, ny, nz]");
      std::array<int, 3> n{};
      for (std::size_t k = 0; k < 3; ++k) n[k] = triple[k].int_in(-1000000, 1000000);
      if (n == std::array<int, 3>{0, 0, 0}) continue;  // always computed
      if (std::find(momenta.begin(), momenta.end(), n) != momenta.end())
        m.fail("momentum " + str(n) + " is listed twice");
      const std::array<int, 3> l{t.cfg.lattice.extents[0], t.cfg.lattice.extents[1], t.cfg.lattice.extents[2]};
      for (const std::array<int, 3>& q : momenta)
        if (same_momentum_on(l, n, q))
          m.fail("momentum " + str(n) + " is the momentum " + str(q) + " on this lattice (n = n' mod (Lx, Ly, Lz) = " +
                 str(l) + ")" + (q == std::array<int, 3>{0, 0, 0} ? ", which is always computed" : ""));
      momenta.push_back(n);
    }
    solve(t).momenta = momenta;
  };
  p.show = [](const View& v) {
    std::string out = "[";
    for (std::size_t k = 0; k < solve(v).momenta.size(); ++k) out += (k ? ", " : "") + str(solve(v).momenta[k]);
    return out + "]";
  };
  out.push_back(p);
}

bool smeared(const View& v) { return solve(v).smearing.kind != QuarkSmearingKind::None; }
bool links_smeared(const View& v) { return solve(v).smearing.link_kind != LinkSmearingKind::None; }

void declare_quark_smearing(std::vector<Param>& out) {
  Param p;
  p.table = "solve", p.key = "smearing", p.kinds = kProp, p.type = "string", p.def = "\"none\"", p.selector = true;
  p.rule = quark_smearings().listed();
  p.doc =
      "Source smearing on the source timeslice: \"none\" (a point source), \"wuppertal\" (psi <- (psi + w H psi) "
      "/ (1 + 6 w)) or \"jacobi\" (psi <- psi_0 + w H psi), H the spatial hopping term of the (smeared) links.";
  p.example = "\"wuppertal\"", p.physics = always, p.attribute = "smearing";
  p.read = [](const io::InputValue& v, Target& t) { solve(t).smearing.kind = quark_smearings().read(v); };
  p.show = [](const View& v) { return str(quark_smearings().name(solve(v).smearing.kind)); };
  p.value = [](const View& v) -> InputAttribute::Value { return quark_smearings().name(solve(v).smearing.kind); };
  out.push_back(p);

  const std::string only = "only with smearing = \"wuppertal\" or \"jacobi\"";
  p = Param{};
  p.table = "solve", p.key = "smearing_steps", p.kinds = kProp, p.type = "integer", p.required = true;
  p.rule = "in 1..100000";
  p.doc = "Smearing iterations (with smearing).";
  p.example = "30", p.applies = smeared, p.only = only, p.physics = smeared, p.attribute = "smearing_steps";
  p.read = [](const io::InputValue& v, Target& t) { solve(t).smearing.steps = v.int_in(1, 100000); };
  p.show = [](const View& v) { return str(solve(v).smearing.steps); };
  p.value = [](const View& v) -> InputAttribute::Value { return solve(v).smearing.steps; };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "smearing_weight", p.kinds = kProp, p.type = "float", p.required = true, p.rule = "> 0";
  p.doc = "The smearing weight w (Wuppertal alpha, Jacobi kappa_s; with smearing).";
  p.example = "0.25", p.applies = smeared, p.only = only, p.physics = smeared, p.attribute = "smearing_weight";
  p.read = [](const io::InputValue& v, Target& t) { solve(t).smearing.weight = read_positive(v); };
  p.show = [](const View& v) { return str(solve(v).smearing.weight); };
  p.value = [](const View& v) -> InputAttribute::Value { return solve(v).smearing.weight; };
  out.push_back(p);
}

void declare_link_smearing(std::vector<Param>& out) {
  Param p;
  p.table = "solve", p.key = "link_smearing", p.kinds = kProp, p.type = "string", p.def = "\"none\"";
  p.selector = true, p.rule = link_smearings().listed();
  p.doc =
      "Smear the spatial links of the source timeslice for the source smearing only: \"none\", \"ape\" (weight "
      "alpha in (0, 1], staples weighted alpha / 4) or \"stout\" (weight rho > 0).";
  p.example = "\"ape\"", p.physics = always, p.attribute = "link_smearing";
  p.applies = [](const View& v) { return smeared(v) || !links_smeared(v); };
  p.only = "smeared links are used by the source smearing only; set smearing = \"wuppertal\" or \"jacobi\" too";
  p.read = [](const io::InputValue& v, Target& t) { solve(t).smearing.link_kind = link_smearings().read(v); };
  p.show = [](const View& v) { return str(link_smearings().name(solve(v).smearing.link_kind)); };
  p.value = [](const View& v) -> InputAttribute::Value { return link_smearings().name(solve(v).smearing.link_kind); };
  out.push_back(p);

  const std::string only = "only with link_smearing = \"ape\" or \"stout\"";
  p = Param{};
  p.table = "solve", p.key = "link_smearing_steps", p.kinds = kProp, p.type = "integer", p.required = true;
  p.rule = "in 1..100000";
  p.doc = "Link smearing iterations (with link_smearing).";
  p.example = "10", p.applies = links_smeared, p.only = only, p.physics = links_smeared;
  p.attribute = "link_smearing_steps";
  p.read = [](const io::InputValue& v, Target& t) { solve(t).smearing.link_steps = v.int_in(1, 100000); };
  p.show = [](const View& v) { return str(solve(v).smearing.link_steps); };
  p.value = [](const View& v) -> InputAttribute::Value { return solve(v).smearing.link_steps; };
  out.push_back(p);

  p = Param{};
  p.table = "solve", p.key = "link_smearing_weight", p.kinds = kProp, p.type = "float", p.required = true;
  p.rule = "ape: in (0, 1]; stout: > 0";
  p.doc = "The link smearing weight (APE alpha or stout rho; with link_smearing).";
  p.example = "0.5", p.applies = links_smeared, p.only = only, p.physics = links_smeared;
  p.attribute = "link_smearing_weight";
  p.read = [](const io::InputValue& v, Target& t) {
    const double w = v.real();
    const LinkSmearingKind kind = solve(t).smearing.link_kind;
    if (kind == LinkSmearingKind::Ape && !(w > 0.0 && w <= 1.0))
      v.fail("APE alpha must be in (0, 1], got " + io::format_double(w));
    if (kind == LinkSmearingKind::Stout && !(w > 0.0)) v.fail("stout rho must be > 0, got " + io::format_double(w));
    solve(t).smearing.link_weight = w;
  };
  p.show = [](const View& v) { return str(solve(v).smearing.link_weight); };
  p.value = [](const View& v) -> InputAttribute::Value { return solve(v).smearing.link_weight; };
  out.push_back(p);
}

}  // namespace

void declare_propagator(std::vector<Param>& out) {
  declare_channels_momenta(out);
  declare_quark_smearing(out);
  declare_link_smearing(out);
}

void declare_solve_keys(std::vector<Param>& out) {
  declare_common(out);
  declare_point_random(out);
  declare_plane_wave(out);
  declare_propagator(out);
}

}  // namespace emprism::run::detail
