#include "common/fd.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <utility>

#include "common/pipes.hpp"

namespace hearth {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(Fd, ClosesWhenItGoesOutOfScope) {
  int raw = -1;
  {
    auto pipe = make_pipe();
    ASSERT_TRUE(pipe.ok());
    raw = pipe->at(0).get();
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(Fd, MovesOwnershipAndClosesWhatItReplaces) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  const int read_end = pipe->at(0).get();
  const int write_end = pipe->at(1).get();
  Fd a = std::move(pipe->at(0));
  EXPECT_FALSE(pipe->at(0).valid());
  EXPECT_EQ(a.get(), read_end);
  a = std::move(pipe->at(1));  // the read end is closed, the write end held
  EXPECT_FALSE(is_open(read_end));
  EXPECT_EQ(a.get(), write_end);
  EXPECT_TRUE(is_open(write_end));
}

TEST(Fd, ReleaseGivesUpAndResetCloses) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  const int raw = pipe->at(0).release();
  EXPECT_FALSE(pipe->at(0));
  EXPECT_TRUE(is_open(raw));
  Fd again(raw);
  again.reset();
  EXPECT_FALSE(is_open(raw));
  EXPECT_FALSE(again.valid());
  again.reset();  // nothing held: nothing closed
  EXPECT_EQ(Fd().close(), 0);
  EXPECT_EQ(pipe->at(1).close(), 0);
  EXPECT_FALSE(pipe->at(1).valid());
}

TEST(Fd, DupIsASecondCloseOnExecDescriptor) {
  auto pipe = make_pipe(0);  // not close-on-exec
  ASSERT_TRUE(pipe.ok());
  EXPECT_EQ(::fcntl(pipe->at(1).get(), F_GETFD) & FD_CLOEXEC, 0);
  Fd copy = pipe->at(1).dup();
  ASSERT_TRUE(copy.valid());
  EXPECT_NE(copy.get(), pipe->at(1).get());
  EXPECT_NE(::fcntl(copy.get(), F_GETFD) & FD_CLOEXEC, 0);
  pipe->at(1).reset();
  ASSERT_EQ(::write(copy.get(), "x", 1), 1);  // the pipe stays open through the copy
  char c = 0;
  ASSERT_EQ(::read(pipe->at(0).get(), &c, 1), 1);
  EXPECT_EQ(c, 'x');
  errno = 0;
  EXPECT_FALSE(Fd().dup().valid());
  EXPECT_EQ(errno, EBADF);
}

TEST(Fd, PipesAndSocketPairs) {
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  EXPECT_NE(::fcntl(pipe->at(0).get(), F_GETFD) & FD_CLOEXEC, 0);
  ASSERT_EQ(::write(pipe->at(1).get(), "p", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(pipe->at(0).get(), &c, 1), 1);
  EXPECT_EQ(c, 'p');

  auto pair = make_socket_pair(SOCK_SEQPACKET | SOCK_CLOEXEC);
  ASSERT_TRUE(pair.ok());
  ASSERT_EQ(::send(pair->at(1).get(), "s", 1, 0), 1);
  ASSERT_EQ(::recv(pair->at(0).get(), &c, 1, 0), 1);
  EXPECT_EQ(c, 's');

  auto bad = make_socket_pair(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("socketpair: ", 0), 0U) << bad.error().message;
  FdPair untouched;
  EXPECT_NE(open_pipe(untouched, -1), 0);  // invalid flags
  EXPECT_FALSE(untouched[0].valid());
}

}  // namespace
}  // namespace hearth
