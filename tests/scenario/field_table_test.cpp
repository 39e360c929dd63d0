#include "sim/scenario/field_table.hpp"

#include <gtest/gtest.h>

#include "sim/scenario/suggest.hpp"

namespace kvsim::scenario {
namespace {

enum class Color { kRed, kGreen };

struct Inner {
  int n = 3;
};

struct Sample {
  int count = 1;
  std::int64_t big = 0;
  double ratio = 0.5;
  bool on = false;
  std::string label = "x";
  std::string policy = "fcfs";
  Color color = Color::kGreen;
  Bytes size{1024};
  BytesPerSec rate{1e9};
  FlopsPerSec flops{1e12};
  SimTime latency = 0;
  Inner inner;
  std::vector<Inner> items;
  std::optional<Inner> maybe;
};

const StructTable& inner_table() {
  static const StructTable t = TableBuilder<Inner>("Inner", "inner")
                                   .integer("n", &Inner::n, "n", Range::at_least(0))
                                   .build();
  return t;
}

const StructTable& sample_table() {
  static const StructTable t =
      TableBuilder<Sample>("Sample", "a sample")
          .integer("count", &Sample::count, "count", Range::at_least(1))
          .int64("big", &Sample::big, "big", Range::unbounded_above())
          .real("ratio", &Sample::ratio, "ratio", Range::open_closed(0, 1))
          .boolean("on", &Sample::on, "on")
          .string("label", &Sample::label, "label")
          .choice("policy", &Sample::policy, {"fcfs", "priority"}, "policy")
          .enumeration<Color>("color", &Sample::color,
                              {{"red", Color::kRed}, {"green", Color::kGreen}}, "color")
          .bytes("size", &Sample::size, "size", Range::above(0))
          .byte_rate("rate", &Sample::rate, "rate")
          .flop_rate("flops", &Sample::flops, "flops")
          .time("latency", &Sample::latency, "latency", Range::at_least(0))
          .nested("inner", &Sample::inner, inner_table(), "inner")
          .list("items", &Sample::items, inner_table(), "items")
          .optional_nested("maybe", &Sample::maybe, inner_table(), "maybe")
          .build();
  return t;
}

const Field& field(const std::string& key) {
  const Field* f = sample_table().find(key);
  EXPECT_NE(f, nullptr) << key;
  return *f;
}

std::string problem(const std::string& key, const std::string& text, Sample& s) {
  auto p = set_scalar_from_text(field(key), &s, text);
  return p ? p->message : "";
}

// Close misspellings are suggested; far ones are not.
TEST(Suggest, EditDistanceAndClosestName) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("max_num_seq", "max_num_seqs"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);    // one transposition
  EXPECT_EQ(edit_distance("GIB", "GiB"), 0u);  // case-insensitive
  const std::vector<std::string> keys = {"max_num_seqs", "max_num_batched_tokens", "block_size"};
  EXPECT_EQ(closest_name("max_num_seq", keys), "max_num_seqs");
  EXPECT_EQ(closest_name("blocksize", keys), "block_size");
  EXPECT_EQ(closest_name("max_num_batched", keys), "max_num_batched_tokens");  // a prefix
  EXPECT_EQ(closest_name("zzz", keys), "");
  EXPECT_EQ(join_names({"a", "b", "c"}), "a, b, c");
}

TEST(FieldTable, RangeDescribesItsBounds) {
  auto plain = [](double v) { return std::to_string(static_cast<int>(v)); };
  EXPECT_EQ(Range::open_closed(0, 1).describe(plain), "must be in (0, 1]");
  EXPECT_EQ(Range::half_open(0, 100).describe(plain), "must be in [0, 100)");
  EXPECT_EQ(Range::at_least(1).describe(plain), "must be >= 1");
  EXPECT_EQ(Range::above(0).describe(plain), "must be > 0");
  EXPECT_TRUE(Range::open_closed(0, 1).contains(1.0));
  EXPECT_FALSE(Range::open_closed(0, 1).contains(0.0));
  EXPECT_TRUE(Range{}.contains(-1e300));
}

// Scalars parse by kind, with the table's range; a failure leaves the member unchanged.
TEST(FieldTable, SetScalarFromText) {
  Sample s;
  EXPECT_EQ(problem("count", "12", s), "");
  EXPECT_EQ(s.count, 12);
  EXPECT_EQ(problem("count", "abc", s), "expected an integer, got 'abc'");
  EXPECT_EQ(problem("count", "1.5", s), "expected an integer, got '1.5'");
  // kvsim's stated limit (docs/limits.md) is the maximum of a range that gives none.
  EXPECT_EQ(problem("count", "0", s), "must be in [1, 10000000], got 0");
  EXPECT_EQ(problem("count", "10000001", s), "must be in [1, 10000000], got 10000001");
  EXPECT_EQ(problem("count", "3000000000", s), "value '3000000000' is too large");
  EXPECT_EQ(s.count, 12);
  EXPECT_EQ(problem("big", "3000000000", s), "");
  EXPECT_EQ(s.big, 3'000'000'000);
  EXPECT_EQ(problem("ratio", "1.5", s), "must be in (0, 1], got 1.5");
  EXPECT_EQ(problem("ratio", "x", s), "expected a number, got 'x'");
  EXPECT_EQ(problem("ratio", "1", s), "");
  EXPECT_EQ(s.ratio, 1.0);
  EXPECT_EQ(problem("on", "yes", s), "expected true or false, got 'yes'");
  EXPECT_EQ(problem("on", "true", s), "");
  EXPECT_TRUE(s.on);
  EXPECT_EQ(problem("policy", "fcsf", s),
            "expected one of fcfs, priority, got 'fcsf'; did you mean 'fcfs'?");
  EXPECT_EQ(problem("policy", "priority", s), "");
  EXPECT_EQ(s.policy, "priority");
  EXPECT_EQ(problem("color", "red", s), "");
  EXPECT_EQ(s.color, Color::kRed);
  EXPECT_EQ(problem("size", "0GiB", s), "must be in (0B, 8192TiB], got 0GiB");
  EXPECT_EQ(problem("size", "9000TiB", s), "must be in (0B, 8192TiB], got 9000TiB");
  EXPECT_EQ(problem("size", "24", s).rfind("missing unit in '24'", 0), 0u);
  EXPECT_EQ(problem("size", "2GiB", s), "");
  EXPECT_EQ(s.size.value, 2LL << 30);
  EXPECT_EQ(problem("latency", "-1ms", s), "must be in [0ns, 100000000s], got -1ms");
  EXPECT_EQ(problem("latency", "80us", s), "");
  EXPECT_EQ(s.latency, 80'000);
}

TEST(FieldTable, ScalarTextIsTheResolvedSpelling) {
  Sample s;
  s.size = Bytes{24LL << 30};
  s.rate = BytesPerSec{25e9};
  s.color = Color::kRed;
  EXPECT_EQ(scalar_text(field("size"), &s), "24GiB");
  EXPECT_EQ(scalar_text(field("rate"), &s), "25GB/s");
  EXPECT_EQ(scalar_text(field("flops"), &s), "1TFLOPS");
  EXPECT_EQ(scalar_text(field("ratio"), &s), "0.5");
  EXPECT_EQ(scalar_text(field("on"), &s), "false");
  EXPECT_EQ(scalar_text(field("color"), &s), "red");
  EXPECT_EQ(scalar_text(field("latency"), &s), "0ns");
}

// differences() walks nested structs, lists and optionals and names each differing field.
TEST(FieldTable, DifferencesNameEveryDifferingField) {
  Sample a;
  Sample b;
  EXPECT_TRUE(differences(sample_table(), &a, &b).empty());
  b.count = 2;
  b.inner.n = 9;
  b.maybe = Inner{};
  EXPECT_EQ(differences(sample_table(), &a, &b),
            (std::vector<std::string>{"count", "inner.n", "maybe"}));
  a = b;
  a.items = {Inner{1}, Inner{2}};
  b.items = {Inner{1}, Inner{5}};
  EXPECT_EQ(differences(sample_table(), &a, &b, "top"),
            (std::vector<std::string>{"top.items.1.n"}));
  b.items.pop_back();
  EXPECT_EQ(differences(sample_table(), &a, &b), (std::vector<std::string>{"items"}));
}

TEST(FieldTable, DistributionText) {
  workload::Distribution d;
  d.kind = workload::DistKind::kUniform;
  d.min = 12;
  d.max = 18;
  EXPECT_EQ(distribution_text(d), "uniform 12..18");
  d.integer_bounds = false;
  EXPECT_EQ(distribution_text(d), "uniform 12.0..18.0");
  d = {};
  d.kind = workload::DistKind::kLognormal;
  d.has_average = true;
  d.average = 1000;
  d.has_max = true;
  d.max = 5000;
  EXPECT_EQ(distribution_text(d), "lognormal average 1000 median_ratio 0.85 max 5000");
}

}  // namespace
}  // namespace kvsim::scenario
