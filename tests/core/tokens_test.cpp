#include "sim/core/tokens.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"

namespace kvsim {
namespace {

// A conversation as the multi-turn benchmark builds it: a shared system prefix, then user and
// assistant turns, each turn's prompt the whole history plus the new message.
std::vector<TokenSequence> conversation_turns(Rng& rng, int turns) {
  std::vector<TokenSequence> out;
  TokenSequence history;
  append_tokens(history, content_id(ContentKind::kCommonPrefix, 1), rng.uniform_int(1, 200));
  for (int t = 0; t < turns; ++t) {
    append_tokens(history, content_id(ContentKind::kUserTurn, 7, static_cast<std::uint64_t>(t)),
                  rng.uniform_int(1, 90));
    TokenSequence full = history;
    const std::uint64_t answer = content_id(ContentKind::kAssistantTurn, 7, static_cast<std::uint64_t>(t));
    append_tokens(full, answer, rng.uniform_int(1, 70));
    out.push_back(full);
    // The next prompt repeats only part of the answer's stream at times (a shorter history).
    append_tokens(history, answer, rng.uniform_int(1, 70));
  }
  return out;
}

// Reusing the hashes of a previous sequence gives exactly what hashing from scratch gives, for
// sequences that share whole segments, part of a segment, nothing, or everything.
TEST(BlockHashes, ReusingAPreviousSequenceGivesTheSameHashes) {
  Rng rng(11);
  for (const std::int64_t block : {1, 3, 16, 64}) {
    const auto turns = conversation_turns(rng, 12);
    TokenSequence prev;
    std::vector<std::uint64_t> prev_hashes;
    for (const auto& seq : turns) {
      const auto fresh = block_hashes(seq, block);
      EXPECT_EQ(block_hashes_reusing(seq, block, prev, prev_hashes), fresh) << "block " << block;
      // The previous sequence itself, and an unrelated one.
      EXPECT_EQ(block_hashes_reusing(seq, block, seq, fresh), fresh);
      EXPECT_EQ(block_hashes_reusing(seq, block, turns.front(), block_hashes(turns.front(), block)), fresh);
      prev = seq;
      prev_hashes = fresh;
    }
  }
}

// Shared tokens: whole equal segments, plus the common part of the first differing segments
// when they read one stream from one offset.
TEST(BlockHashes, CommonPrefixTokensCountsWholeAndPartialSegments) {
  TokenSequence a;
  TokenSequence b;
  append_tokens(a, 1, 10);
  append_tokens(b, 1, 10);
  append_tokens(a, 2, 30);
  append_tokens(b, 2, 12);
  EXPECT_EQ(common_prefix_tokens(a, b), 22);
  append_tokens(b, 3, 5);  // b: 1x10, 2x12, 3x5
  EXPECT_EQ(common_prefix_tokens(a, b), 22);
  TokenSequence c;
  append_tokens(c, 1, 10);
  append_tokens(c, 2, 30, 1);  // same stream, another offset: nothing more in common
  EXPECT_EQ(common_prefix_tokens(a, c), 10);
  EXPECT_EQ(common_prefix_tokens(a, TokenSequence{}), 0);
}

// The cache answers as block_hashes would, whatever the order of keys and however few it may
// hold (an evicted key starts over).
TEST(BlockHashes, CacheGivesTheSameHashesAcrossInterleavedConversations) {
  Rng rng(5);
  std::vector<std::vector<TokenSequence>> convs;
  for (int c = 0; c < 6; ++c) convs.push_back(conversation_turns(rng, 8));
  for (const std::size_t capacity : {1U, 3U, 16U}) {
    BlockHashCache cache(16, capacity);
    for (std::size_t t = 0; t < 8; ++t) {
      for (std::size_t c = 0; c < convs.size(); ++c) {
        const auto& seq = convs[c][t];
        EXPECT_EQ(cache.hashes(static_cast<std::int64_t>(c), seq), block_hashes(seq, 16));
      }
    }
    EXPECT_EQ(cache.hashes(-1, convs[0][3]), block_hashes(convs[0][3], 16));
  }
}

// An interner handing out ids from `first` up, one per hash, never reclaimed.
class CountingInterner final : public HashInterner {
 public:
  explicit CountingInterner(std::uint64_t first) : next_(first) {}
  std::uint64_t intern(std::uint64_t hash) override {
    const auto [it, fresh] = ids_.try_emplace(hash, next_);
    if (fresh) ++next_;
    return it->second;
  }

