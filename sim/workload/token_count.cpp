#include "sim/workload/token_count.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kvsim::workload {
namespace {

// Character classes of the Llama-3 split pattern (\p{L}, \p{N}, \s with [\r\n] apart).
enum class CharClass : std::uint8_t { kLetter, kDigit, kNewline, kSpace, kOther };

// Sub-kinds of letters and symbols that the cost model weighs differently.
enum class Script : std::uint8_t {
  kAsciiLower,
  kAsciiUpper,
  kOtherLetter,
  kCjk,
  kAsciiSymbol,
  kOtherSymbol
};

struct Char {
  char32_t cp;
  CharClass cls;
  Script script;
};

bool in(char32_t cp, char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; }

bool is_unicode_space(char32_t cp) {
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || in(cp, 0x2000, 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_unicode_digit(char32_t cp) {
  return cp == 0xB2 || cp == 0xB3 || cp == 0xB9 || in(cp, 0xBC, 0xBE) || in(cp, 0x660, 0x669) ||
         in(cp, 0x6F0, 0x6F9) || in(cp, 0x966, 0x96F) || in(cp, 0x2070, 0x2079) ||
         in(cp, 0x2080, 0x2089) || in(cp, 0x2150, 0x218F) || in(cp, 0x2460, 0x249B) ||
         in(cp, 0xFF10, 0xFF19);
}

bool is_unicode_symbol(char32_t cp) {
  return (in(cp, 0x80, 0xBF) && cp != 0xAA && cp != 0xB5 && cp != 0xBA) || cp == 0xD7 ||
         cp == 0xF7 || in(cp, 0x2000, 0x2BFF) || in(cp, 0x3000, 0x303F) || in(cp, 0xE000, 0xF8FF) ||
         in(cp, 0xFE00, 0xFE6F) || in(cp, 0xFF00, 0xFF20) || in(cp, 0xFF3B, 0xFF40) ||
         in(cp, 0xFF5B, 0xFF65) || in(cp, 0xFFF0, 0xFFFF) || in(cp, 0x1F000, 0x1FAFF);
}

bool is_cjk(char32_t cp) {
  return in(cp, 0x2E80, 0x2FDF) || in(cp, 0x3040, 0x31FF) || in(cp, 0x3400, 0x4DBF) ||
         in(cp, 0x4E00, 0x9FFF) || in(cp, 0xAC00, 0xD7AF) || in(cp, 0xF900, 0xFAFF) ||
         in(cp, 0x20000, 0x3FFFF);
}

Char classify(char32_t cp) {
  if (cp < 0x80) {
    const auto c = static_cast<char>(cp);
    if (c >= 'a' && c <= 'z') return {cp, CharClass::kLetter, Script::kAsciiLower};
    if (c >= 'A' && c <= 'Z') return {cp, CharClass::kLetter, Script::kAsciiUpper};
    if (c >= '0' && c <= '9') return {cp, CharClass::kDigit, Script::kAsciiSymbol};
    if (c == '\n' || c == '\r') return {cp, CharClass::kNewline, Script::kAsciiSymbol};
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f')
      return {cp, CharClass::kSpace, Script::kAsciiSymbol};
    return {cp, CharClass::kOther, Script::kAsciiSymbol};
  }
  if (is_unicode_space(cp)) return {cp, CharClass::kSpace, Script::kOtherSymbol};
  if (is_unicode_digit(cp)) return {cp, CharClass::kDigit, Script::kOtherSymbol};
  if (is_unicode_symbol(cp)) return {cp, CharClass::kOther, Script::kOtherSymbol};
  if (is_cjk(cp)) return {cp, CharClass::kLetter, Script::kCjk};
  return {cp, CharClass::kLetter, Script::kOtherLetter};
}

// UTF-8 decoding; a byte that does not start a valid sequence becomes one symbol.
std::vector<Char> decode(std::string_view text) {
  std::vector<Char> out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    int extra = 0;
    char32_t cp = b0;
    if (b0 >= 0xF0 && b0 <= 0xF4) {
      extra = 3;
      cp = b0 & 0x07u;
    } else if (b0 >= 0xE0) {
      extra = b0 <= 0xEF ? 2 : -1;
      cp = b0 & 0x0Fu;
    } else if (b0 >= 0xC2) {
      extra = 1;
      cp = b0 & 0x1Fu;
    } else if (b0 >= 0x80) {
      extra = -1;
    }
    bool ok = extra >= 0 && i + static_cast<std::size_t>(std::max(extra, 0)) < text.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      if ((b & 0xC0u) != 0x80u) {
        ok = false;
      } else {
        cp = (cp << 6) | (b & 0x3Fu);
      }
    }
    if (!ok) {
      out.push_back(Char{b0, CharClass::kOther, Script::kOtherSymbol});
      ++i;
      continue;
    }
    out.push_back(classify(cp));
    i += static_cast<std::size_t>(extra) + 1;
  }
  return out;
}

bool is_ws(const Char& c) { return c.cls == CharClass::kSpace || c.cls == CharClass::kNewline; }

char32_t lower_ascii(char32_t cp) { return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp; }

// Length of a contraction ('s 't 're 've 'm 'll 'd, any case) starting at i, or 0.
std::size_t contraction_length(const std::vector<Char>& s, std::size_t i) {
  if (s[i].cp != '\'' || i + 1 >= s.size()) return 0;
  const char32_t a = lower_ascii(s[i + 1].cp);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 < s.size()) {
    const char32_t b = lower_ascii(s[i + 2].cp);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  }
  return 0;
}

