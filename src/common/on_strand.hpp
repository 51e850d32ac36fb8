#pragma once
/// on(executor, work): runs a coroutine on another executor (a strand) and returns its value to
/// the awaiting coroutine. Unlike co_spawn(..., use_awaitable), T need not be default-constructible
/// (Result<T> is not).

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>
#include <utility>

namespace hearth {

namespace detail {
template <class T>
boost::asio::awaitable<void> store(boost::asio::awaitable<T> work, std::optional<T>& out) {
  out.emplace(co_await std::move(work));
}
}  // namespace detail

template <class Executor, class T>
boost::asio::awaitable<T> on(Executor executor, boost::asio::awaitable<T> work) {
  std::optional<T> out;
  co_await boost::asio::co_spawn(executor, detail::store(std::move(work), out),
                                 boost::asio::use_awaitable);
  co_return std::move(*out);
}

}  // namespace hearth
