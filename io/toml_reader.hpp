// toml_reader.hpp: the TOML reader (toml++ underneath, hidden here): a parsed text, its tables and values, each read
// with its type and range checked. It knows no keys of ours: what the keys mean is declared by the run
// (src/run/parameters.hpp). Every failure throws one emprism::InputError whose what() is one line starting with the
// full key path ("solve[1].spin: expected an integer, got string") or, for syntax errors,
// "<file>:<line>:<col>: TOML syntax error: ...". Control characters of user text are escaped in messages.
// Rules of the typed reads: float reads accept integers (kappa = 1) but never NaN or inf; integer reads never accept
// floats (max_iter = 100.0 is an error).
// Who may call: anyone (no MPI, no logging); values and tables refer into their Document, which must outlive them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emprism::io {

using KeyList = std::vector<std::string_view>;

class InputTable;

// One value of the input, with its key path ("dirac.kappa", "solve[0].spinor[3][1]").
class InputValue {
 public:
  InputValue(const void* node, std::string path) : node_(node), path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  std::string type_name() const;  // "integer", "float", "string", "boolean", "array", "table", "date", ...
  bool is_boolean() const;
  bool is_string() const;
  bool is_array() const;
  bool is_table() const;

  std::int64_t integer() const;
  // An integer in [lo, hi]; the message names the bound that was broken ("must be > 0, got 0",
  // "must be in 0..3, got 4", "must be >= 0, got -3").
  std::int64_t integer_in(std::int64_t lo, std::int64_t hi) const;
  int int_in(std::int64_t lo, std::int64_t hi) const { return static_cast<int>(integer_in(lo, hi)); }
  double real() const;  // finite; integers converted
  bool boolean() const;
  std::string string() const;
  // A string that is one of `names` ("must be one of 'a', 'b', got 'c' (did you mean 'b'?)"); returns it.
  std::string choice(const KeyList& names) const;
  // An array of exactly `count` elements; `what` describes them for the message ("4 integers").
  std::vector<InputValue> array(std::size_t count, const std::string& what) const;
  // An array of any length ("expected an array of <what>, got <type>").
  std::vector<InputValue> array_of(const std::string& what) const;
  InputTable table() const;  // "expected a table, got <type>"
  [[noreturn]] void fail(const std::string& reason) const;

 private:
  const void* node_;  // toml::node
  std::string path_;
};

// One table of the input (possibly absent: then it has no keys) with its key path ("" for the root).
class InputTable {
 public:
  InputTable(const void* table, std::string path) : table_(table), path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  bool present() const { return table_ != nullptr; }
  std::string key_path(std::string_view key) const;
  std::optional<InputValue> get(std::string_view key) const;
  InputValue require(std::string_view key) const;  // "<path>: required key is missing"
  // The key not in `allowed` that comes first in the file, or nullopt.
  std::optional<std::string> first_key_not_in(const KeyList& allowed) const;
  // "<path>.<key>: unknown key (did you mean '<closest>'?)" for the first key not in `known`.
  void reject_unknown(const KeyList& known) const;
  // A sub-table: absent is fine (no keys), anything but a table is "<path>: expected a table, got <type>".
  InputTable section(std::string_view key) const;

 private:
  const void* table_;  // toml::table
  std::string path_;
};

// One assignment made over a text by assign(): `table` ("dirac"), `index` (the element of an array of tables
// "solve[index]", or -1 for a plain table), `key`, and `value` as TOML value text ("0.12", "\"heatbath\"", "[1, 2]").
struct Assignment {
  std::string table;
  long index = -1;
  std::string key, value;
  std::string path() const;  // "dirac.kappa", "solve[1].tol"
};

// A parsed TOML text. `origin` names the text in syntax errors ("<input>" when empty).
class Document {
 public:
  Document(std::string_view text, const std::string& origin);
  ~Document();
  Document(Document&&) noexcept;
  Document& operator=(Document&&) noexcept;
  InputTable root() const;

 private:
  friend std::string assign(std::string_view, const std::string&, const std::vector<Assignment>&);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `text` with every assignment made (the table created when absent), as TOML text (comments and layout are not kept).
// InputError("<path>: ...") when a value is not a TOML value or its table is not there ("solve[3]" of two solves).
std::string assign(std::string_view text, const std::string& origin, const std::vector<Assignment>& assignments);

// Whether `value` is one TOML value (a number, string, boolean, array or inline table).
bool is_toml_value(std::string_view value);

// The whole text of a file; InputError("<path>: cannot read input file: <reason>").
std::string read_input_file(const std::string& path);

// ---- message helpers
[[noreturn]] void fail(const std::string& path, const std::string& reason);  // throws InputError("<path>: <reason>")
std::string printable(std::string_view text);                                // control characters escaped
std::string quoted(std::string_view text);                                   // 'printable'
std::string format_double(double v);  // shortest round-trip form ("0.1", "1e-08", "nan", "inf")
std::string did_you_mean(std::string_view given, const KeyList& known);  // " (did you mean 'x'?)" or ""
std::string element_path(const std::string& path, std::size_t i);        // "<path>[i]"

}  // namespace emprism::io