enum class Lead : std::uint8_t { kNone, kSpace, kPunct };

// Expected tokens of one letter run (see the header for the fitted formulas).
double word_cost(const std::vector<Char>& s, std::size_t begin, std::size_t end, Lead lead) {
  int lower = 0, upper = 0, other = 0, cjk = 0;
  bool first_upper = false, rest_has_upper = false;
  for (std::size_t k = begin; k < end; ++k) {
    switch (s[k].script) {
      case Script::kAsciiLower:
        ++lower;
        break;
      case Script::kAsciiUpper:
        if (lower + upper == 0) {
          first_upper = true;
        } else {
          rest_has_upper = true;
        }
        ++upper;
        break;
      case Script::kCjk:
        ++cjk;
        break;
      default:
        ++other;
        break;
    }
  }
  const double len = static_cast<double>(lower + upper + other);
  double base = 0.0;
  if (lower + upper + other > 0) {
    if (upper == 0) {
      base = lead == Lead::kSpace ? 1.0 + 0.09 * std::max(0.0, len - 8.0)
                                  : 1.05 + 0.13 * std::max(0.0, len - 5.0);
    } else if (first_upper && !rest_has_upper) {
      base = (lead == Lead::kPunct ? 1.1 : 1.0) + 0.13 * std::max(0.0, len - 5.0);
    } else if (lower == 0) {
      base = 1.0 + 0.17 * std::max(0.0, len - 2.0);
    } else {
      base = 1.3 + 0.15 * std::max(0.0, len - 5.0);
    }
  }
  const double cost = base + 0.15 * other + 0.65 * cjk;
  return std::max(1.0, cost);
}

// Expected tokens of one punctuation run [begin, end) of class kOther.
double punct_cost(const std::vector<Char>& s, std::size_t begin, std::size_t end) {
  int runs = 0, repeats = 0, symbols = 0;
  for (std::size_t k = begin; k < end; ++k) {
    if (k == begin || s[k].cp != s[k - 1].cp) {
      ++runs;
    } else {
      ++repeats;
    }
    if (s[k].script == Script::kOtherSymbol) ++symbols;
  }
  return std::max(1.0, 0.5 * runs) + 0.06 * repeats + 0.5 * symbols;
}

}  // namespace

std::int64_t estimate_tokens(std::string_view text) {
  const std::vector<Char> s = decode(text);
  const std::size_t n = s.size();
  double total = 0.0;
  std::size_t i = 0;
  auto letters_end = [&](std::size_t from) {
    std::size_t j = from;
    while (j < n && s[j].cls == CharClass::kLetter) ++j;
    return j;
  };
  while (i < n) {
    // 1. contractions
    if (const std::size_t len = contraction_length(s, i); len > 0) {
      total += 1.0;
      i += len;
      continue;
    }
    // 2. [^\r\n\p{L}\p{N}]?\p{L}+
    if (s[i].cls == CharClass::kLetter) {
      const std::size_t j = letters_end(i);
      total += word_cost(s, i, j, Lead::kNone);
      i = j;
      continue;
    }
    if (s[i].cls != CharClass::kNewline && s[i].cls != CharClass::kDigit && i + 1 < n &&
        s[i + 1].cls == CharClass::kLetter) {
      const std::size_t j = letters_end(i + 1);
      total += word_cost(s, i + 1, j, s[i].cp == ' ' ? Lead::kSpace : Lead::kPunct);
      i = j;
      continue;
    }
    // 3. \p{N}{1,3}
    if (s[i].cls == CharClass::kDigit) {
      std::size_t j = i;
      while (j < n && j < i + 3 && s[j].cls == CharClass::kDigit) ++j;
      total += 1.0;
      i = j;
      continue;
    }
    // 4. ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    std::size_t p = i;
    if (s[p].cp == ' ' && p + 1 < n && s[p + 1].cls == CharClass::kOther) ++p;
    if (s[p].cls == CharClass::kOther) {
      std::size_t j = p;
      while (j < n && s[j].cls == CharClass::kOther) ++j;
      total += punct_cost(s, p, j);
      while (j < n && s[j].cls == CharClass::kNewline) ++j;
      i = j;
      continue;
    }
    // 5.-7. whitespace: \s*[\r\n]+ | \s+(?!\S) | \s+
    std::size_t j = i;
    std::size_t last_newline = n;
    while (j < n && is_ws(s[j])) {
      if (s[j].cls == CharClass::kNewline) last_newline = j;
      ++j;
    }
    if (last_newline < n) {
      i = last_newline + 1;
    } else if (j == n || j - i == 1) {
      i = j;
    } else {
      i = j - 1;  // the last space goes with the following word or symbol
    }
    total += 1.0;
  }
  return static_cast<std::int64_t>(std::llround(total));
}

}  // namespace kvsim::workload
