#pragma once
// Values with units as scenarios write them: byte sizes (24GiB), byte rates (25GB/s, 100Gb/s),
// FLOP rates (165.2TFLOPS) and times (80us). Decimal prefixes are powers of 1000 (KB, MB, GB,
// TB), binary ones powers of 1024 (KiB, MiB, GiB, TiB); bit rates divide by 8. Byte sizes round
// to the nearest byte and times to the nearest nanosecond. Unit names are case-sensitive
// (Gb/s is bits, GB/s bytes). A bare number is an error: it names the accepted units.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"

namespace kvsim::scenario {

// The kinds of quantity that carry a unit.
enum class Quantity { kBytes, kByteRate, kFlopRate, kTime };

// Why a text is not a valid quantity.
class UnitError : public std::invalid_argument {
 public:
  enum class Kind {
    kMissingUnit,  // a bare number
    kUnknownUnit,  // a number followed by a unit this quantity does not accept
    kNotANumber,   // no number in front, or not finite
    kTooLarge,     // does not fit the integer it is stored in
  };
  UnitError(Kind kind, const std::string& message) : std::invalid_argument(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Each parse_* takes "<number><unit>" with optional blanks between and around; it throws
// UnitError. The number may be signed and fractional (1.5GiB); range checks are the caller's.
Bytes parse_bytes(std::string_view text);
BytesPerSec parse_byte_rate(std::string_view text);
FlopsPerSec parse_flop_rate(std::string_view text);
SimTime parse_time(std::string_view text);

// Each format_* gives the shortest text among the accepted units (bit rates aside) that parses
// back to exactly the same value (ties: the order of unit_names), e.g. 24GiB, 1008GB/s,
// 165.2TFLOPS, 400us.
std::string format_bytes(Bytes bytes);
std::string format_byte_rate(BytesPerSec rate);
std::string format_flop_rate(FlopsPerSec rate);
std::string format_time(SimTime time);

// The accepted unit names of a quantity, in the order error messages list them.
const std::vector<std::string>& unit_names(Quantity quantity);
// A human name with an example for messages: "a byte size such as 24GiB".
std::string quantity_description(Quantity quantity);

// Shortest decimal text of a double that parses back to the same value ("0.9", "400", "1e-05").
std::string shortest_double(double value);

}  // namespace kvsim::scenario
