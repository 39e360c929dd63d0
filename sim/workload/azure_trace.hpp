#pragma once
// Reader of the Azure LLM inference traces (github.com/Azure/AzurePublicDataset, CC-BY-4.0):
// 2023 (AzureLLMInferenceTrace_{code,conv}.csv; Patel et al., "Splitwise: Efficient generative
// LLM inference using phase splitting", ISCA 2024) and 2024 (the week-long
// AzureLLMInferenceTrace_{code,conv}_1week.csv; Stojkovic et al., "DynamoLLM", arXiv 2408.00741).
// CSV with the header TIMESTAMP,ContextTokens,GeneratedTokens:
//   2023-11-16 18:15:46.6805900,374,44
//   2024-05-10 00:00:00.009930+00:00,2162,5
// TIMESTAMP = invocation time, `YYYY-MM-DD HH:MM:SS[.fraction]` with an optional `Z` or `+HH:MM`
// / `-HH:MM` offset (UTC when none; a `T` may separate date and time), kept to the nanosecond;
// the trace is re-based so that its earliest request arrives at 0 ms. ContextTokens >= 1 prompt
// tokens, GeneratedTokens >= 0 output tokens (replayed as at least 1). No prefix or session
// information: every prompt is unique (hash_block_tokens = 0). Extra columns are ignored.
#include <cstdint>
#include <istream>
#include <optional>
#include <string>

#include "sim/workload/trace.hpp"

namespace kvsim::workload {

Trace parse_azure(std::istream& in, const std::string& display_name);

// Nanoseconds since 1970-01-01T00:00:00Z of an Azure TIMESTAMP; nullopt when malformed.
std::optional<std::int64_t> parse_azure_timestamp(const std::string& text);

}  // namespace kvsim::workload
