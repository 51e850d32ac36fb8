#include "daemon/daemon.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "daemon/instance.hpp"
#include "json/json.hpp"
#include "net/routes.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::daemon {
namespace {

namespace fs = std::filesystem;

/// What the components of a test did, in order ("start a", "stop b", ...).
struct Journal {
  std::mutex mu;
  std::vector<std::string> lines;
  void add(std::string line) {
    std::lock_guard lock(mu);
    lines.push_back(std::move(line));
  }
};
Journal* journal = nullptr;

template <const char* Name>
struct Recorder : Component {
  explicit Recorder(Context& /*context*/) { journal->add(std::string("build ") + Name); }
  void start() override { journal->add(std::string("start ") + Name); }
  void stop() override { journal->add(std::string("stop ") + Name); }
  ~Recorder() override { journal->add(std::string("destroy ") + Name); }
};

constexpr char kA[] = "a";
constexpr char kB[] = "b";
constexpr char kC[] = "c";

struct A : Recorder<kA> {
  static constexpr std::string_view kName = "a";
  static std::vector<std::string_view> dependencies() { return {}; }
  using Recorder::Recorder;
};
struct C : Recorder<kC> {
  static constexpr std::string_view kName = "c";
  static std::vector<std::string_view> dependencies() { return {"a"}; }
  using Recorder::Recorder;
  void start() override {
    ++starts;
    Recorder::start();
  }
  int starts = 0;
};
/// Depends on a and c; finds c in its constructor.
struct B : Recorder<kB> {
  static constexpr std::string_view kName = "b";
  static std::vector<std::string_view> dependencies() { return {"c", "a"}; }
  explicit B(Context& context) : Recorder(context), c_start_count(&context.find<C>().starts) {}
  int* c_start_count;
};

/// Exposes a method; ready the third time it is asked.
struct Stopper : Component {
  static constexpr std::string_view kName = "stopper";
  static std::vector<std::string_view> dependencies() { return {"b"}; }
  explicit Stopper(Context& context) : context_(context) {}
  Status expose(Surface& surface) override {
    surface.rpc().add(
        "test/echo",
        [](const rpc::Request& request) -> boost::asio::awaitable<Result<json::value>> {
          co_return request.params;
        });
    return {};
  }
  void start() override {
    journal->add("start stopper at " + std::string(context_.url().empty() ? "no url" : "url"));
  }
  bool ready() override { return ++asked >= 3; }  // ready at the third time asked
  void describe(json::object& ready) const override { ready["stopper"] = asked; }
  void stop() override { journal->add("stop stopper"); }
  int asked = 0;
  Context& context_;
};

Options test_options(const fs::path& dir) {
  Options options;
  options.port = 0;
  options.threads = 1;
  options.state_dir = dir / "state";
  options.ready_file = dir / "ready.json";
  return options;
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal = &journal_;
    dir_ = fs::temp_directory_path() / ("hearth-daemon-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    journal = nullptr;
    fs::remove_all(dir_);
  }
  Journal journal_;
  fs::path dir_;
};

TEST_F(DaemonTest, StartsInDependencyOrderWhateverTheOrderAdded) {
  Daemon daemon(test_options(dir_));
  daemon.add<B>();
  daemon.add<C>();
  daemon.add<A>();
  auto order = daemon.start_order();
  ASSERT_TRUE(order.ok()) << order.error().message;
  EXPECT_EQ(order.value(), (std::vector<std::string>{"a", "c", "b"}));
}

struct Loop1 : Component {
  static constexpr std::string_view kName = "loop1";
  static std::vector<std::string_view> dependencies() { return {"loop2"}; }
  explicit Loop1(Context& /*context*/) {}
};
struct Loop2 : Component {
  static constexpr std::string_view kName = "loop2";
  static std::vector<std::string_view> dependencies() { return {"loop1"}; }
  explicit Loop2(Context& /*context*/) {}
};

TEST_F(DaemonTest, RefusesACycleAndAMissingDependency) {
  Daemon cyclic(test_options(dir_));
  cyclic.add<Loop1>();
  cyclic.add<Loop2>();
  auto order = cyclic.start_order();
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.error().message.find("loop1 -> loop2 -> loop1"), std::string::npos)
      << order.error().message;
  EXPECT_EQ(cyclic.run(), 1);

