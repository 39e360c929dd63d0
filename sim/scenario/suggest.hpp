#pragma once
// "Did you mean" for misspelt names: keys, presets, enum values, units.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvsim::scenario {

// Optimal string alignment distance (insertions, deletions, substitutions and transpositions of
// adjacent characters each cost 1), compared case-insensitively.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a likely typo: distance at most
// max(1, min(3, size/3)) of the longer name, or `word` is a prefix of it (or it of `word`)
// with at least 3 characters in common. At equal distance a candidate that extends `word` (or
// that it extends) wins, then the earlier one. Empty when none fits.
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c"
std::string join_names(const std::vector<std::string>& names);

}  // namespace kvsim::scenario