 private:
  std::uint64_t next_;
  std::unordered_map<std::uint64_t, std::uint64_t> ids_;
};

// Streams that always follow the same stream, sent as trace prompts are (whole streams, then a
// tail of the request's own and an answer), named by position: every sequence gets as many
// keys as block_hashes() gives, and across all sequences a key stands for one hash and a hash
// for one key. Sequences that read a registered stream elsewhere (after another stream, from
// another offset) are hashed, and must not collide with the names.
TEST(FixedPrefixNames, NamesAreAOneToOneRenamingOfTheBlockHashes) {
  struct Shape {
    std::int64_t block;
    std::int64_t stream;
  };
  for (const Shape shape : {Shape{4, 16}, Shape{16, 16}, Shape{3, 12}, Shape{16, 512}}) {
    Rng rng(static_cast<std::uint64_t>(shape.block * 1000 + shape.stream));
    // A tree of streams: each chain extends a random prefix of an earlier one.
    std::vector<std::vector<std::uint64_t>> chains;
    std::uint64_t next_stream = 1;
    for (int i = 0; i < 60; ++i) {
      std::vector<std::uint64_t> c;
      if (!chains.empty()) {
        const auto& base = chains[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(chains.size()) - 1))];
        c.assign(base.begin(), base.begin() + rng.uniform_int(0, static_cast<std::int64_t>(base.size())));
      }
      for (std::int64_t k = rng.uniform_int(0, 3); k > 0; --k) {
        c.push_back(content_id(ContentKind::kTraceBlock, next_stream++));
      }
      chains.push_back(c);
    }
    FixedPrefixNames names(shape.block, shape.stream);
    for (const auto& c : chains) ASSERT_TRUE(names.add_chain(c));
    ASSERT_TRUE(names.consistent());
    EXPECT_EQ(names.size(), (next_stream - 1) * static_cast<std::uint64_t>(shape.stream / shape.block));

    CountingInterner interner(names.size());
    std::unordered_map<std::uint64_t, std::uint64_t> key_of;
    std::unordered_map<std::uint64_t, std::uint64_t> hash_of;
    std::int64_t named_total = 0;
    for (std::size_t i = 0; i < chains.size() * 3; ++i) {
      const auto& c = chains[i % chains.size()];
      TokenSequence seq;
      for (const std::uint64_t cid : c) append_tokens(seq, cid, shape.stream);
      std::int64_t expect_named = static_cast<std::int64_t>(c.size()) * (shape.stream / shape.block);
      if (i >= 2 * chains.size() && !c.empty()) {
        // A registered stream read elsewhere: its own first stream again after the chain, or
        // from another offset.
        if (rng.uniform_int(0, 1) == 0) append_tokens(seq, c.front(), shape.stream);
        else append_tokens(seq, c.back(), shape.stream - 1, 1);
      }
      append_tokens(seq, content_id(ContentKind::kUnique, 9, i), rng.uniform_int(0, 2 * shape.stream));
      append_tokens(seq, content_id(ContentKind::kUnique, 10, i), rng.uniform_int(1, 3 * shape.block));
      if (i >= chains.size() && i < 2 * chains.size() && !c.empty()) {
        // The chain without its first stream: nothing is named.
        seq.erase(seq.begin());
        expect_named = 0;
      }
      const std::vector<std::uint64_t> hashes = block_hashes(seq, shape.block);
      const std::vector<std::uint64_t> keys = names.keys(seq, interner);
      ASSERT_EQ(keys.size(), hashes.size());
      EXPECT_EQ(names.named_blocks(seq), expect_named) << "sequence " << i;
      named_total += expect_named;
      for (std::size_t b = 0; b < keys.size(); ++b) {
        EXPECT_EQ(key_of.try_emplace(hashes[b], keys[b]).first->second, keys[b]) << "sequence " << i << " block " << b;
        EXPECT_EQ(hash_of.try_emplace(keys[b], hashes[b]).first->second, hashes[b]) << "sequence " << i << " block " << b;
        if (static_cast<std::int64_t>(b) < expect_named) EXPECT_LT(keys[b], names.size());
        else EXPECT_GE(keys[b], names.size());
      }
    }
    EXPECT_GT(named_total, 0);
  }
}

// A stream after two different streams, a stream that repeats in a chain, or streams that are
// not whole blocks: the names do not hold.
TEST(FixedPrefixNames, StreamsThatDoNotNameTheirPrefixAreRefused) {
  FixedPrefixNames names(16, 64);
  EXPECT_TRUE(names.add_chain({1, 2, 3}));
  EXPECT_TRUE(names.add_chain({1, 2, 4}));
  EXPECT_TRUE(names.add_chain({1}));
  EXPECT_FALSE(names.add_chain({5, 2}));  // 2 followed 1 before
  EXPECT_FALSE(names.consistent());
  EXPECT_FALSE(names.add_chain({1, 2}));  // refused for good

  FixedPrefixNames first(16, 64);
  EXPECT_TRUE(first.add_chain({7}));
  EXPECT_FALSE(first.add_chain({8, 7}));  // 7 started a sequence before
  FixedPrefixNames repeat(16, 64);
  EXPECT_FALSE(repeat.add_chain({7, 7}));
  FixedPrefixNames ragged(16, 40);
  EXPECT_FALSE(ragged.consistent());
  EXPECT_FALSE(ragged.add_chain({1}));
}

// A registered stream read in part right after its parent would share hashes with the named
// blocks under other keys: keys() refuses it.
TEST(FixedPrefixNames, APartialRegisteredStreamAfterItsParentIsRefused) {
  FixedPrefixNames names(16, 64);
  ASSERT_TRUE(names.add_chain({1, 2}));
  CountingInterner interner(names.size());
  TokenSequence seq;
  append_tokens(seq, 1, 64);
  append_tokens(seq, 2, 32);
  EXPECT_THROW(names.keys(seq, interner), InternalError);
}

}  // namespace
}  // namespace kvsim
