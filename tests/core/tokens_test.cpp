#include "kvsim/core/tokens.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kvsim/core/rng.hpp"

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

}  // namespace
}  // namespace kvsim