  Daemon missing(test_options(dir_));
  missing.add<B>();
  missing.add<A>();
  auto missing_order = missing.start_order();
  ASSERT_FALSE(missing_order.ok());
  EXPECT_NE(missing_order.error().message.find("b depends on c"), std::string::npos)
      << missing_order.error().message;
}

/// Uses "a" without declaring it.
struct Sneaky : Component {
  static constexpr std::string_view kName = "sneaky";
  static std::vector<std::string_view> dependencies() { return {}; }
  explicit Sneaky(Context& context) { context.find<A>(); }
};

TEST_F(DaemonTest, AnUndeclaredDependencyStopsTheStartAndWhatWasBuiltIsUndoneInReverse) {
  Daemon daemon(test_options(dir_));
  daemon.add<A>();
  daemon.add<C>();
  daemon.add<Sneaky>();
  EXPECT_EQ(daemon.run(), 1);
  EXPECT_EQ(journal_.lines, (std::vector<std::string>{"build a", "build c", "stop c", "stop a"}));
  EXPECT_FALSE(fs::exists(dir_ / "ready.json"));
}

/// Throws StartupError with exit code 2.
struct Broken : Component {
  static constexpr std::string_view kName = "broken";
  static std::vector<std::string_view> dependencies() { return {"a"}; }
  explicit Broken(Context& /*context*/) { throw StartupError("broken: cannot start", 2); }
};

TEST_F(DaemonTest, AStartupErrorGivesItsExitCode) {
  {
    Daemon daemon(test_options(dir_));
    daemon.add<Broken>();
    daemon.add<A>();
    EXPECT_EQ(daemon.run(), 2);
  }
  EXPECT_EQ(journal_.lines, (std::vector<std::string>{"build a", "stop a", "destroy a"}));
}

/// A signal from the ready callback stops the daemon as a person's Ctrl-C would.
TEST_F(DaemonTest, ServesStartsInOrderAnnouncesWhenReadyAndStopsInReverse) {
  std::string token;
  json::object announced;
  {
    Daemon daemon(test_options(dir_));
    daemon.add<Stopper>();
    daemon.add<B>();
    daemon.add<C>();
    daemon.add<A>();
    daemon.on_ready([&](const json::object& ready, const std::string& t) {
      announced = ready;
      token = t;
      // The ready document is on disk before the announcement, with the token in its file.
      std::ifstream in(dir_ / "ready.json");
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_NE(text.find("\"stopper\":3"), std::string::npos) << text;
      std::ifstream token_in(dir_ / "state" / "token");
      std::string on_disk;
      token_in >> on_disk;
      EXPECT_EQ(on_disk, t);
      ::kill(::getpid(), SIGTERM);
    });
    EXPECT_EQ(daemon.run(), 0);
  }
  EXPECT_EQ(token.size(), 64U);
  EXPECT_EQ(announced["stopper"].to_number<std::int64_t>(), 3);
  EXPECT_GT(announced["port"].to_number<std::int64_t>(), 0);
  EXPECT_EQ(journal_.lines,
            (std::vector<std::string>{"build a", "build c", "build b", "start a", "start c",
                                      "start b", "start stopper at url", "stop stopper", "stop b",
                                      "stop c", "stop a", "destroy b", "destroy c", "destroy a"}));
  // What says a daemon serves is gone with it; the token stays for the next start, and the
  // folder's lock is free.
  EXPECT_FALSE(fs::exists(dir_ / "ready.json"));
  EXPECT_FALSE(fs::exists(dir_ / "state" / "daemon.json"));
  EXPECT_TRUE(fs::exists(dir_ / "state" / "token"));
  EXPECT_FALSE(find_instance(dir_ / "state").running);
}

/// Fails the daemon after its start, as a workspace that cannot be opened does.
struct Failing : Component {
  static constexpr std::string_view kName = "failing";
  static std::vector<std::string_view> dependencies() { return {}; }
  explicit Failing(Context& context) : context_(context) {}
  void start() override { context_.fail(5); }
  bool ready() override { return false; }
  Context& context_;
};

TEST_F(DaemonTest, AComponentThatFailsAfterItsStartStopsTheDaemonWithItsCode) {
  bool announced = false;
  Daemon daemon(test_options(dir_));
  daemon.add<Failing>();
  daemon.on_ready([&](const json::object&, const std::string&) { announced = true; });
  EXPECT_EQ(daemon.run(), 5);
  EXPECT_FALSE(announced);
}

}  // namespace
}  // namespace hearth::daemon
