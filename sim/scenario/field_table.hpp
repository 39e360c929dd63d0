#pragma once
// Field tables: each spec struct has one table listing its YAML keys, what kind of value each
// holds, the member it fills, the allowed range, whether it is required, and a one-line doc.
// The one table drives decoding (sim/scenario/yaml_codec.hpp), the unknown-key check,
// emitting the resolved YAML, comparing two specs and the generated scenario reference, so
// the four never disagree. Values with units live in their base units (bytes, bytes/s,
// FLOP/s, nanoseconds); ranges are given in the same base units.
//
// Contract:
//  - A Field's accessors take a pointer to the owning struct of the table's type and return a
//    pointer to the member (for a group: the owner itself). The kind fixes the member's type:
//    kInt int, kInt64 std::int64_t, kUint64 std::uint64_t, kDouble double, kBool bool,
//    kString std::string, kEnum any (through get_enum/set_enum), kBytes Bytes, kByteRate
//    BytesPerSec, kFlopRate FlopsPerSec, kTime SimTime, kStruct/kGroup the nested table's type,
//    kOptionalStruct std::optional<S>, kStructList std::vector<S>, kStringList
//    std::vector<std::string>, kDoubleList std::vector<double>, kDistribution
//    workload::Distribution. TableBuilder enforces the pairing at compile time.
//  - Tables live for the whole program (function-local statics) and are never changed.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::scenario {

enum class FieldKind {
  kInt,
  kInt64,
  kUint64,
  kDouble,
  kBool,
  kString,
  kEnum,
  kBytes,
  kByteRate,
  kFlopRate,
  kTime,
  kStruct,          // a nested map decoded into a member struct
  kGroup,           // a nested map whose keys fill fields of the same struct
  kOptionalStruct,  // a nested map that may be absent (std::optional)
  kStructList,      // a list of maps
  kStringList,
  kDoubleList,
  kDistribution,  // vLLM generation-config distribution object
};

// How the reference names a kind: "integer", "bytes", "map", ...
const char* field_kind_name(FieldKind kind);
bool is_scalar_kind(FieldKind kind);

// The classes of problem a value can have; they name the config-error fixtures.
enum class ProblemClass {
  kSyntax,
  kUnknownKey,
  kWrongType,
  kMissingUnit,
  kOutOfRange,
  kMissingRequired,
  kUnknownPreset,
  kBadDistribution,
  kBadValue,  // a valid value that conflicts with another field
};

struct ValueProblem {
  ProblemClass problem = ProblemClass::kWrongType;
  std::string message;
};

// Allowed values of a number (for lists: of each element; for kStructList: of the count).
struct Range {
  std::optional<double> min;
  std::optional<double> max;
  bool min_open = false;  // min itself excluded
  bool max_open = false;  // max itself excluded

  static Range at_least(double lo) { return Range{lo, std::nullopt, false, false}; }
  static Range above(double lo) { return Range{lo, std::nullopt, true, false}; }
  static Range closed(double lo, double hi) { return Range{lo, hi, false, false}; }
  static Range half_open(double lo, double hi) { return Range{lo, hi, false, true}; }
  static Range open_closed(double lo, double hi) { return Range{lo, hi, true, false}; }
  static Range open(double lo, double hi) { return Range{lo, hi, true, true}; }
  // No maximum, not even kvsim's stated limit (a seed).
  static Range unbounded_above() {
    return Range{std::nullopt, std::numeric_limits<double>::infinity(), false, false};
  }

  bool empty() const { return !min && !max; }
  bool contains(double v) const;
  // "must be >= 1", "must be in (0, 1]"; `format` writes a bound in the field's units.
  std::string describe(const std::function<std::string(double)>& format) const;
};

struct StructTable;

struct Field {
  std::string key;
  FieldKind kind = FieldKind::kInt;
  std::string doc;
  Range range;
  bool required = false;
  std::vector<std::string> enum_names;  // kEnum: accepted spellings, in documentation order
  const StructTable* nested = nullptr;  // kStruct, kGroup, kOptionalStruct, kStructList

