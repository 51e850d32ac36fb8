#pragma once
// Test helper: a package folder written by a test under the test temp folder, removed after.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace hearth::agentapp::testing {

class PackageDir {
 public:
  /// A folder named `name` (the package's basename matters to the reference commands).
  explicit PackageDir(const std::string& name) {
    static std::atomic<int> counter{0};
    parent_ = std::filesystem::path(::testing::TempDir()) /
              ("hearth_agentapp_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(parent_);
    path_ = parent_ / name;
    std::filesystem::create_directories(path_);
  }
  ~PackageDir() {
    std::error_code ec;
    std::filesystem::remove_all(parent_, ec);
  }
  PackageDir(const PackageDir&) = delete;
  PackageDir& operator=(const PackageDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

  void write(const std::string& relative, std::string_view bytes) const {
    const auto p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }

 private:
  std::filesystem::path parent_;
  std::filesystem::path path_;
};

}  // namespace hearth::agentapp::testing
