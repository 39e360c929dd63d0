#include "sim/core/input_file.hpp"

#include <zlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <streambuf>
#include <system_error>

#include "sim/core/error.hpp"

namespace kvsim {
namespace {

bool starts_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

bool has_gzip_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(2, '\0');
  in.read(head.data(), 2);
  head.resize(static_cast<std::size_t>(in.gcount()));
  return starts_gzip(head);
}

// Decompresses gzip bytes held in memory (every member of a multi-member stream, as gzip -d does).
std::string gunzip(const std::string& in, const std::string& name) {
  std::string out;
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
    throw InputError(name, 0, 0, "cannot start gzip decompression");
  // zlib's interface takes non-const pointers; it does not write through next_in.
  z.next_in = reinterpret_cast<Bytef*>(
      const_cast<char*>(in.data()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  z.avail_in = static_cast<uInt>(in.size());
  std::array<char, 1 << 16> buffer{};
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buffer.data());
    z.avail_out = static_cast<uInt>(buffer.size());
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer.data(), buffer.size() - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another member follows
      continue;
    }
    if (rc != Z_OK) break;
    if (z.avail_in == 0 && z.avail_out != 0) {
      rc = Z_BUF_ERROR;  // input ended inside a member
      break;
    }
  }
  const std::string message = z.msg != nullptr ? z.msg : "unexpected end of file";
  inflateEnd(&z);
  if (rc != Z_STREAM_END) throw InputError(name, 0, 0, "not a valid gzip file: " + message);
  return out;
}

// Standard input, read once (and decompressed when it is gzip).
const std::string& stdin_bytes() {
  static std::once_flag once;
  static std::string bytes;
  std::call_once(once, [] {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    bytes = ss.str();
    if (starts_gzip(bytes)) bytes = gunzip(bytes, "<stdin>");
  });
  return bytes;
}


// zlib's gzerror text without the path it starts with (the diagnostic names the file already).
std::string gz_message(gzFile file, const std::string& path) {
  int code = 0;
  const char* message = gzerror(file, &code);
  std::string text = message != nullptr && *message != '\0' ? message : "read error";
  if (text.rfind(path + ": ", 0) == 0) text.erase(0, path.size() + 2);
  return "not a valid gzip file: " + text;
}

// A read-only stream buffer over zlib's gzread: decompresses as the reader asks for bytes.
class GzipBuf : public std::streambuf {
 public:
  GzipBuf(gzFile file, std::string path) : file_(file), path_(std::move(path)) {}
  ~GzipBuf() override { gzclose(file_); }
  GzipBuf(const GzipBuf&) = delete;
  GzipBuf& operator=(const GzipBuf&) = delete;

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    if (n < 0) throw InputError(path_, 0, 0, gz_message(file_, path_));
    if (n == 0) {
      // zlib reports a stream cut short only as an error state after the last read.
      int code = 0;
      gzerror(file_, &code);
      if (code != Z_OK && code != Z_STREAM_END)
        throw InputError(path_, 0, 0, gz_message(file_, path_));
      return traits_type::eof();
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile file_;
  std::string path_;
  std::array<char, 1 << 16> buffer_{};
};

class GzipStream : public std::istream {
 public:
  GzipStream(gzFile file, const std::string& path) : std::istream(nullptr), buf_(file, path) {
    rdbuf(&buf_);
    // A corrupt stream's InputError must reach the reader, not become a failbit.
    exceptions(std::ios::badbit);
  }

 private:
  GzipBuf buf_;
};

}  // namespace

bool is_stdin_path(const std::string& path) { return path == kStdinPath; }

std::string input_display_name(const std::string& path) {
  return is_stdin_path(path) ? "<stdin>" : path;
}

bool input_exists(const std::string& path) {
  std::error_code ec;
  return is_stdin_path(path) || std::filesystem::is_regular_file(path, ec);
}

std::unique_ptr<std::istream> open_input(const std::string& path, const std::string& what) {
  if (is_stdin_path(path)) return std::make_unique<std::istringstream>(stdin_bytes());
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, 0, 0, "cannot open " + what + ": a folder");
  if (has_gzip_magic(path)) {
    gzFile file = gzopen(path.c_str(), "rb");
    if (file == nullptr) throw InputError(path, 0, 0, "cannot open " + what);
    gzbuffer(file, 1 << 17);
    return std::make_unique<GzipStream>(file, path);
  }
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) throw InputError(path, 0, 0, "cannot open " + what);
  return in;
}

std::string read_input(const std::string& path, const std::string& what) {
  if (is_stdin_path(path)) return stdin_bytes();
  const auto in = open_input(path, what);
  // Through the buffer itself: a corrupt gzip stream's InputError propagates (operator<< on a
  // stream buffer would swallow it into a failbit).
  return {std::istreambuf_iterator<char>(*in), std::istreambuf_iterator<char>()};
}

}  // namespace kvsim