  // Pointer to the member inside `owner` (see the contract above).
  std::function<void*(void* owner)> member;
  // kEnum: index of the member's value in enum_names (enum_names.size() when it holds a name
  // not in the list), and store enum_names[index].
  std::function<std::size_t(const void* member)> get_enum;
  std::function<void(void* member, std::size_t index)> set_enum;
  // kOptionalStruct: engaged?, engage (value-initialised) and return the value, disengage.
  std::function<bool(const void* member)> has_value;
  std::function<void*(void* member)> emplace;
  std::function<void*(void* member)> value;
  std::function<void(void* member)> reset;
  // kStructList: element count, resize (new elements value-initialised), element pointer.
  std::function<std::size_t(const void* member)> size;
  std::function<void(void* member, std::size_t n)> resize;
  std::function<void*(void* member, std::size_t i)> at;

  void* get(void* owner) const { return member(owner); }
  const void* get(const void* owner) const { return member(const_cast<void*>(owner)); }
};

// A problem a table's check hook finds after decoding: `path` is dotted and relative to the
// struct the table decodes ("" = the struct itself).
struct FieldIssue {
  std::string path;
  ProblemClass problem = ProblemClass::kBadValue;
  std::string message;
};

// Tells a check hook whether a key was written in the map just decoded.
using KeyGiven = std::function<bool(std::string_view key)>;

struct StructTable {
  std::string type_name;  // C++ type, for the reference: "EngineConfig"
  std::string doc;        // one or two lines for the reference
  std::vector<Field> fields;
  // Non-empty for structs a `preset:` key may fill from the catalog: "gpus" or "models".
  std::string preset_catalog;
  // Non-empty for structs a file may fill instead of a preset: the key naming the file
  // ("hf_config" for models: a Hugging Face config.json, relative to the scenario). The preset
  // resolver is asked with catalog "file:<key>" and the path.
  std::string file_preset_key;
  const void* defaults = nullptr;  // a value-initialised instance
  std::function<void(void* dst, const void* src)> assign;
  // Runs after the struct's map is decoded: fills defaults that depend on other fields and
  // reports cross-field problems. May be empty.
  std::function<void(void* obj, const KeyGiven& given, std::vector<FieldIssue>& issues)> check;

  const Field* find(std::string_view key) const;
  std::vector<std::string> keys() const;
};

// Text of a scalar field's value as the resolved YAML writes it (units included, shortest
// exact spelling). For kDistribution: a short summary such as "uniform 12..18".
std::string scalar_text(const Field& field, const void* owner);
// Parses `text` into a scalar field of `owner` (range checked); on failure leaves the member
// unchanged and returns the problem. `text` is the YAML scalar as written.
std::optional<ValueProblem> set_scalar_from_text(const Field& field, void* owner,
                                                 std::string_view text);
// A string scalar that is not valid UTF-8 (YAML text is Unicode; the resolved YAML could not
// write it back unchanged) or is longer than kvsim's limit (limits::kMaxStringBytes); nullopt
// when it is fine.
std::optional<ValueProblem> string_problem(std::string_view text);
// Parses one element of a kDoubleList (range checked).
std::optional<ValueProblem> parse_list_number(const Field& field, std::string_view text,
                                              double& out);
// A bound of `field`'s range written in the field's units.
std::string format_bound(const Field& field, double bound);

// Dotted paths of every field whose values differ between `a` and `b` (both of the table's
// type), in table order. Empty when equal.
std::vector<std::string> differences(const StructTable& table, const void* a, const void* b,
                                     const std::string& prefix = "");

// Text of a distribution's parameters: "uniform 12..18", "lognormal average 1000 max 5000".
std::string distribution_text(const workload::Distribution& d);
// A uniform bound as vLLM's config holds it: "12" for integer bounds, "12.0" for real ones (so
// the resolved YAML keeps randint versus uniform).
std::string uniform_bound_text(double value, bool integer_bounds);
const std::vector<std::string>& distribution_kind_names();
const char* distribution_kind_name(workload::DistKind kind);

