#include "jail/glob.hpp"

#include <gtest/gtest.h>

namespace hearth::jail {
namespace {

TEST(GlobMatch, LiteralAndDotSlash) {
  EXPECT_TRUE(glob_match("notes.txt", "notes.txt"));
  EXPECT_TRUE(glob_match("./notes.txt", "notes.txt"));
  EXPECT_FALSE(glob_match("notes.txt", "data/notes.txt"));
  EXPECT_FALSE(glob_match("notes.txt", "notes.txt.bak"));
}

TEST(GlobMatch, StarStaysInSegment) {
  EXPECT_TRUE(glob_match("data/*.json", "data/a.json"));
  EXPECT_FALSE(glob_match("data/*.json", "data/sub/a.json"));
  EXPECT_TRUE(glob_match("*", "x"));
  EXPECT_FALSE(glob_match("*", "x/y"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
}

TEST(GlobMatch, DoubleStarSpansSegments) {
  EXPECT_TRUE(glob_match("./data/**/*.json", "data/todos.json"));
  EXPECT_TRUE(glob_match("./data/**/*.json", "data/a/b/c.json"));
  EXPECT_FALSE(glob_match("./data/**/*.json", "data/a/b/c.txt"));
  EXPECT_FALSE(glob_match("./data/**/*.json", "other/x.json"));
  EXPECT_TRUE(glob_match("data/**", "data/x"));
  EXPECT_TRUE(glob_match("data/**", "data/x/y"));
  EXPECT_TRUE(glob_match("**/*.db", "contacts.db"));
  EXPECT_TRUE(glob_match("**", "anything/at/all"));
}

TEST(GlobMatch, QuestionAndClasses) {
  EXPECT_TRUE(glob_match("file?.txt", "file1.txt"));
  EXPECT_FALSE(glob_match("file?.txt", "file.txt"));
  EXPECT_TRUE(glob_match("log[0-9].txt", "log5.txt"));
  EXPECT_FALSE(glob_match("log[0-9].txt", "logx.txt"));
  EXPECT_TRUE(glob_match("log[!0-9].txt", "logx.txt"));
  EXPECT_FALSE(glob_match("log[^0-9].txt", "log1.txt"));
  EXPECT_TRUE(glob_match("[]]x", "]x"));
  EXPECT_TRUE(glob_match("a[b", "a[b"));  // unclosed class is literal
}

TEST(GlobMatch, TrailingSlashMeansFolderContents) {
  EXPECT_TRUE(glob_match("data/", "data/a/b"));
  EXPECT_FALSE(glob_match("data/", "database"));
}

TEST(GlobSet, NegationWinsRegardlessOfOrder) {
  GlobSet set({"!./data/secrets.json", "./data/**/*.json"});
  EXPECT_TRUE(set.allows("data/todos.json"));
  EXPECT_FALSE(set.allows("data/secrets.json"));
  EXPECT_FALSE(set.allows("lavs.json"));
}

TEST(GlobSet, EmptyAllowsNothing) {
  GlobSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_FALSE(set.allows("x"));
  GlobSet only_negations({"!x"});
  EXPECT_FALSE(only_negations.allows("y"));
}

TEST(GlobMatch, PathologicalPatternTerminates) {
  std::string path(200, 'a');
  EXPECT_FALSE(glob_match("**/**/**/**/**/**/b", path));
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*b", path));
}


TEST(RequestedPath, RelativeNormalisedAndCovered) {
  const std::filesystem::path dir = "/srv/svc";
  GlobSet globs({"data/**", "!data/secret.json"});
  std::filesystem::path rel;
  EXPECT_EQ(check_requested_path(dir, globs, "data/a.json", rel), PathVerdict::kAllowed);
  EXPECT_EQ(rel, "data/a.json");
  EXPECT_EQ(check_requested_path(dir, globs, "./data/x/../b.json", rel), PathVerdict::kAllowed);
  EXPECT_EQ(rel, "data/b.json");
  EXPECT_EQ(check_requested_path(dir, globs, "/srv/svc/data/c.json", rel), PathVerdict::kAllowed);
  EXPECT_EQ(rel, "data/c.json");
  EXPECT_EQ(check_requested_path(dir, globs, "data/secret.json", rel), PathVerdict::kNotCovered);
  EXPECT_EQ(check_requested_path(dir, globs, "lavs.json", rel), PathVerdict::kNotCovered);
  EXPECT_EQ(check_requested_path(dir, globs, "data/../../etc/passwd", rel), PathVerdict::kOutside);
  EXPECT_EQ(check_requested_path(dir, globs, "/etc/passwd", rel), PathVerdict::kOutside);
  EXPECT_EQ(check_requested_path(dir, globs, ".", rel), PathVerdict::kOutside);
}

TEST(RequestedPath, RealPathMustStayInsideAndCovered) {
  const std::filesystem::path dir = "/srv/svc";
  GlobSet globs({"data/**"});
  EXPECT_TRUE(real_path_allowed(dir, globs, "/srv/svc/data/a.json"));
  EXPECT_FALSE(real_path_allowed(dir, globs, "/srv/svc/secret.txt"));
  EXPECT_FALSE(real_path_allowed(dir, globs, "/srv/other/data/a.json"));
  EXPECT_FALSE(real_path_allowed(dir, globs, "/srv/svc"));
}
}  // namespace
}  // namespace hearth::jail

namespace hearth::jail {
namespace {
TEST(GlobMatch, ManyDoubleStarsOnDeepPathIsFast) {
  std::string path;
  for (int i = 0; i < 200; ++i) path += "a/";
  path += "c";
  // Backtracking would take ~200^6 steps here; the DP answers at once.
  EXPECT_FALSE(glob_match("**/a/**/a/**/a/**/a/**/a/**/b", path));
  EXPECT_TRUE(glob_match("**/a/**/a/**/a/**/a/**/a/**/c", path));
}
}  // namespace
}  // namespace hearth::jail
