#include "daemon/instance.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace hearth::daemon {
namespace {
namespace fs = std::filesystem;

class InstanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hearth-instance-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(InstanceTest, OneHolderAtATimeAndTheOtherIsToldWho) {
  EXPECT_FALSE(find_instance(dir_).running);
  {
    auto first = InstanceLock::acquire(dir_);
    ASSERT_TRUE(first.ok()) << first.error().message;
    // flock(2) locks belong to the open file: a second acquire is refused even in this process.
    auto second = InstanceLock::acquire(dir_);
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().message.find("pid " + std::to_string(::getpid())), std::string::npos)
        << second.error().message;
    EXPECT_EQ(second.error().data.as_object().at("pid").as_int64(), ::getpid());
    const auto seen = find_instance(dir_);
    EXPECT_TRUE(seen.running);
    EXPECT_EQ(seen.pid, ::getpid());
    EXPECT_FALSE(seen.document.has_value());  // no daemon.json yet: starting
    std::ofstream(dir_ / "daemon.json") << R"({"url":"http://127.0.0.1:1234","port":1234})";
    EXPECT_TRUE(find_instance(dir_).document.has_value());
    auto third = InstanceLock::acquire(dir_);
    ASSERT_FALSE(third.ok());
    EXPECT_NE(third.error().message.find("http://127.0.0.1:1234"), std::string::npos);
  }
  // Released with the object (and by the kernel, however the process ends): the daemon.json a
  // killed daemon left says nothing.
  EXPECT_FALSE(find_instance(dir_).running);
  EXPECT_TRUE(InstanceLock::acquire(dir_).ok());
}

TEST_F(InstanceTest, TheTokenIsKeptUnlessRotatedOrNotOurs) {
  const fs::path file = dir_ / "token";
  auto first = load_or_create_token(file, false);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->size(), 64u);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(load_or_create_token(file, false).value(), *first);
  const auto rotated = load_or_create_token(file, true).value();
  EXPECT_NE(rotated, *first);
  EXPECT_EQ(load_or_create_token(file, false).value(), rotated);
  // A file others may read, or one that is not a token, is replaced.
  ::chmod(file.c_str(), 0644);
  const auto after_chmod = load_or_create_token(file, false).value();
  EXPECT_NE(after_chmod, rotated);
  std::ofstream(file, std::ios::trunc) << "not a token\n";
  ::chmod(file.c_str(), 0600);
  const auto after_garbage = load_or_create_token(file, false).value();
  EXPECT_EQ(after_garbage.size(), 64u);
  EXPECT_NE(after_garbage, after_chmod);
  // A symbolic link is not followed to a token elsewhere.
  fs::remove(file);
  std::ofstream(dir_ / "elsewhere") << after_garbage << "\n";
  ::chmod((dir_ / "elsewhere").c_str(), 0600);
  fs::create_symlink(dir_ / "elsewhere", file);
  EXPECT_NE(load_or_create_token(file, false).value(), after_garbage);
}

}  // namespace
}  // namespace hearth::daemon
