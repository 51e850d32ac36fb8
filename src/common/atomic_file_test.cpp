#include "common/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>

namespace hearth {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "hearth-atomic-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  /// Names in the folder other than `keep`.
  std::vector<std::string> others(const std::string& keep) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename() != keep) out.push_back(e.path().filename().string());
    }
    return out;
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, CreatesAndReplacesWithNoTemporaryLeft) {
  const auto file = dir_ / "data.json";
  ASSERT_TRUE(write_file_atomic(file, "first").ok());
  EXPECT_EQ(read(file), "first");
  ASSERT_TRUE(write_file_atomic(file, "second, longer").ok());
  EXPECT_EQ(read(file), "second, longer");
  ASSERT_TRUE(write_file_atomic(file, "").ok());
  EXPECT_EQ(read(file), "");
  EXPECT_TRUE(others("data.json").empty());
}

TEST_F(AtomicFileTest, KeepsTheTargetsModeOrUsesTheGivenOne) {
  const auto file = dir_ / "f";
  ASSERT_TRUE(write_file_atomic(file, "x", {.mode = 0600}).ok());
  EXPECT_EQ(fs::status(file).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ASSERT_TRUE(write_file_atomic(file, "y").ok());
  EXPECT_EQ(fs::status(file).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST_F(AtomicFileTest, ReplacesASymbolicLinkInsteadOfFollowingIt) {
  const auto outside = dir_ / "outside";
  { std::ofstream(outside) << "untouched"; }
  fs::create_symlink(outside, dir_ / "link");
  ASSERT_TRUE(write_file_atomic(dir_ / "link", "new").ok());
  EXPECT_EQ(read(outside), "untouched");
  EXPECT_FALSE(fs::is_symlink(dir_ / "link"));
  EXPECT_EQ(read(dir_ / "link"), "new");
}

TEST_F(AtomicFileTest, MissingFolderIsAnErrorNamingThePath) {
  auto r = write_file_atomic(dir_ / "no" / "f", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no/f"), std::string::npos);
  EXPECT_EQ(r.error().data.at("errno"), "ENOENT");
}

TEST_F(AtomicFileTest, LongNamesStillGetATemporaryFile) {
  const std::string name(250, 'n');
  ASSERT_TRUE(write_file_atomic(dir_ / name, "x").ok());
  EXPECT_EQ(read(dir_ / name), "x");
  EXPECT_TRUE(others(name).empty());
}

// A full disk, made real with RLIMIT_FSIZE (write(2) fails with EFBIG past the limit, as it fails
// with ENOSPC on a full file system): in a child process, so the limit does not stay on the test.
TEST_F(AtomicFileTest, AFullDiskIsAClearErrorAndTheOldContentStays) {
  const auto file = dir_ / "data.json";
  const std::string old_content(1000, 'o');
  ASSERT_TRUE(write_file_atomic(file, old_content).ok());
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {
      4096, 4096
    };
    ::setrlimit(RLIMIT_FSIZE, &limit);
    auto r = write_file_atomic(file, std::string(100000, 'n'));
    if (r.ok()) ::_exit(10);
    if (r.error().data.at("errno") != "EFBIG") ::_exit(11);
    if (r.error().message.find("keeps its old content") == std::string::npos) ::_exit(12);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(read(file), old_content);
  EXPECT_TRUE(others("data.json").empty());  // the temporary file was removed
  EXPECT_TRUE(is_disk_full_errno(ENOSPC));
  EXPECT_TRUE(is_disk_full_errno(EDQUOT));
}

}  // namespace
}  // namespace hearth
