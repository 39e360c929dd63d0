#pragma once
// An estimate of how many tokens a Llama-3 tokenizer (tiktoken-style BPE, 128K vocabulary)
// makes of a text, for inputs that hold text (vLLM conversation files) when no tokenizer is
// at hand. Method (docs/workloads.md, "Token counts"):
//   1. Pre-tokenize exactly as Llama 3 does, with its split pattern
//        (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//        ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//      (source: Meta's llama3 tokenizer.py, pat_str). BPE never merges across these pieces,
//      so the token count is the sum over pieces.
//   2. Estimate each piece: contractions, digit groups (<= 3 digits), whitespace and newline
//      runs are one token; a word of L letters costs
//        lower case after a space:   1    + 0.09 * max(0, L - 8)
//        lower case otherwise:       1.05 + 0.13 * max(0, L - 5)
//        Capitalised:                1 (1.1 after punctuation) + 0.13 * max(0, L - 5)
//        UPPER CASE:                 1    + 0.17 * max(0, L - 2)
//        mIxEd case:                 1.3  + 0.15 * max(0, L - 5)
//      plus 0.15 per non-ASCII letter and 0.65 per CJK/kana/Hangul character; a punctuation
//      run with R runs of equal characters and E repeats costs max(1, R/2) + 0.06 * E, plus
//      0.5 per non-ASCII symbol (emoji, typographic quotes).
//   3. Sum, round to the nearest integer.
// The coefficients were fitted by least squares to per-piece counts of the real Llama-3
// tokenizer (llama3-tokenizer-js 1.2.0, Meta's vocabulary) over English licence texts, the
// Python reference documentation and Python source. Measured error (docs/workloads.md): whole
// documents of English prose or Python code +0.9% to +1.9%; chunks of ~400 tokens, median 1.5-2.6%,
// 90th percentile 3.6-5.6%; identifier-heavy text (Vim help) -5%; Chinese, Japanese and Korean
// within 15%; French and German prose is under-counted by 20-35% (the vocabulary favours English).
#include <cstdint>
#include <string_view>

namespace kvsim::workload {

// Estimated Llama-3 token count of a UTF-8 text (no special tokens added). Invalid UTF-8
// bytes count as symbols. Deterministic and locale-independent.
std::int64_t estimate_tokens(std::string_view text);

}  // namespace kvsim::workload