// The range a field is checked against: `r`, with kvsim's stated limit for the kind
// (sim/core/limits.hpp, docs/limits.md) as its maximum when `r` has none. An infinite
// maximum (Range::unbounded_above) opts out.
Range with_stated_limit(FieldKind kind, Range r);

// A value-initialised instance per type, shared by all tables of that type.
template <class T>
const T& default_instance() {
  static const T instance{};
  return instance;
}

// Builds the table of struct T; each method pairs a kind with the member type it requires.
template <class T>
class TableBuilder {
 public:
  TableBuilder(std::string type_name, std::string doc) {
    table_.type_name = std::move(type_name);
    table_.doc = std::move(doc);
    table_.defaults = &default_instance<T>();
    table_.assign = [](void* dst, const void* src) {
      *static_cast<T*>(dst) = *static_cast<const T*>(src);
    };
  }

  TableBuilder& integer(std::string key, int T::*m, std::string doc, Range r = {}) {
    return add(make(std::move(key), FieldKind::kInt, m, std::move(doc), r));
  }
  TableBuilder& int64(std::string key, std::int64_t T::*m, std::string doc, Range r = {}) {
    return add(make(std::move(key), FieldKind::kInt64, m, std::move(doc), r));
  }
  TableBuilder& uint64(std::string key, std::uint64_t T::*m, std::string doc) {
    return add(make(std::move(key), FieldKind::kUint64, m, std::move(doc), {}));
  }
  TableBuilder& real(std::string key, double T::*m, std::string doc, Range r = {}) {
    return add(make(std::move(key), FieldKind::kDouble, m, std::move(doc), r));
  }
  TableBuilder& boolean(std::string key, bool T::*m, std::string doc) {
    return add(make(std::move(key), FieldKind::kBool, m, std::move(doc), {}));
  }
  TableBuilder& string(std::string key, std::string T::*m, std::string doc) {
    return add(make(std::move(key), FieldKind::kString, m, std::move(doc), {}));
  }
  TableBuilder& bytes(std::string key, Bytes T::*m, std::string doc, Range r = {}) {
    return add(make(std::move(key), FieldKind::kBytes, m, std::move(doc), r));
  }
  TableBuilder& byte_rate(std::string key, BytesPerSec T::*m, std::string doc, Range r = {}) {
    return add(make(std::move(key), FieldKind::kByteRate, m, std::move(doc), r));
  }
  TableBuilder& flop_rate(std::string key, FlopsPerSec T::*m, std::string doc, Range r = {}) {
    return add(make(std::move(key), FieldKind::kFlopRate, m, std::move(doc), r));
  }
  TableBuilder& time(std::string key, SimTime T::*m, std::string doc, Range r = {}) {
    return add(make(std::move(key), FieldKind::kTime, m, std::move(doc), r));
  }
  TableBuilder& string_list(std::string key, std::vector<std::string> T::*m, std::string doc) {
    return add(make(std::move(key), FieldKind::kStringList, m, std::move(doc), {}));
  }
  TableBuilder& double_list(std::string key, std::vector<double> T::*m, std::string doc,
                            Range r = {}) {
    return add(make(std::move(key), FieldKind::kDoubleList, m, std::move(doc), r));
  }
  // `limit` bounds the values the distribution may give (its parameters are checked at load,
  // its samples when drawn).
  TableBuilder& distribution(std::string key, workload::Distribution T::*m, std::string doc,
                             Range limit) {
    return add(make(std::move(key), FieldKind::kDistribution, m, std::move(doc), limit));
  }

  // A string member restricted to `names`.
  TableBuilder& choice(std::string key, std::string T::*m, const std::vector<std::string>& names,
                       std::string doc) {
    Field f = make(std::move(key), FieldKind::kEnum, m, std::move(doc), {});
    f.enum_names = names;
    f.get_enum = [names](const void* member) {
      const auto& s = *static_cast<const std::string*>(member);
      std::size_t i = 0;
      while (i < names.size() && names[i] != s) ++i;
      return i;
    };
    f.set_enum = [names](void* member, std::size_t i) {
      *static_cast<std::string*>(member) = names[i];
    };
    return add(std::move(f));
  }

