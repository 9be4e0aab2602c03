#include "task/expression.h"

#include <cctype>

namespace ksmith {
namespace {

class Parser {
 public:
  Parser(std::string_view text, const DimValues& dims) : text_(text), dims_(dims) {}

  Result<int64_t> Parse() {
    auto value = ParseSum();
    if (!value.ok()) return value;
    SkipSpace();
    if (position_ != text_.size()) return Fail("unexpected '{}'", text_.substr(position_, 1));
    return value;
  }

 private:
  template <typename... Args>
  Error Fail(fmt::format_string<Args...> format, Args&&... args) {
    return MakeError(ErrorKind::kParse, "expression \"{}\", column {}: {}", text_, position_ + 1,
                     fmt::format(format, std::forward<Args>(args)...));
  }

  void SkipSpace() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_]))) {
      ++position_;
    }
  }

  bool Accept(char symbol) {
    SkipSpace();
    if (position_ < text_.size() && text_[position_] == symbol) {
      ++position_;
      return true;
    }
    return false;
  }

  Result<int64_t> ParseSum() {
    auto left = ParseProduct();
    while (left.ok()) {
      if (Accept('+')) {
        auto right = ParseProduct();
        if (!right.ok()) return right;
        left = *left + *right;
      } else if (Accept('-')) {
        auto right = ParseProduct();
        if (!right.ok()) return right;
        left = *left - *right;
      } else {
        break;
      }
    }
    return left;
  }

  Result<int64_t> ParseProduct() {
    auto left = ParseFactor();
    while (left.ok()) {
      if (Accept('*')) {
        auto right = ParseFactor();
        if (!right.ok()) return right;
        left = *left * *right;
      } else if (Accept('/')) {
        auto right = ParseFactor();
        if (!right.ok()) return right;
        if (*right == 0) return Fail("division by zero");
        // Rounds down, not toward zero: "(h - k) / s + 1" is then below 1 whenever the window
        // does not fit, which is what a derived dim's check needs.
        const int64_t quotient = *left / *right;
        left = (*left % *right != 0 && (*left < 0) != (*right < 0)) ? quotient - 1 : quotient;
      } else {
        break;
      }
    }
    return left;
  }

  Result<int64_t> ParseFactor() {
    SkipSpace();
    if (position_ >= text_.size()) return Fail("expression ends early");
    if (Accept('(')) {
      auto inner = ParseSum();
      if (!inner.ok()) return inner;
      if (!Accept(')')) return Fail("missing ')'");
      return inner;
    }
    if (Accept('-')) {
      auto inner = ParseFactor();
      if (!inner.ok()) return inner;
      return -*inner;
    }
    const char first = text_[position_];
    if (std::isdigit(static_cast<unsigned char>(first))) {
      int64_t value = 0;
      while (position_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[position_]))) {
        value = value * 10 + (text_[position_++] - '0');
      }
      return value;
    }
    if (std::isalpha(static_cast<unsigned char>(first)) || first == '_') {
      const size_t start = position_;
      while (position_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[position_])) || text_[position_] == '_')) {
        ++position_;
      }
      const std::string_view name = text_.substr(start, position_ - start);
      const auto found = dims_.find(name);
      if (found == dims_.end()) {
        position_ = start;
        return Fail("unknown dim '{}'", name);
      }
      return found->second;
    }
    return Fail("unexpected '{}'", text_.substr(position_, 1));
  }

  std::string_view text_;
  const DimValues& dims_;
  size_t position_ = 0;
};

}  // namespace

Result<int64_t> EvaluateExpression(std::string_view text, const DimValues& dims) {
  return Parser(text, dims).Parse();
}

}  // namespace ksmith
