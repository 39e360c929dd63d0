#include "validation/src/sse_parser.hpp"

namespace kvsim::validation {

void SseParser::feed(std::string_view bytes) {
  for (const char ch : bytes) {
    if (ch == '\n') {
      if (last_was_cr_) {  // the LF of a CRLF split across or within chunks
        last_was_cr_ = false;
        continue;
      }
      line(line_);
      line_.clear();
    } else if (ch == '\r') {
      last_was_cr_ = true;
      line(line_);
      line_.clear();
    } else {
      last_was_cr_ = false;
      line_.push_back(ch);
    }
  }
}

void SseParser::line(std::string_view l) {
  if (l.empty()) {
    dispatch();
    return;
  }
  if (l.front() == ':') return;  // comment (e.g. keep-alive ": ping")
  std::string_view field = l;
  std::string_view value;
  if (const auto colon = l.find(':'); colon != std::string_view::npos) {
    field = l.substr(0, colon);
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    id_.assign(value);
  }
  // "retry" and unknown fields are ignored.
}

void SseParser::dispatch() {
  if (!has_data_) {
    event_.clear();
    return;
  }
  SseEvent e{std::move(event_), std::move(data_), id_};
  event_.clear();
  data_.clear();
  has_data_ = false;
  ++events_;
  on_event_(e);
}

}  // namespace kvsim::validation
