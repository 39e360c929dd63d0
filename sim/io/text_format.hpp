#pragma once
// Number and string formatting for the result sinks. Everything here is independent of the
// C and C++ locales (std::to_chars underneath), so a run prints the same bytes whatever the
// locale of the program that embeds the library.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/json_string.hpp"

namespace kvsim::io {

// Python's f"{v:.{decimals}f}": fixed notation, correctly rounded; "nan", "inf", "-inf".
std::string format_fixed(double v, int decimals);
// Python's f"{v:.{decimals}e}": one digit, decimals digits, then e+XX (at least two digits).
std::string format_scientific(double v, int decimals);
// The shortest text that reads back as the same double ("0.1", "166", "1e+21").
// "nan", "inf", "-inf" for non-finite values.
std::string format_shortest(double v);
// Python's f"{v:,}": digits grouped by three with commas ("31,232").
std::string format_thousands(std::int64_t v);

// A column of floats as pandas prints it in a DataFrame with display.precision = digits
// (pandas/io/formats/format.py, FloatArrayFormatter and _trim_zeros_float):
//  - each value as f"{v: .{digits}f}" (a space where a minus sign would go), NaN as "NaN";
//  - scientific f"{v: .{digits}e}" for the whole column instead when any nonzero |v| is
//    below 10^-digits, or when the widest fixed text is longer than digits + 6 characters
//    and some |v| is above 1e6;
//  - trailing zeros cut from every fixed value at once while all of them end in '0',
//    keeping one digit after the point ("166.00" -> "166.0").
// The strings are not yet padded to a common width.
std::vector<std::string> pandas_float_column(std::span<const double> values, int digits);

// A JSON string literal, quotes included (sim/core/json_string.hpp).
using kvsim::json_quote;
// A JSON number in shortest round-trip form, or null for NaN and infinities.
std::string json_number(double v);
// A CSV field (RFC 4180): quoted, with doubled quotes, only when it holds a comma, a quote,
// a carriage return or a newline.
std::string csv_field(std::string_view s);
// A CSV number: shortest round-trip form, or an empty field for NaN and infinities.
std::string csv_number(double v);

// `s` padded with spaces to `width` characters, on the left (right-aligned) or the right.
std::string pad_left(const std::string& s, std::size_t width);
std::string pad_right(const std::string& s, std::size_t width);

}  // namespace kvsim::io
