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

// A negated pattern excludes what it matches and everything beneath it: the jail covers a
// matched folder whole, and lavs/readFile must not serve what the handler cannot reach.
TEST(GlobSet, NegatedFolderExcludesEverythingBeneath) {
  GlobSet literal({"data/**", "!data/secret"});
  EXPECT_TRUE(literal.excluded("data/secret"));
  EXPECT_TRUE(literal.excluded("data/secret/file"));
  EXPECT_TRUE(literal.excluded("data/secret/a/b/c.txt"));
  EXPECT_FALSE(literal.allows("data/secret/file"));
  EXPECT_FALSE(literal.allows("data/secret/a/b/c.txt"));
  EXPECT_TRUE(literal.allows("data/secretary/file"));  // segments, not string prefixes
  EXPECT_TRUE(literal.allows("data/public/secret2"));
  EXPECT_FALSE(literal.excluded("data"));

  GlobSet starstar({"./**", "!data/secret/**"});
  EXPECT_TRUE(starstar.excluded("data/secret"));
  EXPECT_FALSE(starstar.allows("data/secret"));
  EXPECT_FALSE(starstar.allows("data/secret/x/y"));
  EXPECT_TRUE(starstar.allows("data/other"));
  EXPECT_TRUE(starstar.allows("data"));

  GlobSet anywhere({"**", "!**/secret"});
  EXPECT_FALSE(anywhere.allows("secret/a"));
  EXPECT_FALSE(anywhere.allows("x/y/secret/z/w"));
  EXPECT_TRUE(anywhere.allows("x/y/secrets/z"));

  GlobSet files({"data/**", "!data/*.key"});
  EXPECT_FALSE(files.allows("data/a.key"));
  EXPECT_TRUE(files.allows("data/sub/a.key"));  // * stays within one segment
  // A folder named like an excluded file excludes its content too.
  EXPECT_FALSE(files.allows("data/dir.key/inner.txt"));

  GlobSet none({"data/**"});
  EXPECT_FALSE(none.excluded("data/secret/file"));
}

TEST(RequestedPath, ExcludedFolderIsRefusedBeforeAndAfterLinks) {
  const std::filesystem::path dir = "/srv/svc";
  GlobSet globs({"data/**", "!data/secret"});
  std::filesystem::path rel;
  EXPECT_EQ(check_requested_path(dir, globs, "data/secret/file", rel), PathVerdict::kNotCovered);
  EXPECT_EQ(check_requested_path(dir, globs, "data/x/../secret/file", rel),
            PathVerdict::kNotCovered);
  EXPECT_EQ(check_requested_path(dir, globs, "/srv/svc/data/secret/a/b", rel),
            PathVerdict::kNotCovered);
  // A link elsewhere in data/ that resolves into the excluded folder.
  EXPECT_EQ(check_requested_path(dir, globs, "data/link/file", rel), PathVerdict::kAllowed);
  EXPECT_FALSE(real_path_allowed(dir, globs, "/srv/svc/data/secret/file"));
  EXPECT_TRUE(real_path_allowed(dir, globs, "/srv/svc/data/public/file"));
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
