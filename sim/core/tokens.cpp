#include "tokens.hpp"

#include <algorithm>

namespace kvsim {
namespace {

constexpr std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

std::int64_t total_tokens(const TokenSequence& seq) {
  std::int64_t n = 0;
  for (const auto& s : seq) n += s.length;
  return n;
}

void append_tokens(TokenSequence& seq, std::uint64_t content_id, std::int64_t length, std::int64_t offset) {
  if (length <= 0) return;
  if (!seq.empty()) {
    auto& last = seq.back();
    if (last.content_id == content_id && last.offset + last.length == offset) {
      last.length += length;
      return;
    }
  }
  seq.push_back(TokenSegment{content_id, offset, length});
}

std::vector<std::uint64_t> block_hashes(const TokenSequence& seq, std::int64_t block_size, std::uint64_t salt) {
  std::vector<std::uint64_t> out;
  if (block_size <= 0) return out;
  out.reserve(static_cast<std::size_t>(total_tokens(seq) / block_size));
  std::uint64_t parent = mix(0x6b7673696dULL, salt);
  std::uint64_t h = parent;
  std::int64_t filled = 0;
  for (const auto& s : seq) {
    std::int64_t pos = 0;
    while (pos < s.length) {
      const std::int64_t take = std::min(block_size - filled, s.length - pos);
      // A piece of a block: which stream, where in it, how long.
      h = mix(mix(mix(h, s.content_id), static_cast<std::uint64_t>(s.offset + pos)),
              static_cast<std::uint64_t>(take));
      filled += take;
      pos += take;
      if (filled == block_size) {
        parent = h;
        out.push_back(h);
        filled = 0;
        h = mix(parent, 0x626c6bULL);
      }
    }
  }
  return out;
}

std::uint64_t content_id(ContentKind kind, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return mix(mix(mix(static_cast<std::uint64_t>(kind), a), b), c);
}

}  // namespace kvsim
