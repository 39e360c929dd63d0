#include "sim/scenario/units.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kvsim::scenario {
namespace {

UnitError::Kind bytes_error_kind(const std::string& text) {
  try {
    parse_bytes(text);
  } catch (const UnitError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return UnitError::Kind::kTooLarge;
}

std::string error_text(void (*parse)(const std::string&), const std::string& text) {
  try {
    parse(text);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "";
}

// Decimal prefixes are powers of 1000, binary ones powers of 1024; blanks may separate the
// number and the unit; fractions round to the nearest byte.
TEST(Units, ByteSizes) {
  EXPECT_EQ(parse_bytes("0B").value, 0);
  EXPECT_EQ(parse_bytes("512B").value, 512);
  EXPECT_EQ(parse_bytes("2KB").value, 2000);
  EXPECT_EQ(parse_bytes("3MB").value, 3'000'000);
  EXPECT_EQ(parse_bytes("25GB").value, 25'000'000'000);
  EXPECT_EQ(parse_bytes("1TB").value, 1'000'000'000'000);
  EXPECT_EQ(parse_bytes("1.5KiB").value, 1536);
  EXPECT_EQ(parse_bytes("4MiB").value, 4 * 1024 * 1024);
  EXPECT_EQ(parse_bytes("24GiB").value, 24LL * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_bytes(" 1 TiB ").value, 1024LL * 1024 * 1024 * 1024);
  // 23.99 x 2^30 = 25769803776 - 10737418.24 = 25759066357.76 -> 25759066358.
  EXPECT_EQ(parse_bytes("23.99GiB").value, 25'759'066'358);
  EXPECT_EQ(parse_bytes("-1KB").value, -1000);  // sign accepted; ranges are the caller's
  EXPECT_EQ(parse_bytes("1e3B").value, 1000);
  EXPECT_EQ(parse_bytes("1.5e-3GB").value, 1'500'000);
}

// Byte rates in decimal or binary bytes, and bit rates at 1/8 byte per bit.
TEST(Units, ByteRates) {
  EXPECT_EQ(parse_byte_rate("25GB/s").value, 25e9);
  EXPECT_EQ(parse_byte_rate("1008GB/s").value, 1008e9);
  EXPECT_EQ(parse_byte_rate("5B/s").value, 5.0);
  EXPECT_EQ(parse_byte_rate("3KB/s").value, 3e3);
  EXPECT_EQ(parse_byte_rate("7MB/s").value, 7e6);
  EXPECT_EQ(parse_byte_rate("2TB/s").value, 2e12);
  EXPECT_EQ(parse_byte_rate("1KiB/s").value, 1024.0);
  EXPECT_EQ(parse_byte_rate("1MiB/s").value, 1048576.0);
  EXPECT_EQ(parse_byte_rate("2GiB/s").value, 2147483648.0);
  EXPECT_EQ(parse_byte_rate("100Gb/s").value, 12.5e9);
  EXPECT_EQ(parse_byte_rate("100Gbit/s").value, 12.5e9);
  EXPECT_EQ(parse_byte_rate("800Mb/s").value, 1e8);
  EXPECT_EQ(parse_byte_rate("400Mbit/s").value, 5e7);
  EXPECT_EQ(parse_byte_rate("1.6Tb/s").value, 2e11);
}

TEST(Units, FlopRates) {
  EXPECT_EQ(parse_flop_rate("165.2TFLOPS").value, 165.2e12);
  EXPECT_EQ(parse_flop_rate("2PFLOPS").value, 2e15);
  EXPECT_EQ(parse_flop_rate("1000GFLOPS").value, 1e12);
  EXPECT_EQ(parse_flop_rate("12FLOPS").value, 12.0);
  EXPECT_EQ(parse_flop_rate("0TFLOPS").value, 0.0);
}

// Times are integer nanoseconds, rounded half away from zero.
TEST(Units, Times) {
  EXPECT_EQ(parse_time("3ns"), 3);
  EXPECT_EQ(parse_time("80us"), 80'000);
  EXPECT_EQ(parse_time("1.5ms"), 1'500'000);
  EXPECT_EQ(parse_time("2s"), 2'000'000'000);
  EXPECT_EQ(parse_time("0ms"), 0);
  EXPECT_EQ(parse_time("0.4ns"), 0);
  EXPECT_EQ(parse_time("1.5ns"), 2);
}

// A bare number is the "missing unit" error, naming every accepted unit.
TEST(Units, BareNumberIsMissingUnit) {
  EXPECT_EQ(bytes_error_kind("24"), UnitError::Kind::kMissingUnit);
  EXPECT_EQ(error_text([](const std::string& t) { parse_bytes(t); }, "24"),
            "missing unit in '24': expected a byte size such as 24GiB (units: B, KB, MB, GB, TB, "
            "KiB, MiB, GiB, TiB)");
  EXPECT_EQ(error_text([](const std::string& t) { parse_byte_rate(t); }, "25"),
            "missing unit in '25': expected a byte rate such as 25GB/s (units: B/s, KB/s, MB/s, "
            "GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, Mb/s, Mbit/s, Gb/s, Gbit/s, Tb/s, Tbit/s)");
  EXPECT_EQ(error_text([](const std::string& t) { parse_flop_rate(t); }, "1e12"),
            "missing unit in '1e12': expected a FLOP rate such as 165.2TFLOPS (units: FLOPS, "
            "GFLOPS, TFLOPS, PFLOPS)");
  EXPECT_EQ(error_text([](const std::string& t) { parse_time(t); }, "400"),
            "missing unit in '400': expected a time such as 80us (units: ns, us, ms, s)");
}

// Units are case-sensitive (Gb/s is bits); a near miss gets a suggestion.
TEST(Units, UnknownUnitsAndGarbage) {
  EXPECT_EQ(bytes_error_kind("24Gi"), UnitError::Kind::kUnknownUnit);
  EXPECT_EQ(error_text([](const std::string& t) { parse_bytes(t); }, "24Gi"),
            "unknown unit 'Gi' in '24Gi'; did you mean 'GiB'? (units: B, KB, MB, GB, TB, KiB, "
            "MiB, GiB, TiB)");
  EXPECT_EQ(bytes_error_kind("24 GB/s"), UnitError::Kind::kUnknownUnit);
  EXPECT_EQ(bytes_error_kind("abc"), UnitError::Kind::kNotANumber);
  EXPECT_EQ(bytes_error_kind("GiB"), UnitError::Kind::kNotANumber);
  EXPECT_EQ(bytes_error_kind(""), UnitError::Kind::kNotANumber);
  EXPECT_EQ(bytes_error_kind("20000000000TB"), UnitError::Kind::kTooLarge);
  EXPECT_THROW(parse_time("5 sec"), UnitError);
  EXPECT_THROW(parse_byte_rate("25gb/s"), UnitError);
  EXPECT_THROW(parse_flop_rate("100TFLOP"), UnitError);
}

// format_* writes the shortest spelling that parses back exactly, in byte units.
TEST(Units, FormatShortestExact) {
  EXPECT_EQ(format_bytes(Bytes{0}), "0B");
  EXPECT_EQ(format_bytes(Bytes{24LL * 1024 * 1024 * 1024}), "24GiB");
  EXPECT_EQ(format_bytes(Bytes{1000}), "1KB");
  EXPECT_EQ(format_bytes(Bytes{1536}), "1536B");  // shorter than 1.5KiB
  // 23.99GiB parses to this byte count (rounded), and it is the shortest spelling that does.
  EXPECT_EQ(format_bytes(Bytes{25'759'066'358}), "23.99GiB");
  EXPECT_EQ(format_bytes(Bytes{1'000'000'001}), "1000000001B");
  EXPECT_EQ(format_byte_rate(BytesPerSec{1008e9}), "1008GB/s");
  EXPECT_EQ(format_byte_rate(BytesPerSec{12.5e9}), "12.5GB/s");
  EXPECT_EQ(format_byte_rate(BytesPerSec{2147483648.0}), "2GiB/s");
  EXPECT_EQ(format_flop_rate(FlopsPerSec{165.2e12}), "165.2TFLOPS");
  EXPECT_EQ(format_flop_rate(FlopsPerSec{0}), "0FLOPS");
  EXPECT_EQ(format_time(400'000), "400us");
  EXPECT_EQ(format_time(1'500'000), "1.5ms");
  EXPECT_EQ(format_time(0), "0ns");
  EXPECT_EQ(format_time(7), "7ns");
}

// Whatever a value is, its formatted text parses back to the same value.
TEST(Units, FormatRoundTrips) {
  for (double v : {1.0, 0.1, 1e-3, 123.456, 25.6e9, 1.3e13, 3.0e17, 1e20}) {
    EXPECT_EQ(parse_byte_rate(format_byte_rate(BytesPerSec{v})).value, v) << v;
    EXPECT_EQ(parse_flop_rate(format_flop_rate(FlopsPerSec{v})).value, v) << v;
  }
  for (std::int64_t v : {1LL, 999LL, 1023LL, 1025LL, 123456789LL, 1LL << 40, 999'999'999'999LL}) {
    EXPECT_EQ(parse_bytes(format_bytes(Bytes{v})).value, v) << v;
    EXPECT_EQ(parse_time(format_time(v)), v) << v;
  }
}

TEST(Units, ShortestDouble) {
  EXPECT_EQ(shortest_double(0.9), "0.9");
  EXPECT_EQ(shortest_double(400), "400");
  EXPECT_EQ(shortest_double(0.85), "0.85");
}

}  // namespace
}  // namespace kvsim::scenario
