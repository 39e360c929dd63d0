#pragma once
// Builds the Driver a WorkloadSpec describes:
//   kMultiTurn: conversations from the inline generation config or from the vLLM input file
//               (a generation config is generated with RngFactory(seed).stream("generation")),
//               driven by MultiTurnDriver; a raw ShareGPT input_file is converted first as
//               vLLM's convert_sharegpt_to_openai.py does, with spec.sharegpt's filters;
//   kTrace:     a trace of any format read_trace() reads, replayed by TraceDriver.
// Relative file paths resolve against `base_dir` (the scenario file's folder). Bad input
// throws InputError.
#include <cstdint>
#include <memory>
#include <string>

#include "sim/workload/driver.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

std::unique_ptr<Driver> make_driver(const WorkloadSpec& spec, const std::string& base_dir,
                                    std::uint64_t seed);

// `path` if absolute or `base_dir` empty, else base_dir/path.
std::string resolve_path(const std::string& path, const std::string& base_dir);

}  // namespace kvsim::workload
