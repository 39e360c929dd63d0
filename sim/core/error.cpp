#include "sim/core/error.hpp"

#include <sstream>

namespace kvsim {
namespace {
std::string join(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}
}  // namespace

std::string Diagnostic::to_string() const {
  std::ostringstream os;
  if (!file.empty()) {
    os << file;
    if (line > 0) {
      os << ':' << line;
      if (column > 0) os << ':' << column;
    }
    os << ": ";
  }
  os << "error: ";
  if (!path.empty()) os << path << ": ";
  os << message;
  return os.str();
}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(Diagnostic diagnostic) : InputError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

InputError::InputError(std::string file, int line, int column, std::string message)
    : InputError(Diagnostic{std::move(file), line, column, "", std::move(message)}) {}

void assertion_failed(const char* expr, const char* file, int line, const std::string& msg) {
  std::ostringstream os;
  os << "internal invariant violated: " << expr << " at " << file << ':' << line << ": " << msg;
  throw InternalError(os.str());
}

}  // namespace kvsim
