#pragma once
// Writes a file through a temporary in the same folder and renames it into place on commit(), so
// an interrupted or failed run never leaves a half-written file over an earlier result. Without
// commit() the temporary is removed and the earlier file stays as it was.
#include <fstream>
#include <ostream>
#include <string>

namespace kvsim::io {

class AtomicFile {
 public:
  // Throws InputError naming the path when the temporary cannot be created.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  std::ostream& stream() { return out_; }
  // Flushes and renames the temporary over the path; throws InputError when that fails.
  void commit();

 private:
  std::string path_;
  std::string tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace kvsim::io
