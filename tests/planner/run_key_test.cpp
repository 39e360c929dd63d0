// SHA-256 against the FIPS 180-4 / NIST example vectors; repetition seeds against SplitMix64's
// published first output.
#include "sim/planner/run_key.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kvsim::planner {
namespace {

TEST(Sha256, MatchesTheNistExampleVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding needs a second block.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(RunKey, DependsOnTheYamlAndTheSeed) {
  // The key is the hash of the YAML followed by a seed line, as documented.
  EXPECT_EQ(run_key("a: 1\n", 7), sha256_hex("a: 1\n\n# kvsim run seed: 7\n"));
  EXPECT_NE(run_key("a: 1\n", 7), run_key("a: 1\n", 8));
  EXPECT_NE(run_key("a: 1\n", 7), run_key("a: 2\n", 7));
}

TEST(RepetitionSeed, FirstIsTheRootThenSplitMix64) {
  EXPECT_EQ(repetition_seed(42, 0), 42U);
  // SplitMix64 seeded with 0 first returns 0xE220A8397B1DCDAF (Vigna's reference code);
  // repetition 1 of root 0 is that value's low 53 bits.
  EXPECT_EQ(repetition_seed(0, 1), 0xE220A8397B1DCDAFULL & ((1ULL << 53) - 1));
  EXPECT_NE(repetition_seed(0, 1), repetition_seed(0, 2));
  EXPECT_LT(repetition_seed(123, 99), 1ULL << 53);
}

}  // namespace
}  // namespace kvsim::planner
