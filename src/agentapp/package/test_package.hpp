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

/// The package hash test vector of the format notes (docs/agent-apps.md, "Hashes"), written
/// into `dir` (named hash-vector), and its two hashes.
inline constexpr std::string_view kVectorAppMd =
    "---\nname: hash-vector\ndescription: Hash test vector.\nversion: 1.0.0\nstatus: "
    "draft\nappType: custom\n---\n\n# Hash vector\n";
inline constexpr std::string_view kVectorPackageHash =
    "sha256:60f0f2b8cdcc2a4091d6de51f889a30078a5816a92395967f237c87e86df1a67";
inline constexpr std::string_view kVectorManifestHash =
    "sha256:5a68058ac45f285bd60c6de0026222edf0e4caaa8bb341d9fc848df6e8afdb5c";

inline void write_hash_vector(const PackageDir& dir) {
  dir.write("APP.md", kVectorAppMd);
  dir.write(".hidden", "dot\n");
  dir.write("Z.txt", "upper\n");
  dir.write("a/b.txt", "B\n");
  dir.write("a-b.txt", "dash\n");
  dir.write("sub/empty.bin", "");
  dir.write("node_modules/x/i.js", "ignored\n");
}

}  // namespace hearth::agentapp::testing
