#include "sim/workload/json_locator.hpp"

#include <algorithm>

namespace kvsim::workload {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : t_(text) {}

  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t p) { pos_ = p; }
  bool at_end() const { return pos_ >= t_.size(); }
  char peek() const { return at_end() ? '\0' : t_[pos_]; }
  void advance() {
    if (!at_end()) ++pos_;
  }

  void skip_ws() {
    while (!at_end() &&
           (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r'))
      ++pos_;
  }

  // Reads a string token and returns its decoded value (escapes resolved; \u to UTF-8).
  std::string read_string() {
    std::string out;
    if (peek() != '"') return out;
    advance();
    while (!at_end() && t_[pos_] != '"') {
      char c = t_[pos_++];
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (at_end()) break;
      c = t_[pos_++];
      switch (c) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'u': {
          unsigned cp = 0;
          for (int k = 0; k < 4 && !at_end(); ++k) {
            const char h = t_[pos_++];
            cp <<= 4;
            if (h >= '0' && h <= '9')
              cp |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f')
              cp |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
              cp |= static_cast<unsigned>(h - 'A' + 10);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          out.push_back(c);
          break;
      }
    }
    advance();  // closing quote
    return out;
  }

  void skip_value() {
    skip_ws();
    const char c = peek();
    if (c == '"') {
      read_string();
    } else if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      advance();
      skip_ws();
      while (!at_end() && peek() != close) {
        if (c == '{') {
          read_string();
          skip_ws();
          advance();  // ':'
        }
        skip_value();
        skip_ws();
        if (peek() == ',') advance();
        skip_ws();
      }
      advance();
    } else {
      while (!at_end()) {
        const char d = t_[pos_];
        if (d == ',' || d == '}' || d == ']' || d == ' ' || d == '\t' || d == '\n' || d == '\r')
          break;
        ++pos_;
      }
    }
  }

 private:
  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  std::string_view t_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string json_path_string(const JsonPath& path) {
  std::string out;
  for (const auto& item : path) {
    if (item.is_index) {
      out.push_back('[');
      out.append(std::to_string(item.index));
      out.push_back(']');
    } else {
      if (!out.empty()) out += '.';
      out += item.key;
    }
  }
  return out;
}

std::size_t locate_json_value(std::string_view text, const JsonPath& path) {
  Scanner s(text);
  s.skip_ws();
  for (const auto& item : path) {
    s.skip_ws();
    const std::size_t container = s.pos();
    if (item.is_index) {
      if (s.peek() != '[') return container;
      s.advance();
      s.skip_ws();
      std::size_t i = 0;
      bool found = false;
      while (!s.at_end() && s.peek() != ']') {
        if (i == item.index) {
          found = true;
          break;
        }
        s.skip_value();
        s.skip_ws();
        if (s.peek() == ',') s.advance();
        s.skip_ws();
        ++i;
      }
      if (!found) return container;
    } else {
      if (s.peek() != '{') return container;
      s.advance();
      s.skip_ws();
      std::size_t found = std::string_view::npos;
      while (!s.at_end() && s.peek() != '}') {
        const std::string key = s.read_string();
        s.skip_ws();
        s.advance();  // ':'
        s.skip_ws();
        if (key == item.key) found = s.pos();
        s.skip_value();
        s.skip_ws();
        if (s.peek() == ',') s.advance();
        s.skip_ws();
      }
      if (found == std::string_view::npos) return container;
      s.set_pos(found);
    }
  }
  s.skip_ws();
  return std::min(s.pos(), text.size());
}

TextPosition text_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  TextPosition p;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      line_start = i + 1;
    }
  }
  p.column = static_cast<int>(offset - line_start) + 1;
  return p;
}

}  // namespace kvsim::workload
