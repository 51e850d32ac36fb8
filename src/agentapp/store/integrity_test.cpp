#include "agentapp/store/integrity.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "agentapp/package/test_package.hpp"

namespace hearth::agentapp {
namespace {

namespace fs = std::filesystem;
using testing::PackageDir;

bool has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(PackageTree, ListsFilesWithTheirHashesAndFolders) {
  PackageDir dir("app");
  dir.write("APP.md", "---\nname: app\n---\n");
  dir.write("services/backend.py", "print('hi')\n");
  fs::create_directories(dir.path() / "empty");
  auto tree = read_package_tree(dir.path());
  ASSERT_TRUE(tree.ok()) << tree.error().message;
  ASSERT_EQ(tree.value().size(), 4u);
  EXPECT_EQ(tree.value().at("services").kind, TreeEntry::Kind::kFolder);
  EXPECT_EQ(tree.value().at("empty").kind, TreeEntry::Kind::kFolder);
  const auto& file = tree.value().at("services/backend.py");
  EXPECT_EQ(file.kind, TreeEntry::Kind::kFile);
  EXPECT_EQ(file.sha256.size(), 64u);
  // As the store keeps it, and back.
  const auto kept = tree_to_json(tree.value());
  EXPECT_EQ(kept.at("services"), "folder");
  EXPECT_EQ(kept.at("services/backend.py").as_string(), "sha256:" + file.sha256);
  auto back = tree_from_json(json::value(kept));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(tree_changes(tree.value(), back.value()).empty());
}

TEST(PackageTree, NamesEachFileChangedAddedRemovedOrOfAnotherKind) {
  PackageDir dir("app");
  dir.write("APP.md", "---\nname: app\n---\n");
  dir.write("services/backend.py", "print('hi')\n");
  dir.write("dist/ui/index.html", "<p>notes</p>\n");
  dir.write("dist/worker/run.mjs", "export function f() {}\n");
  dir.write("lib/util.py", "x = 1\n");
  const auto recorded = read_package_tree(dir.path()).value();
  EXPECT_TRUE(tree_changes(recorded, read_package_tree(dir.path()).value()).empty());

  dir.write("services/backend.py", "print('stolen')\n");
  dir.write("services/extra.py", "import os\n");
  fs::remove(dir.path() / "dist/ui/index.html");
  // A link to a file with the same bytes: the package hash (which follows links) would not
  // see it; the check does.
  PackageDir outside("outside");
  outside.write("run.mjs", "export function f() {}\n");
  fs::remove(dir.path() / "dist/worker/run.mjs");
  fs::create_symlink(outside.path() / "run.mjs", dir.path() / "dist/worker/run.mjs");
  fs::remove(dir.path() / "lib/util.py");
  fs::create_directory(dir.path() / "lib/util.py");
  const auto changes = tree_changes(recorded, read_package_tree(dir.path()).value());
  EXPECT_EQ(changes.size(), 5u);
  EXPECT_TRUE(has(changes, "services/backend.py changed since install"));
  EXPECT_TRUE(has(changes, "services/extra.py was added since install (a file)"));
  EXPECT_TRUE(has(changes, "dist/ui/index.html was removed since install"));
  EXPECT_TRUE(has(changes, "dist/worker/run.mjs is a symbolic link now (a file at install)"));
  EXPECT_TRUE(has(changes, "lib/util.py is a folder now (a file at install)"));
}

TEST(PackageTree, FollowsNoLinkAndRefusesALinkedRoot) {
  PackageDir dir("app");
  dir.write("APP.md", "x");
  PackageDir outside("outside");
  outside.write("secret/a.txt", "a");
  fs::create_directory_symlink(outside.path() / "secret", dir.path() / "linked");
  auto tree = read_package_tree(dir.path());
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(tree.value().at("linked").kind, TreeEntry::Kind::kLink);
  EXPECT_FALSE(tree.value().contains("linked/a.txt"));

  const auto link = dir.path().parent_path() / "root-link";
  fs::create_directory_symlink(dir.path(), link);
  auto through = read_package_tree(link);
  ASSERT_FALSE(through.ok());
  EXPECT_NE(through.error().message.find("symbolic link"), std::string::npos);
  EXPECT_FALSE(read_package_tree(dir.path() / "missing").ok());
}

TEST(PackageTree, AFifoIsNotReadButNamed) {
  PackageDir dir("app");
  dir.write("APP.md", "x");
  const auto recorded = read_package_tree(dir.path()).value();
  ASSERT_EQ(::mkfifo((dir.path() / "pipe").c_str(), 0644), 0);
  const auto changes = tree_changes(recorded, read_package_tree(dir.path()).value());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0], "pipe was added since install (a device, FIFO or socket)");
}

}  // namespace
}  // namespace hearth::agentapp
