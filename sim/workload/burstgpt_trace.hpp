#pragma once
// Reader of the BurstGPT traces (github.com/HPMLL/BurstGPT, data/BurstGPT_*.csv, CC-BY-4.0;
// Wang et al., "BurstGPT: A Real-world Workload Dataset to Optimize LLM Serving Systems",
// arXiv 2401.17644): Azure OpenAI GPT-3.5 / GPT-4 requests, CSV with the header
//   Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
//   5,ChatGPT,472,18,490,Conversation log
// Timestamp = submission time in seconds from 0:00:00 of the first day (kept as is, not
// re-based: use the window's start to skip ahead); Request / Response tokens = prompt / answer
// lengths. Columns are found by name; Model, Total tokens, Log Type and any newer column are
// not used. Rows whose Response tokens is 0 are the requests that failed (the repository's
// README; BurstGPT_without_fails_*.csv drops them): they are skipped and counted in
// Trace::skipped_rows, as are rows with 0 request tokens (nothing to prefill). No prefix or
// session information: every prompt is unique.
#include <istream>
#include <string>

#include "sim/workload/trace.hpp"

namespace kvsim::workload {

Trace parse_burstgpt(std::istream& in, const std::string& display_name);

}  // namespace kvsim::workload
