#include "sim/workload/token_count.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace kvsim::workload {
namespace {

// Reference counts below were measured with the Llama-3 tokenizer (llama3-tokenizer-js 1.2.0,
// Meta's vocabulary, no special tokens).

// Texts of common words split exactly as Llama 3 splits them: one token a piece.
TEST(TokenCount, CommonPiecesAreOneTokenEach) {
  EXPECT_EQ(estimate_tokens(""), 0);
  EXPECT_EQ(estimate_tokens("Hello world!"), 3);  // Hello| world|!
  EXPECT_EQ(estimate_tokens("What is the capital of France?"), 7);
  EXPECT_EQ(estimate_tokens("I'm fine, thanks"), 5);        // I|'m| fine|,| thanks
  EXPECT_EQ(estimate_tokens("0 is a nice number... "), 7);  // ...| (space)
  EXPECT_EQ(estimate_tokens("Please rewrite the following text and add more content: "), 11);
}

// The split pattern: digits in groups of up to three; a newline run is one piece; of several
// spaces before a word, the last one joins the word.
TEST(TokenCount, PreTokenizerPieces) {
  EXPECT_EQ(estimate_tokens("1234567"), 3);  // 123|456|7
  EXPECT_EQ(estimate_tokens("\n\n"), 1);
  EXPECT_EQ(estimate_tokens("a\n\nb"), 3);  // a|\n\n|b
  EXPECT_EQ(estimate_tokens("    x"), 2);   // (3 spaces)| x
  EXPECT_EQ(estimate_tokens("x ="), 2);     // x| =
}

double relative_error(std::int64_t estimate, std::int64_t truth) {
  return std::fabs(static_cast<double>(estimate - truth)) / static_cast<double>(truth);
}

// English prose of 648 characters: 130 tokens. The estimate is documented as within a few
// percent on English prose; we allow 5%.
TEST(TokenCount, EnglishProseWithinFivePercent) {
  const std::string prose =
      "A discrete-event simulator advances its clock from one event to the next instead of ticking "
      "at a "
      "fixed rate. When a request arrives, the scheduler decides whether it can start at once or "
      "must wait "
      "for memory to be freed. Long conversations keep their earlier turns in the key-value cache, "
      "so a later "
      "question only has to compute the new tokens; if the cache was evicted in the meantime, the "
      "whole "
      "history has to be processed again, which costs time and energy. Offloading the cache to "
      "host memory "
      "or to a fast disk trades bandwidth for capacity, and the right balance depends on how often "
      "users come "
      "back and how long they think before they type.";
  EXPECT_LT(relative_error(estimate_tokens(prose), 130), 0.05) << estimate_tokens(prose);
}

// Python code: 79 tokens; allowed 8%.
TEST(TokenCount, CodeWithinEightPercent) {
  const std::string code =
      "def schedule(requests, budget=2048):\n"
      "    \"\"\"Pick requests until the token budget is spent.\"\"\"\n"
      "    batch = []\n"
      "    for req in sorted(requests, key=lambda r: r.arrival_time):\n"
      "        need = req.num_prompt_tokens - req.num_computed_tokens\n"
      "        if need > budget:\n"
      "            break\n"
      "        batch.append(req)\n"
      "        budget -= need\n"
      "    return batch\n";
  EXPECT_LT(relative_error(estimate_tokens(code), 79), 0.08) << estimate_tokens(code);
}

// Chinese: 58 characters, 38 tokens (about 0.65 a character); allowed 15%.
TEST(TokenCount, ChineseWithinFifteenPercent) {
  const std::string zh =
      "\xe4\xba\xba\xe5\xb7\xa5\xe6\x99\xba\xe8\x83\xbd\xe6\x98\xaf\xe8\xae\xa1\xe7\xae\x97\xe6\x9c"
      "\xba"
      "\xe7\xa7\x91\xe5\xad\xa6\xe7\x9a\x84\xe4\xb8\x80\xe4\xb8\xaa\xe5\x88\x86\xe6\x94\xaf\xef\xbc"
      "\x8c"
      "\xe5\xae\x83\xe4\xbc\x81\xe5\x9b\xbe\xe4\xba\x86\xe8\xa7\xa3\xe6\x99\xba\xe8\x83\xbd\xe7\x9a"
      "\x84"
      "\xe5\xae\x9e\xe8\xb4\xa8\xef\xbc\x8c\xe5\xb9\xb6\xe7\x94\x9f\xe4\xba\xa7\xe5\x87\xba\xe4\xb8"
      "\x80"
      "\xe7\xa7\x8d\xe6\x96\xb0\xe7\x9a\x84\xe8\x83\xbd\xe4\xbb\xa5\xe4\xba\xba\xe7\xb1\xbb\xe6\x99"
      "\xba"
      "\xe8\x83\xbd\xe7\x9b\xb8\xe4\xbc\xbc\xe7\x9a\x84\xe6\x96\xb9\xe5\xbc\x8f\xe5\x81\x9a\xe5\x87"
      "\xba"
      "\xe5\x8f\x8d\xe5\xba\x94\xe7\x9a\x84\xe6\x99\xba\xe8\x83\xbd\xe6\x9c\xba\xe5\x99\xa8\xe3\x80"
      "\x82";
  EXPECT_LT(relative_error(estimate_tokens(zh), 38), 0.15) << estimate_tokens(zh);
}

// Invalid UTF-8 is counted, not rejected, and the count never shrinks when text is appended.
TEST(TokenCount, RobustAndMonotone) {
  EXPECT_GT(estimate_tokens("\xff\xfe abc \xc3"), 0);
  std::string text;
  std::int64_t last = 0;
  for (int i = 0; i < 50; ++i) {
    text += "word" + std::to_string(i) + ", ";
    const std::int64_t n = estimate_tokens(text);
    EXPECT_GE(n, last);
    last = n;
  }
}

}  // namespace
}  // namespace kvsim::workload
