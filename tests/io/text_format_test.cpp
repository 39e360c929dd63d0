#include "sim/io/text_format.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kvsim::io {
namespace {

using Strings = std::vector<std::string>;

// Python's f"{v:.Nf}" is correctly rounded from the binary value, ties to even:
// 2.675 is stored as 2.67499999..., 0.125 is an exact tie (-> 0.12), -1.5 -> -2.
TEST(TextFormat, FixedMatchesPython) {
  EXPECT_EQ(format_fixed(215.81, 3), "215.810");
  EXPECT_EQ(format_fixed(2.675, 2), "2.67");
  EXPECT_EQ(format_fixed(0.125, 2), "0.12");
  EXPECT_EQ(format_fixed(-1.5, 0), "-2");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::quiet_NaN(), 3), "nan");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::infinity(), 3), "inf");
  EXPECT_EQ(format_fixed(-std::numeric_limits<double>::infinity(), 3), "-inf");
}

// Python's f"{v:.2e}": two-digit exponent with its sign.
TEST(TextFormat, ScientificMatchesPython) {
  EXPECT_EQ(format_scientific(25.37, 2), "2.54e+01");
  EXPECT_EQ(format_scientific(1234567.0, 2), "1.23e+06");
  EXPECT_EQ(format_scientific(0.004, 2), "4.00e-03");
}

TEST(TextFormat, ShortestRoundTrip) {
  EXPECT_EQ(format_shortest(0.1), "0.1");
  EXPECT_EQ(format_shortest(166.0), "166");
  EXPECT_EQ(format_shortest(1e21), "1e+21");
  EXPECT_EQ(format_shortest(-2.5), "-2.5");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(std::stod(format_shortest(third)), third);
}

// f"{n:,}" as vLLM logs the KV cache size.
TEST(TextFormat, Thousands) {
  EXPECT_EQ(format_thousands(0), "0");
  EXPECT_EQ(format_thousands(999), "999");
  EXPECT_EQ(format_thousands(1000), "1,000");
  EXPECT_EQ(format_thousands(31232), "31,232");
  EXPECT_EQ(format_thousands(-1234567), "-1,234,567");
  EXPECT_EQ(format_thousands(std::numeric_limits<std::int64_t>::min()),
            "-9,223,372,036,854,775,808");
}

// pandas with display.precision = 2: a leading space for the sign, trailing zeros cut while
// every number in the column ends in 0 (166.00 -> 166.0, the README's count column).
TEST(PandasColumn, TrimsZerosAcrossTheColumn) {
  EXPECT_EQ(pandas_float_column(std::vector<double>{166, 166}, 2), (Strings{" 166.0", " 166.0"}));
  EXPECT_EQ(pandas_float_column(std::vector<double>{1.0, 2.5}, 2), (Strings{" 1.0", " 2.5"}));
  // One value with two significant decimals stops the trimming for all.
  EXPECT_EQ(pandas_float_column(std::vector<double>{78.22, 2591.07, 1.0}, 2),
            (Strings{" 78.22", " 2591.07", " 1.00"}));
  EXPECT_EQ(pandas_float_column(std::vector<double>{-5, 5}, 2), (Strings{"-5.0", " 5.0"}));
}

TEST(PandasColumn, NaNIsSpelledNaNAndIgnoredByTrimming) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(pandas_float_column(std::vector<double>{nan, 3}, 2), (Strings{"NaN", " 3.0"}));
  EXPECT_EQ(pandas_float_column(std::vector<double>{nan}, 2), (Strings{"NaN"}));
}

// Scientific notation for the whole column when a nonzero value is below 0.01, or when the
// text is wider than 8 characters and a value exceeds 1e6 (exactly 1e6 stays fixed).
TEST(PandasColumn, SwitchesToScientific) {
  EXPECT_EQ(pandas_float_column(std::vector<double>{0.001, 5}, 2),
            (Strings{" 1.00e-03", " 5.00e+00"}));
  EXPECT_EQ(pandas_float_column(std::vector<double>{0.0, 5}, 2), (Strings{" 0.0", " 5.0"}));
  EXPECT_EQ(pandas_float_column(std::vector<double>{2e6, 1}, 2),
            (Strings{" 2.00e+06", " 1.00e+00"}));
  EXPECT_EQ(pandas_float_column(std::vector<double>{1e6}, 2), (Strings{" 1000000.0"}));
}

TEST(TextFormat, JsonQuoteEscapes) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c\nd\te"), "\"a\\\"b\\\\c\\nd\\te\"");
  EXPECT_EQ(json_quote(std::string("x\x01y")), "\"x\\u0001y\"");
  EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(json_number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_number(0.5), "0.5");
}

TEST(TextFormat, CsvQuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_number(std::numeric_limits<double>::quiet_NaN()), "");
  EXPECT_EQ(csv_number(12.5), "12.5");
}

}  // namespace
}  // namespace kvsim::io
