#pragma once
// Test helpers for the host and the method groups over it.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace hearth::host::testing {

/// A service folder in a temporary directory, removed afterwards.
class TempService {
 public:
  explicit TempService(const std::string& manifest) {
    namespace fs = std::filesystem;
    dir_ = fs::temp_directory_path() /
           ("hearth-host-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(dir_ / "data");
    write("lavs.json", manifest);
  }
  ~TempService() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void write(const std::string& name, const std::string& content) const {
    namespace fs = std::filesystem;
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << content;
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
};

}  // namespace hearth::host::testing
