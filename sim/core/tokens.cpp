#include "sim/core/tokens.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "sim/core/error.hpp"

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

namespace {

constexpr std::uint64_t kChainStart = 0x6b7673696dULL;
constexpr std::uint64_t kBlockEnd = 0x626c6bULL;
constexpr std::uint64_t kStreamEnd = 0x7374726d656eULL;

// Hashes the full blocks of `seq` from block `first_block` on, appending to `out`, chained on
// from `prev`, the hash of the block before them (nullptr: they start the chain).
void hash_blocks_after(const TokenSequence& seq, std::int64_t block_size, std::uint64_t salt,
                       std::int64_t first_block, const std::uint64_t* prev, std::vector<std::uint64_t>& out) {
  std::uint64_t h = prev != nullptr ? mix(*prev, kBlockEnd) : mix(kChainStart, salt);
  std::int64_t skip = first_block * block_size;  // tokens already covered
  std::int64_t filled = 0;
  for (const auto& s : seq) {
    std::int64_t pos = 0;
    if (skip >= s.length) {
      skip -= s.length;
      continue;
    }
    pos = skip;
    skip = 0;
    while (pos < s.length) {
      const std::int64_t take = std::min(block_size - filled, s.length - pos);
      // A piece of a block: which stream, where in it, how long.
      h = mix(mix(mix(h, s.content_id), static_cast<std::uint64_t>(s.offset + pos)),
              static_cast<std::uint64_t>(take));
      filled += take;
      pos += take;
      if (filled == block_size) {
        out.push_back(h);
        filled = 0;
        h = mix(h, kBlockEnd);
      }
    }
  }
}

// hash_blocks_after(), where `out` holds the hashes of blocks [0, first_block) already.
void hash_blocks_from(const TokenSequence& seq, std::int64_t block_size, std::uint64_t salt,
                      std::int64_t first_block, std::vector<std::uint64_t>& out) {
  const std::uint64_t prev = first_block > 0 ? out[static_cast<std::size_t>(first_block - 1)] : 0;
  hash_blocks_after(seq, block_size, salt, first_block, first_block > 0 ? &prev : nullptr, out);
}

}  // namespace

std::vector<std::uint64_t> block_hashes(const TokenSequence& seq, std::int64_t block_size, std::uint64_t salt) {
  std::vector<std::uint64_t> out;
  if (block_size <= 0) return out;
  out.reserve(static_cast<std::size_t>(total_tokens(seq) / block_size));
  hash_blocks_from(seq, block_size, salt, 0, out);
  return out;
}

std::int64_t common_prefix_tokens(const TokenSequence& a, const TokenSequence& b) {
  std::int64_t n = 0;
  std::size_t i = 0;
  for (; i < a.size() && i < b.size() && a[i] == b[i]; ++i) n += a[i].length;
  // The first differing segments still share tokens when they read one stream from one offset.
  if (i < a.size() && i < b.size() && a[i].content_id == b[i].content_id && a[i].offset == b[i].offset) {
    n += std::min(a[i].length, b[i].length);
  }
  return n;
}

namespace {

// The leading full blocks of `seq` that are the same tokens as those of `prev_seq`, of which
// `prev_blocks` were hashed: their hashes can be reused.
std::size_t shared_blocks(const TokenSequence& seq, std::int64_t block_size, const TokenSequence& prev_seq,
                          std::size_t prev_blocks) {
  return std::min(static_cast<std::size_t>(common_prefix_tokens(seq, prev_seq) / block_size), prev_blocks);
}

}  // namespace

std::vector<std::uint64_t> block_hashes_reusing(const TokenSequence& seq, std::int64_t block_size,
                                                const TokenSequence& prev_seq,
                                                const std::vector<std::uint64_t>& prev_hashes, std::uint64_t salt) {
  std::vector<std::uint64_t> out;
  if (block_size <= 0) return out;
  out.reserve(static_cast<std::size_t>(total_tokens(seq) / block_size));
  const std::size_t shared = shared_blocks(seq, block_size, prev_seq, prev_hashes.size());
  out.assign(prev_hashes.begin(), prev_hashes.begin() + static_cast<std::ptrdiff_t>(shared));
  hash_blocks_from(seq, block_size, salt, static_cast<std::int64_t>(shared), out);
  return out;
}

BlockHashCache::BlockHashCache(std::int64_t block_size, std::size_t capacity)
    : block_size_(block_size), capacity_(std::max<std::size_t>(capacity, 1)) {}

