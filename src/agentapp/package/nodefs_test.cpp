#include "agentapp/package/nodefs.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "agentapp/package/test_package.hpp"

namespace hearth::agentapp::nodefs {
namespace {

using testing::PackageDir;

using testing::kVectorManifestHash;
using testing::kVectorPackageHash;
const auto& write_vector = testing::write_hash_vector;

TEST(PackageHash, MatchesTheFormatsTestVector) {
  PackageDir dir("hash-vector");
  write_vector(dir);
  EXPECT_EQ(manifest_hash(dir.str() + "/APP.md").value(), kVectorManifestHash);
  // Sorting whole paths instead of each folder's names would put a-b.txt before a/b.txt
  // (which gives sha256:e6fd3a8a...).
  EXPECT_EQ(package_hash(dir.str()).value(), kVectorPackageHash);
}

TEST(PackageHash, SkipsGitAndNodeModulesAtAnyDepthAndNothingElse) {
  PackageDir dir("hash-vector");
  write_vector(dir);
  const auto before = package_hash(dir.str()).value();
  dir.write(".git/HEAD", "ref\n");
  dir.write("a/node_modules/y.js", "x\n");
  dir.write("a/.git", "gitdir: elsewhere\n");
  EXPECT_EQ(package_hash(dir.str()).value(), before);
  dir.write("sub/empty-dir/.keep", "");
  EXPECT_NE(package_hash(dir.str()).value(), before);
}

TEST(PackageHash, FollowsLinksAsTheirTargets) {
  PackageDir dir("hash-vector");
  write_vector(dir);
  PackageDir copy("hash-vector");
  write_vector(copy);
  std::filesystem::remove_all(copy.path() / "a");
  std::filesystem::create_directory_symlink(dir.path() / "a", copy.path() / "a");
  EXPECT_EQ(package_hash(copy.str()).value(), package_hash(dir.str()).value());
}

TEST(PackageHash, ABrokenLinkFailsAsNodesStatDoes) {
  PackageDir dir("p");
  dir.write("APP.md", "x");
  std::filesystem::create_symlink(dir.path() / "nowhere", dir.path() / "dangling");
  const auto r = package_hash(dir.str());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "ENOENT: no such file or directory, stat '" + dir.str() + "/dangling'");
}

TEST(PackageHash, ALinkLoopEndsInAnError) {
  PackageDir dir("p");
  dir.write("APP.md", "x");
  std::filesystem::create_directory_symlink(dir.path(), dir.path() / "loop");
  const auto r = package_hash(dir.str());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("ELOOP"), std::string::npos) << r.error().message;
}

TEST(PackageHash, RefusesAFifoInsteadOfWaitingOnIt) {
  PackageDir dir("p");
  dir.write("APP.md", "x");
  ASSERT_EQ(::mkfifo((dir.str() + "/pipe").c_str(), 0600), 0);
  const auto r = package_hash(dir.str());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos);
}

TEST(NodePath, JoinsResolvesAndNamesLikeNode) {
  EXPECT_EQ(join("/a/b", "../c/./d"), "/a/c/d");
  EXPECT_EQ(join("/a", "/etc/passwd"), "/a/etc/passwd");
  EXPECT_EQ(join("/a", "x/"), "/a/x/");
  EXPECT_EQ(join("/a", "../../.."), "/");
  EXPECT_EQ(resolve("/x/y/../z/"), "/x/z");
  EXPECT_EQ(basename("/x/pkg"), "pkg");
  EXPECT_EQ(basename("/"), "");
}

TEST(NodeFs, ReadsFolderNamesInByteOrder) {
  PackageDir dir("p");
  dir.write("b", "");
  dir.write("B", "");
  dir.write("a", "");
  EXPECT_EQ(read_dir(dir.str()).value(), (std::vector<std::string>{"B", "a", "b"}));
}

}  // namespace
}  // namespace hearth::agentapp::nodefs
