#pragma once
/// Result<T>: a value or an Error, for everything on the request path (no exceptions there).

#include <cassert>
#include <utility>
#include <variant>

#include "common/error.hpp"

namespace hearth {

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value)
      : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error)
      : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& {
    assert(!ok_);
    return error_;
  }
  Error&& error() && {
    assert(!ok_);
    return std::move(error_);
  }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace hearth

/// Returns the error of a failed Result from the enclosing function (or coroutine with CO_).
#define HEARTH_RETURN_IF_ERROR(expr)                                    \
  do {                                                                  \
    auto&& hearth_status_ = (expr);                                     \
    if (!hearth_status_.ok()) return std::move(hearth_status_).error(); \
  } while (0)
#define HEARTH_CO_RETURN_IF_ERROR(expr)                                    \
  do {                                                                     \
    auto&& hearth_status_ = (expr);                                        \
    if (!hearth_status_.ok()) co_return std::move(hearth_status_).error(); \
  } while (0)

#define HEARTH_CONCAT_INNER_(a, b) a##b
#define HEARTH_CONCAT_(a, b) HEARTH_CONCAT_INNER_(a, b)

/// `HEARTH_ASSIGN_OR_RETURN(auto x, expr);` declares x as the value of the Result `expr`, or
/// returns its error from the enclosing function (CO_: coroutine).
#define HEARTH_ASSIGN_OR_RETURN(lhs, expr) \
  HEARTH_ASSIGN_OR_RETURN_IMPL_(HEARTH_CONCAT_(hearth_result_, __LINE__), lhs, expr, return )
#define HEARTH_CO_ASSIGN_OR_RETURN(lhs, expr) \
  HEARTH_ASSIGN_OR_RETURN_IMPL_(HEARTH_CONCAT_(hearth_result_, __LINE__), lhs, expr, co_return )
// `lhs` is a declaration and `ret` a keyword: neither can be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define HEARTH_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr, ret) \
  auto tmp = (expr);                                       \
  if (!tmp.ok()) ret std::move(tmp).error();               \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
