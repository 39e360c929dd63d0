#include "sim/io/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/core/error.hpp"

namespace kvsim::io {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw InputError("", 0, 0, "cannot write '" + path_ + "': " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
}

void AtomicFile::commit() {
  out_.flush();
  out_.close();
  if (!out_) throw InputError("", 0, 0, "failed writing '" + path_ + "'");
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) throw InputError("", 0, 0, "cannot move '" + tmp_ + "' to '" + path_ + "': " + ec.message());
  committed_ = true;
}

}  // namespace kvsim::io