std::vector<std::uint64_t> BlockHashCache::hashes(std::int64_t key, const TokenSequence& seq) {
  if (key < 0) {
    std::vector<std::uint64_t> out = block_hashes(seq, block_size_);
    if (interner_ != nullptr) interner_->intern_all(out.data(), out.size());
    return out;
  }
  auto it = by_key_.find(key);
  if (it == by_key_.end()) {
    if (items_.size() >= capacity_) {
      by_key_.erase(items_.back().key);
      items_.pop_back();
    }
    items_.push_front(Item{key, {}, {}, {}});
    it = by_key_.emplace(key, items_.begin()).first;
  } else {
    items_.splice(items_.begin(), items_, it->second);
  }
  Item& item = *it->second;
  // The blocks this sequence shares with the last keep their hashes (block_hashes_reusing());
  // the rest are hashed after them, in place.
  const std::size_t shared = shared_blocks(seq, block_size_, item.seq, item.hashes.size());
  if (interner_ == nullptr) {
    item.hashes.resize(shared);
    hash_blocks_from(seq, block_size_, 0, static_cast<std::int64_t>(shared), item.hashes);
    item.seq = seq;
    return item.hashes;
  }
  // With an interner: the leading blocks whose hashes equal the last sequence's keep their
  // keys (those shared, and any new ones that happen to hash the same at the same place); the
  // rest are interned, in order.
  std::vector<std::uint64_t> fresh;
  fresh.reserve(static_cast<std::size_t>(total_tokens(seq) / block_size_) - shared);
  hash_blocks_after(seq, block_size_, 0, static_cast<std::int64_t>(shared),
                    shared > 0 ? &item.hashes[shared - 1] : nullptr, fresh);
  std::size_t same = shared;
  const std::size_t old_size = item.hashes.size();
  while (same < old_size && same - shared < fresh.size() && fresh[same - shared] == item.hashes[same]) ++same;
  item.hashes.resize(shared);
  item.hashes.insert(item.hashes.end(), fresh.begin(), fresh.end());
  item.keys.resize(same);
  item.keys.insert(item.keys.end(), fresh.begin() + static_cast<std::ptrdiff_t>(same - shared), fresh.end());
  interner_->intern_all(item.keys.data() + same, item.keys.size() - same);
  item.seq = seq;
  return item.keys;
}

FixedPrefixNames::FixedPrefixNames(std::int64_t block_size, std::int64_t stream_tokens, std::uint64_t salt)
    : block_size_(block_size),
      stream_tokens_(stream_tokens),
      salt_(salt),
      blocks_per_stream_(block_size > 0 && stream_tokens > 0 && stream_tokens % block_size == 0
                             ? static_cast<std::uint64_t>(stream_tokens / block_size)
                             : 0) {
  // Streams that are not whole blocks cannot be named by position.
  consistent_ = blocks_per_stream_ > 0;
}

bool FixedPrefixNames::add_chain(const std::vector<std::uint64_t>& content_ids) {
  if (!consistent_) return false;
  std::uint32_t prev = kRoot;
  for (const std::uint64_t cid : content_ids) {
    KVSIM_ASSERT(parent_.size() < static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()), "more than 2^31 trace blocks");
    const auto fresh_slot = static_cast<std::int32_t>(parent_.size());
    const auto slot = static_cast<std::uint32_t>(slot_.try_emplace(cid, fresh_slot));
    if (slot == static_cast<std::uint32_t>(fresh_slot)) {
      parent_.push_back(prev);
      end_hash_.push_back(mix(mix(prev == kRoot ? mix(kChainStart, salt_) : end_hash_[prev], cid), kStreamEnd));
    } else if (parent_[slot] != prev) {
      consistent_ = false;
      return false;
    }
    prev = slot;
  }
  return true;
}

template <class F>
void FixedPrefixNames::for_each_named(const TokenSequence& seq, F&& f) const {
  std::uint32_t prev = kRoot;
  for (const TokenSegment& s : seq) {
    if (s.offset != 0 || s.length != stream_tokens_) return;
    const std::int32_t slot = slot_.find(s.content_id);
    if (slot == FlatHashMap::kNone || parent_[static_cast<std::size_t>(slot)] != prev) return;
    prev = static_cast<std::uint32_t>(slot);
    f(prev);
  }
}

std::int64_t FixedPrefixNames::named_blocks(const TokenSequence& seq) const {
  std::int64_t n = 0;
  if (consistent_) for_each_named(seq, [&](std::uint32_t) { n += static_cast<std::int64_t>(blocks_per_stream_); });
  return n;
}

std::vector<std::uint64_t> FixedPrefixNames::keys(const TokenSequence& seq, HashInterner& interner) const {
  KVSIM_ASSERT(consistent_, "naming blocks by position with inconsistent prefixes");
  std::vector<std::uint64_t> out;
  out.reserve(static_cast<std::size_t>(total_tokens(seq) / block_size_));
  std::uint32_t last = kRoot;
  for_each_named(seq, [&](std::uint32_t slot) {
    const std::size_t at = out.size();
    out.resize(at + blocks_per_stream_);
    std::iota(out.begin() + static_cast<std::ptrdiff_t>(at), out.end(), slot * blocks_per_stream_);
    last = slot;
  });
  const std::size_t named = out.size();
  // A registered stream read only in part right after its own parent would hash its blocks as
  // the named ones are hashed: the names would no longer be one-to-one. Drivers register only
  // streams they send whole.
  const std::size_t next_segment = named / blocks_per_stream_;
  if (next_segment < seq.size()) {
    const TokenSegment& s = seq[next_segment];
    const std::int32_t slot = slot_.find(s.content_id);
    KVSIM_ASSERT(slot == FlatHashMap::kNone || s.offset != 0 || parent_[static_cast<std::size_t>(slot)] != last,
                 "a registered stream is read in part right after its parent");
  }
  hash_blocks_after(seq, block_size_, salt_, static_cast<std::int64_t>(named),
                    last == kRoot ? nullptr : &end_hash_[last], out);
  interner.intern_all(out.data() + named, out.size() - named);
  return out;
}

std::uint64_t content_id(ContentKind kind, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return mix(mix(mix(static_cast<std::uint64_t>(kind), a), b), c);
}

}  // namespace kvsim
