#include "common/installed.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hearth {
namespace {

namespace fs = std::filesystem;

/// A made-up tree per test: an installed prefix (PREFIX/bin, PREFIX/libexec/hearth,
/// PREFIX/share/hearth/web) or a build tree (bin/ with the helpers beside the binary).
class InstalledLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("hearth-installed-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void touch(const fs::path& file) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "x";
  }

  fs::path root_;
};

TEST_F(InstalledLayout, HelpersOfAnInstalledBinaryAreInLibexec) {
  touch(root_ / "usr/bin/hearth");
  touch(root_ / "usr/libexec/hearth/hearth-launch");
  touch(root_ / "usr/libexec/hearth/hearth-js-worker");
  const fs::path exe = root_ / "usr/bin/hearth";
  EXPECT_EQ(installed::helper("hearth-launch", exe), root_ / "usr/libexec/hearth/hearth-launch");
  EXPECT_EQ(installed::helper("hearth-js-worker", exe),
            root_ / "usr/libexec/hearth/hearth-js-worker");
}

TEST_F(InstalledLayout, HelpersOfABuildTreeBinaryAreBesideIt) {
  touch(root_ / "build/bin/hearth");
  touch(root_ / "build/bin/hearth-launch");
  touch(root_ / "build/bin/hearth-js-worker");
  const fs::path exe = root_ / "build/bin/hearth";
  EXPECT_EQ(installed::helper("hearth-launch", exe), root_ / "build/bin/hearth-launch");
  EXPECT_EQ(installed::helper("hearth-js-worker", exe), root_ / "build/bin/hearth-js-worker");
}

TEST_F(InstalledLayout, AMissingHelperIsLookedForBesideTheBinary) {
  touch(root_ / "opt/bin/hearth");
  // Only one helper installed: the other is named where a build tree would hold it.
  touch(root_ / "opt/libexec/hearth/hearth-launch");
  const fs::path exe = root_ / "opt/bin/hearth";
  EXPECT_EQ(installed::helper("hearth-launch", exe), root_ / "opt/libexec/hearth/hearth-launch");
  EXPECT_EQ(installed::helper("hearth-js-worker", exe), root_ / "opt/bin/hearth-js-worker");
  // A folder of that name is not a helper.
  fs::create_directories(root_ / "opt/libexec/hearth/hearth-js-worker");
  EXPECT_EQ(installed::helper("hearth-js-worker", exe), root_ / "opt/bin/hearth-js-worker");
}

TEST_F(InstalledLayout, NoExecutablePathMeansTheBareName) {
  EXPECT_EQ(installed::helper("hearth-launch", fs::path()), fs::path("hearth-launch"));
  EXPECT_EQ(installed::web_dir(fs::path(), "/src/web"), fs::path("/src/web"));
}

TEST_F(InstalledLayout, TheInstalledPageIsUsedWhenItHoldsIndexHtml) {
  touch(root_ / "usr/local/bin/hearth");
  const fs::path exe = root_ / "usr/local/bin/hearth";
  const fs::path source = root_ / "src/web";
  // Only the folder, no page: the source's web/ is used.
  fs::create_directories(root_ / "usr/local/share/hearth/web");
  EXPECT_EQ(installed::web_dir(exe, source), source);
  touch(root_ / "usr/local/share/hearth/web/index.html");
  EXPECT_EQ(installed::web_dir(exe, source), root_ / "usr/local/share/hearth/web");
}

TEST_F(InstalledLayout, ABuildTreeBinaryServesTheSourcePage) {
  touch(root_ / "build/release/bin/hearth");
  touch(root_ / "src/web/index.html");
  EXPECT_EQ(installed::web_dir(root_ / "build/release/bin/hearth", root_ / "src/web"),
            root_ / "src/web");
}

TEST(InstalledPaths, TheConfiguredLayoutIsRelativeToTheBinary) {
  EXPECT_EQ(installed::libexec_from_bin(), "../libexec/hearth");
  EXPECT_EQ(installed::web_from_bin(), "../share/hearth/web");
  EXPECT_FALSE(installed::self_exe().empty());
  EXPECT_TRUE(fs::is_regular_file(installed::self_exe()));
}

}  // namespace
}  // namespace hearth
