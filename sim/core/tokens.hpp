#pragma once
// Tokens are identities, not text. A token sequence is a list of segments; each segment is
// `length` tokens of one content stream `content_id`, starting at `offset` within that stream.
// Two sequences whose segments describe the same (content_id, offset) tokens hold the same
// tokens, so shared system prompts, conversation history and trace hash blocks all produce the
// same block hash chains, and prefix sharing falls out of hashing as it does in vLLM.
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "sim/core/flat_hash.hpp"

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

// Tokens at the start of `a` and `b` that are the same tokens (segment by segment).
std::int64_t common_prefix_tokens(const TokenSequence& a, const TokenSequence& b);

// block_hashes(seq), taking the hashes of the blocks `seq` shares with `prev_seq` from
// `prev_hashes` (block_hashes(prev_seq) with the same block size and salt) instead of hashing
// them again: a conversation's next turn re-hashes only its new blocks. Same result.
std::vector<std::uint64_t> block_hashes_reusing(const TokenSequence& seq, std::int64_t block_size,
                                                const TokenSequence& prev_seq,
                                                const std::vector<std::uint64_t>& prev_hashes,
                                                std::uint64_t salt = 0);

// Maps block hashes to small keys that stand for them (engine::BlockIds: dense block ids).
class HashInterner {
 public:
  virtual ~HashInterner() = default;
  // The key of `hash`: the same key for the same hash while the key is in use.
  virtual std::uint64_t intern(std::uint64_t hash) = 0;
  // intern() of each hash, in order, in place.
  virtual void intern_all(std::uint64_t* hashes, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) hashes[i] = intern(hashes[i]);
  }
};

// Remembers, per key (a conversation), the last sequence hashed and its block hashes, so the
// key's next sequence re-hashes only its new blocks (block_hashes_reusing). Holds at most
// `capacity` keys, dropping the least recently used; it changes only the work, never a hash.
// With an interner, hashes() returns the interned keys instead; the blocks a conversation's next
// turn shares with its last keep the keys remembered (for_each_key() lists them, so that the
// interner keeps them bound) and are not looked up again.
class BlockHashCache {
 public:
  explicit BlockHashCache(std::int64_t block_size, std::size_t capacity = 1024);
  // Interns from now on; set before the first call to hashes().
  void set_interner(HashInterner* interner) { interner_ = interner; }
  // block_hashes(seq, block_size), or their interned keys; key < 0 is never cached.
  std::vector<std::uint64_t> hashes(std::int64_t key, const TokenSequence& seq);
  // Calls f(key) for every interned key the cache remembers.
  template <class F>
  void for_each_key(F&& f) const {
    for (const Item& item : items_) {
      for (const std::uint64_t k : item.keys) f(k);
    }
  }

 private:
  struct Item {
    std::int64_t key = 0;
    TokenSequence seq;
    std::vector<std::uint64_t> hashes;
    std::vector<std::uint64_t> keys;  // interned hashes
  };
  std::int64_t block_size_;
  std::size_t capacity_;
  HashInterner* interner_ = nullptr;
  std::list<Item> items_;  // most recently used first
  std::unordered_map<std::int64_t, std::list<Item>::iterator> by_key_;
};

// Names for the blocks of content streams that always sit at the same place in a sequence, so
// that they need neither hashing nor a lookup: every stream registered here is read whole
// (`stream_tokens` tokens from offset 0, a multiple of the block size) and always follows the
// same registered stream, or always starts the sequence. Then a stream stands for its whole
// prefix, each of its blocks has one chained hash wherever it occurs (block_hashes), and
// (stream, block within it) names that hash one-to-one: trace hash ids, which name prefixes
// (Mooncake: equal hash ids mean equal prefixes; checked here, not assumed). Names are
// [0, size()). The blocks after a sequence's named ones are hashed and interned (with ids from
// size() up), chained on not from the last named block's hash, which is never computed, but
// from a hash of the chain of streams, which like it stands for the whole prefix: their keys
// are one-to-one with block_hashes()'s as well.
class FixedPrefixNames {
 public:
  FixedPrefixNames(std::int64_t block_size, std::int64_t stream_tokens, std::uint64_t salt = 0);
  // Registers the streams a sequence starts with, in order. Returns false, and leaves
  // consistent() false for good, when a stream was registered before after another stream (or
  // at the start), or a stream repeats; the names must then not be used.
  bool add_chain(const std::vector<std::uint64_t>& content_ids);
  bool consistent() const { return consistent_; }
  // Blocks named (ids handed out): registered streams x blocks per stream.
  std::uint64_t size() const { return static_cast<std::uint64_t>(parent_.size()) * blocks_per_stream_; }
  // The keys of seq's full blocks: block_hashes(seq, block_size, salt) renamed. The leading
  // whole registered streams, each after its own parent, by position; the rest hashed and
  // interned (with ids from size() up).
  std::vector<std::uint64_t> keys(const TokenSequence& seq, HashInterner& interner) const;
  // How many of seq's leading blocks keys() names by position.
  std::int64_t named_blocks(const TokenSequence& seq) const;

 private:
  static constexpr std::uint32_t kRoot = 0xffffffffU;
  // The registered streams seq starts with, as slots, each after its own parent.
  template <class F>
  void for_each_named(const TokenSequence& seq, F&& f) const;
  std::int64_t block_size_;
  std::int64_t stream_tokens_;
  std::uint64_t salt_;
  std::uint64_t blocks_per_stream_;
  bool consistent_ = true;
  FlatHashMap slot_;                                       // content id -> slot
  std::vector<std::uint32_t> parent_;                      // per slot: the slot before, or kRoot
  std::vector<std::uint64_t> end_hash_;                    // per slot: hash of its chain of streams
};

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
