#pragma once
// The text of a JSON library exception without its "[json.exception.out_of_range.406] " tag,
// for messages such as "invalid JSON: number overflow parsing '1e400'".
#include <exception>
#include <string>

namespace kvsim {

inline std::string json_error_text(const std::exception& e) {
  std::string msg = e.what();
  if (msg.rfind("[json.exception.", 0) == 0) {
    if (const auto end = msg.find("] "); end != std::string::npos) msg = msg.substr(end + 2);
  }
  return msg;
}

}  // namespace kvsim
