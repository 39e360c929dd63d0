#include "sim/scenario/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace kvsim::scenario {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (lower(text[i]) != lower(prefix[i])) return false;
  }
  return true;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Rolling rows of the dynamic programme: d[i][j] = distance of a[0..i) and b[0..j).
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::size_t> prev2(m + 1, 0);
  std::vector<std::size_t> prev(m + 1, 0);
  std::vector<std::size_t> cur(m + 1, 0);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[m];
}

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 0;
  bool best_prefix = false;
  for (const auto& c : candidates) {
    const std::size_t longer = std::max(word.size(), c.size());
    const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, longer / 3));
    const std::size_t d = edit_distance(word, c);
    const bool prefix = std::min(word.size(), c.size()) >= 2 &&
                        (starts_with_ci(c, word) || starts_with_ci(word, c));
    const bool long_prefix = prefix && std::min(word.size(), c.size()) >= 3;
    if (d > limit && !long_prefix) continue;
    // Nearer wins; at equal distance a name that extends the word (Gi -> GiB) wins.
    if (best.empty() || d < best_distance || (d == best_distance && prefix && !best_prefix)) {
      best = c;
      best_distance = d;
      best_prefix = prefix;
    }
  }
  return best;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace kvsim::scenario
