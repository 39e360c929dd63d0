#pragma once
// Tokens are identities, not text. A token sequence is a list of segments; each segment is
// `length` tokens of one content stream `content_id`, starting at `offset` within that stream.
// Two sequences whose segments describe the same (content_id, offset) tokens hold the same
// tokens, so shared system prompts, conversation history and trace hash blocks all produce the
// same block hash chains, and prefix sharing falls out of hashing as it does in vLLM.
#include <cstdint>
#include <vector>

namespace kvsim {

struct TokenSegment {
  std::uint64_t content_id = 0;  // which content stream
  std::int64_t offset = 0;       // first token's position within that stream
  std::int64_t length = 0;       // tokens
  friend bool operator==(const TokenSegment&, const TokenSegment&) = default;
};

using TokenSequence = std::vector<TokenSegment>;

std::int64_t total_tokens(const TokenSequence& seq);

// Appends `length` tokens of stream `content_id` starting at `offset`, merging with the last
// segment when it continues the same stream.
void append_tokens(TokenSequence& seq, std::uint64_t content_id, std::int64_t length,
                   std::int64_t offset = 0);

// Chained hashes of the full `block_size`-token blocks of `seq` (the partial tail is not hashed):
// hash[i] = mix(hash[i-1], tokens of block i). Equal prefixes give equal hash prefixes.
std::vector<std::uint64_t> block_hashes(const TokenSequence& seq, std::int64_t block_size,
                                        std::uint64_t salt = 0);

// Content ids for distinct kinds of token streams, so that ids never collide across kinds.
enum class ContentKind : std::uint8_t {
  kCommonPrefix = 1,
  kUserTurn = 2,
  kAssistantTurn = 3,
  kTemplate = 4,
  kTraceBlock = 5,
  kUnique = 6,
};
std::uint64_t content_id(ContentKind kind, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0);

}  // namespace kvsim
