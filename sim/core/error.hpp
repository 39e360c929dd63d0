#pragma once
// Errors. InputError carries diagnostics about bad user input (YAML, traces, CLI values) and
// maps to exit code 2. KVSIM_ASSERT checks internal invariants and stays on in release builds;
// it throws InternalError, which the simulation decorates with the simulated time and event.
#include <stdexcept>
#include <string>
#include <vector>

namespace kvsim {

// One compiler-style diagnostic: file:line:col: error: path: message
struct Diagnostic {
  std::string file;  // may be empty (e.g. a --set override or a CLI value)
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
  std::string path;  // dotted path in the scenario tree, e.g. engine.max_num_seqs
  std::string message;

  std::string to_string() const;
};

class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  explicit InputError(Diagnostic diagnostic);
  // A plain message with an optional location.
  InputError(std::string file, int line, int column, std::string message);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace kvsim

#define KVSIM_ASSERT(cond, msg)                                          \
  do {                                                                   \
    if (!(cond)) ::kvsim::assertion_failed(#cond, __FILE__, __LINE__, (msg)); \
  } while (false)
