#include "agentapp/store/staging.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/// A stager in a child process: it makes its entry, writes part of a package into it, reports
/// the entry's folder, then waits for a byte on `go` (or nothing: it goes on at once) and dies
/// by SIGKILL, as a killed `hearth app install` does: no destructor runs.
struct ChildStager {
  pid_t pid = -1;
  fs::path entry;
  int go = -1;

  ChildStager(const fs::path& staging, bool wait) {
    int report[2];
    int resume[2];
    EXPECT_EQ(::pipe(report), 0);
    EXPECT_EQ(::pipe(resume), 0);
    pid = ::fork();
    if (pid == 0) {
      ::close(report[0]);
      ::close(resume[1]);
      auto made = StagingEntry::create(staging);
      if (!made.ok()) ::_exit(2);
      std::ofstream(made.value().path() / "partial.bin") << std::string(4096, 'x');
      const std::string path = made.value().path().string();
      if (::write(report[1], path.data(), path.size()) < 0) ::_exit(3);
      ::close(report[1]);
      char byte = 0;
      if (wait && ::read(resume[0], &byte, 1) < 0) ::_exit(4);
      ::kill(::getpid(), SIGKILL);
      ::_exit(5);
    }
    ::close(report[1]);
    ::close(resume[0]);
    go = resume[1];
    std::string path;
    char buf[512];
    for (ssize_t n; (n = ::read(report[0], buf, sizeof buf)) > 0;) path.append(buf, n);
    ::close(report[0]);
    entry = path;
    if (!wait) kill_now();
  }
  ~ChildStager() {
    if (pid > 0) kill_now();
  }
  ChildStager(const ChildStager&) = delete;
  ChildStager& operator=(const ChildStager&) = delete;
  void kill_now() {
    if (go >= 0) ::close(go);  // the child reads end-of-file and goes on to its SIGKILL
    go = -1;
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    pid = -1;
  }
};

std::size_t entries_in(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(StagingEntry, IsLockedWhileHeldAndGoesWithItsLockFile) {
  PackageDir state("state");
  const auto staging = state.path() / "staging";
  fs::create_directories(staging);
  fs::path folder;
  {
    auto made = StagingEntry::create(staging);
    ASSERT_TRUE(made.ok()) << made.error().message;
    StagingEntry entry = std::move(made.value());
    folder = entry.path();
    ASSERT_TRUE(fs::is_directory(folder));
    EXPECT_TRUE(fs::is_regular_file(folder.string() + ".lock"));
    std::ofstream(folder / "partial.bin") << "x";
    // Held (even by this process): a sweep leaves it whole.
    EXPECT_TRUE(remove_stale_staging(staging).empty());
    EXPECT_TRUE(fs::is_directory(folder));
  }
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_FALSE(fs::exists(folder.string() + ".lock"));
  EXPECT_EQ(entries_in(staging), 0u);
}

TEST(StagingEntry, AKilledStagersEntryIsSweptAndALiveOnesIsNot) {
  PackageDir state("state");
  const auto staging = state.path() / "staging";
  fs::create_directories(staging);
  ChildStager killed(staging, false);
  ChildStager live(staging, true);
  // Both left their folders; only the killed one's lock is free.
  ASSERT_TRUE(fs::exists(killed.entry / "partial.bin"));
  ASSERT_TRUE(fs::exists(live.entry / "partial.bin"));
  const auto removed = remove_stale_staging(staging);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], killed.entry.filename().string());
  EXPECT_FALSE(fs::exists(killed.entry));
  EXPECT_FALSE(fs::exists(killed.entry.string() + ".lock"));
  EXPECT_TRUE(fs::exists(live.entry / "partial.bin"));
  // Once it is killed too, the next sweep takes it.
  live.kill_now();
  EXPECT_EQ(remove_stale_staging(staging).size(), 1u);
  EXPECT_EQ(entries_in(staging), 0u);
}

TEST(StagingEntry, TheSweepRemovesLeftoversWithoutFollowingLinks) {
  PackageDir state("state");
  const auto staging = state.path() / "staging";
  PackageDir outside("outside");
  outside.write("keep/precious.txt", "mine");
  // A folder from before the lock files, read-only as an installed package is.
  state.write("staging/0123abcd/package/dist/a.js", "a");
  fs::permissions(staging / "0123abcd/package/dist", fs::perms::owner_read | fs::perms::owner_exec);
  // Links to a folder outside: as an entry, and inside one.
  fs::create_directory_symlink(outside.path() / "keep", staging / "feedbeef");
  state.write("staging/cafe0000/package/APP.md", "x");
  fs::create_directory_symlink(outside.path() / "keep", staging / "cafe0000/package/out");
  state.write("staging/stray.txt", "x");
  state.write("staging/dead0000.lock", "");  // a lock file with no folder, not held
  EXPECT_EQ(remove_stale_staging(staging).size(), 5u);
  EXPECT_EQ(entries_in(staging), 0u);
  EXPECT_EQ(read(outside.path() / "keep/precious.txt"), "mine");
}

TEST(RemoveTree, RemovesLinksNotWhatTheyLeadTo) {
  PackageDir work("work");
  PackageDir outside("outside");
  outside.write("keep/precious.txt", "mine");
  work.write("tree/a/b.txt", "b");
  fs::create_directory_symlink(outside.path() / "keep", work.path() / "tree/a/link");
  fs::permissions(work.path() / "tree/a", fs::perms::owner_read | fs::perms::owner_exec);
  ASSERT_TRUE(remove_tree_nofollow(work.path() / "tree").ok());
  EXPECT_FALSE(fs::exists(work.path() / "tree"));
  EXPECT_EQ(read(outside.path() / "keep/precious.txt"), "mine");
  // A link as the tree itself: only the link goes.
  fs::create_directory_symlink(outside.path() / "keep", work.path() / "alias");
  ASSERT_TRUE(remove_tree_nofollow(work.path() / "alias").ok());
  EXPECT_FALSE(fs::is_symlink(work.path() / "alias"));
  EXPECT_EQ(read(outside.path() / "keep/precious.txt"), "mine");
  EXPECT_TRUE(remove_tree_nofollow(work.path() / "missing").ok());
}

}  // namespace
}  // namespace hearth::agentapp