  // An enum member; `values` pairs each accepted spelling with its enumerator.
  template <class E>
  TableBuilder& enumeration(std::string key, E T::*m, std::vector<std::pair<std::string, E>> values,
                            std::string doc) {
    Field f = make(std::move(key), FieldKind::kEnum, m, std::move(doc), {});
    for (const auto& v : values) f.enum_names.push_back(v.first);
    f.get_enum = [values](const void* member) {
      const E e = *static_cast<const E*>(member);
      std::size_t i = 0;
      while (i < values.size() && values[i].second != e) ++i;
      return i;
    };
    f.set_enum = [values](void* member, std::size_t i) {
      *static_cast<E*>(member) = values[i].second;
    };
    return add(std::move(f));
  }

  template <class S>
  TableBuilder& nested(std::string key, S T::*m, const StructTable& sub, std::string doc) {
    Field f = make(std::move(key), FieldKind::kStruct, m, std::move(doc), {});
    f.nested = &sub;
    return add(std::move(f));
  }

  // Keys of `sub` (a table over T itself) written under `key`, e.g. prompt_input.num_turns.
  TableBuilder& group(std::string key, const StructTable& sub, std::string doc) {
    Field f;
    f.key = std::move(key);
    f.kind = FieldKind::kGroup;
    f.doc = std::move(doc);
    f.nested = &sub;
    f.member = [](void* owner) { return owner; };
    return add(std::move(f));
  }

  template <class S>
  TableBuilder& optional_nested(std::string key, std::optional<S> T::*m, const StructTable& sub,
                                std::string doc) {
    Field f = make(std::move(key), FieldKind::kOptionalStruct, m, std::move(doc), {});
    f.nested = &sub;
    f.has_value = [](const void* member) {
      return static_cast<const std::optional<S>*>(member)->has_value();
    };
    f.emplace = [](void* member) -> void* {
      return &static_cast<std::optional<S>*>(member)->emplace();
    };
    f.value = [](void* member) -> void* { return &**static_cast<std::optional<S>*>(member); };
    f.reset = [](void* member) { static_cast<std::optional<S>*>(member)->reset(); };
    return add(std::move(f));
  }

  template <class S>
  TableBuilder& list(std::string key, std::vector<S> T::*m, const StructTable& sub, std::string doc,
                     Range count = {}) {
    Field f = make(std::move(key), FieldKind::kStructList, m, std::move(doc), count);
    f.nested = &sub;
    f.size = [](const void* member) { return static_cast<const std::vector<S>*>(member)->size(); };
    f.resize = [](void* member, std::size_t n) { static_cast<std::vector<S>*>(member)->resize(n); };
    f.at = [](void* member, std::size_t i) -> void* {
      return &(*static_cast<std::vector<S>*>(member))[i];
    };
    return add(std::move(f));
  }

  // Marks the last added field required.
  TableBuilder& required() {
    table_.fields.back().required = true;
    return *this;
  }
  TableBuilder& preset_catalog(std::string catalog) {
    table_.preset_catalog = std::move(catalog);
    return *this;
  }
  TableBuilder& file_preset(std::string key) {
    table_.file_preset_key = std::move(key);
    return *this;
  }
  // `check(T& obj, given, issues)`.
  template <class F>
  TableBuilder& check(F fn) {
    table_.check = [fn](void* obj, const KeyGiven& given, std::vector<FieldIssue>& issues) {
      fn(*static_cast<T*>(obj), given, issues);
    };
    return *this;
  }

  StructTable build() { return std::move(table_); }

 private:
  template <class M>
  static Field make(std::string key, FieldKind kind, M T::*m, std::string doc, Range r) {
    Field f;
    f.key = std::move(key);
    f.kind = kind;
    f.doc = std::move(doc);
    f.range = with_stated_limit(kind, r);
    f.member = [m](void* owner) -> void* { return &(static_cast<T*>(owner)->*m); };
    return f;
  }
  TableBuilder& add(Field f) {
    table_.fields.push_back(std::move(f));
    return *this;
  }

  StructTable table_;
};

}  // namespace kvsim::scenario
