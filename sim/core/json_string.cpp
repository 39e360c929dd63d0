#include "sim/core/json_string.hpp"

namespace kvsim {
namespace {

// U+FFFD REPLACEMENT CHARACTER in UTF-8.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// The length of the well-formed UTF-8 sequence that starts at s[i] (2 to 4), or 0 when the
// bytes there are ill-formed; `bad_end` is then the end of the maximal subpart to replace by
// one U+FFFD (Unicode Table 3-7: the lead byte fixes the range of the second byte, later
// continuation bytes are 80..BF).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::size_t& bad_end) {
  const auto lead = static_cast<unsigned char>(s[i]);
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;  // no overlong forms
    if (lead == 0xED) hi = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;  // no overlong forms
    if (lead == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    bad_end = i + 1;  // 80..C1, F5..FF: never a lead byte
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) {
      bad_end = i + k;
      return 0;
    }
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (c < lo || c > hi) {
      bad_end = i + k;
      return 0;
    }
    lo = 0x80;
    hi = 0xBF;
  }
  return len;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80U) {
      std::size_t bad_end = 0;
      const std::size_t len = utf8_sequence(s, i, bad_end);
      if (len == 0) {
        out += kReplacement;
        i = bad_end;
      } else {
        out.append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20U) {
          out += "\\u00";
          out += kHex[c >> 4U];
          out += kHex[c & 0xFU];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_json_string(out, s);
  return out;
}

}  // namespace kvsim
