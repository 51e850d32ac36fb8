#include "agentapp/store/staging.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "agentapp/package/test_package.hpp"
#include "agentapp/store/test_archive.hpp"

namespace hearth::agentapp {
namespace {

namespace fs = std::filesystem;
using testing::PackageDir;
using testing::TarGz;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(StageFolder, CopiesFilesAndFoldersButNotGitOrNodeModules) {
  PackageDir src("app");
  src.write("APP.md", "---\nname: app\n---\n");
  src.write("dist/ui/index.html", "<p>hi</p>");
  src.write(".git/HEAD", "ref");
  src.write("node_modules/x/index.js", "x");
  PackageDir out("out");
  const auto dest = out.path() / "staged";
  const auto root = stage_folder(src.path(), dest);
  ASSERT_TRUE(root.ok()) << root.error().message;
  EXPECT_EQ(read(dest / "dist/ui/index.html"), "<p>hi</p>");
  EXPECT_FALSE(fs::exists(dest / ".git"));
  EXPECT_FALSE(fs::exists(dest / "node_modules"));
}

TEST(StageFolder, CopiesALinkToAFileInsideAsThatFileAndRefusesOthers) {
  PackageDir src("app");
  src.write("APP.md", "x");
  src.write("real.txt", "real");
  fs::create_symlink("real.txt", src.path() / "alias.txt");
  PackageDir out("out");
  ASSERT_TRUE(stage_folder(src.path(), out.path() / "a").ok());
  EXPECT_FALSE(fs::is_symlink(out.path() / "a/alias.txt"));
  EXPECT_EQ(read(out.path() / "a/alias.txt"), "real");

  PackageDir secret("secret");
  secret.write("key", "s3cret");
  fs::create_symlink(secret.path() / "key", src.path() / "leak");
  auto r = stage_folder(src.path(), out.path() / "b");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("leak is a link that leaves the package"), std::string::npos);
  fs::remove(src.path() / "leak");

  fs::create_symlink("..", src.path() / "up");
  EXPECT_FALSE(stage_folder(src.path(), out.path() / "c").ok());
  fs::remove(src.path() / "up");
  fs::create_symlink("missing", src.path() / "dangling");
  EXPECT_FALSE(stage_folder(src.path(), out.path() / "d").ok());
}

TEST(StageFolder, RefusesFifos) {
  PackageDir src("app");
  src.write("APP.md", "x");
  ASSERT_EQ(::mkfifo((src.str() + "/pipe").c_str(), 0600), 0);
  PackageDir out("out");
  auto r = stage_folder(src.path(), out.path() / "a");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("device, FIFO or socket"), std::string::npos);
}

TEST(StageFolder, StopsAtTheLimits) {
  PackageDir src("app");
  for (int i = 0; i < 5; ++i) src.write("f" + std::to_string(i), std::string(100, 'x'));
  PackageDir out("out");
  StageLimits files;
  files.max_files = 3;
  EXPECT_FALSE(stage_folder(src.path(), out.path() / "a", files).ok());
  StageLimits total;
  total.max_total_bytes = 250;
  EXPECT_FALSE(stage_folder(src.path(), out.path() / "b", total).ok());
  StageLimits one;
  one.max_file_bytes = 50;
  EXPECT_FALSE(stage_folder(src.path(), out.path() / "c", one).ok());
  EXPECT_TRUE(stage_folder(src.path(), out.path() / "d").ok());
}

TEST(StageArchive, ExtractsAndFindsTheOneTopFolder) {
  PackageDir work("work");
  {
    TarGz tar(work.path() / "app.tar.gz");
    tar.folder("app/").file("app/APP.md", "---\nname: app\n---\n").file("app/dist/a.js", "js");
  }
  const auto root = stage_archive(work.path() / "app.tar.gz", work.path() / "s");
  ASSERT_TRUE(root.ok()) << root.error().message;
  EXPECT_EQ(root.value(), work.path() / "s" / "app");
  EXPECT_EQ(read(root.value() / "dist/a.js"), "js");
}

TEST(StageArchive, RefusesNamesLinksAndDevicesThatCouldEscape) {
  PackageDir work("work");
  const auto try_one = [&work](const std::string& label, const std::function<void(TarGz&)>& add) {
    const auto file = work.path() / (label + ".tar.gz");
    {
      TarGz tar(file);
      tar.file("APP.md", "x");
      add(tar);
    }
    return stage_archive(file, work.path() / ("s-" + label));
  };
  auto r = try_one("dotdot", [](TarGz& t) { t.file("../evil", "pwned"); });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("leaves the package"), std::string::npos);
  EXPECT_FALSE(fs::exists(work.path() / "evil"));
  r = try_one("deep-dotdot", [](TarGz& t) { t.file("a/b/../../../evil2", "pwned"); });
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(fs::exists(work.path() / "evil2"));
  r = try_one("absolute", [&work](TarGz& t) { t.file((work.path() / "abs").string(), "pwned"); });
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(fs::exists(work.path() / "abs"));
  r = try_one("symlink", [](TarGz& t) { t.symlink("link", "/etc/passwd"); });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("symbolic link"), std::string::npos);
  // A link followed by a file written through it: refused at the link.
  r = try_one("link-then-file", [](TarGz& t) { t.symlink("d", "/tmp").file("d/x", "pwned"); });
  EXPECT_FALSE(r.ok());
  r = try_one("hardlink", [](TarGz& t) { t.hardlink("h", "/etc/passwd"); });
  EXPECT_FALSE(r.ok());
  r = try_one("device", [](TarGz& t) { t.device("dev"); });
  EXPECT_FALSE(r.ok());
}

TEST(StageArchive, StopsADecompressionBomb) {
  PackageDir work("work");
  {
    TarGz tar(work.path() / "bomb.tar.gz");
    tar.file("APP.md", "x").file("zeros", std::string(8 << 20, '\0'));
  }
  EXPECT_LT(fs::file_size(work.path() / "bomb.tar.gz"), 64u << 10);
  StageLimits limits;
  limits.max_total_bytes = 1 << 20;
  auto r = stage_archive(work.path() / "bomb.tar.gz", work.path() / "s", limits);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("larger than"), std::string::npos);
}

TEST(StageArchive, RefusesSomethingThatIsNotAnArchive) {
  PackageDir work("work");
  work.write("not.tar.gz", "plain text");
  EXPECT_FALSE(stage_archive(work.path() / "not.tar.gz", work.path() / "s").ok());
}

}  // namespace
}  // namespace hearth::agentapp
