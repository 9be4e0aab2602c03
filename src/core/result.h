// Expected failures as values: every fallible call returns Result<T>; exceptions are for bugs.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace ksmith {

enum class ErrorKind {
  kInvalidArgument,  // the caller's input is wrong (usage, malformed file)
  kNotFound,
  kParse,
  kIo,
  kUnsupported,
  kTimeout,
  kProtocol,  // a peer broke the worker protocol
  kInternal,  // ksmith's own fault
  kDamaged,   // a file ksmith wrote reads back wrong (a run store's page or column): the user's to move away
};

const char* ErrorKindName(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;
};

template <typename... Args>
Error MakeError(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  return Error{kind, fmt::format(format, std::forward<Args>(args)...)};
}

/// A value or an Error. Access value() only after checking ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace ksmith
