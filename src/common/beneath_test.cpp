#include "common/beneath.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>

namespace hearth {
namespace {

namespace fs = std::filesystem;

class NamesInFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hearth-beneath-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
    std::ofstream(dir_ / "a.txt") << "a";
    fs::create_symlink("a.txt", dir_ / "link");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(NamesInFolder, ListsEveryEntryButDotAndDotDot) {
  Fd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir);
  auto names = names_in_folder(dir.get());
  ASSERT_TRUE(names.has_value());
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"a.txt", "link", "sub"}));
  // A second listing through the same descriptor sees the same names (its own offset).
  auto again = names_in_folder(dir.get());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->size(), 3U);
  // The descriptor passed in stays open and usable.
  EXPECT_NE(::fcntl(dir.get(), F_GETFD), -1);
}

TEST_F(NamesInFolder, AFileOrAClosedDescriptorIsAnErrorWithErrno) {
  Fd file(::open((dir_ / "a.txt").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(file);
  errno = 0;
  EXPECT_FALSE(names_in_folder(file.get()).has_value());
  EXPECT_EQ(errno, ENOTDIR);
  errno = 0;
  EXPECT_FALSE(names_in_folder(-1).has_value());
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
}  // namespace hearth
