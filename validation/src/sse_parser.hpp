#pragma once
// Server-Sent Events (WHATWG HTML "9.2 Server-sent events", the event stream format) as an
// incremental parser: bytes arrive in arbitrary chunks; lines end in CRLF, LF or CR (a CR at the
// end of one chunk and an LF at the start of the next are one line end); `data:` lines of one
// event are joined with "\n"; lines starting with ':' are comments; one space after the colon is
// dropped; an empty line dispatches the event (an event without data is not dispatched); an
// unterminated event at the end of the stream is discarded, as the specification says.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace kvsim::validation {

struct SseEvent {
  std::string event;  // the `event:` field, empty for the default "message"
  std::string data;   // `data:` lines joined with "\n"
  std::string id;
};

class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;
  explicit SseParser(Handler on_event) : on_event_(std::move(on_event)) {}

  // Consumes a chunk of the stream; calls the handler for each event it completes.
  void feed(std::string_view bytes);
  // Bytes received so far that belong to an event not yet dispatched.
  bool has_pending() const { return !line_.empty() || !data_.empty() || has_data_; }
  std::size_t events() const { return events_; }

 private:
  void line(std::string_view l);
  void dispatch();

  Handler on_event_;
  std::string line_;
  bool last_was_cr_ = false;
  std::string data_;
  bool has_data_ = false;
  std::string event_;
  std::string id_;
  std::size_t events_ = 0;
};

}  // namespace kvsim::validation
