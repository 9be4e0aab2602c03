#include "task/signature.h"

#include <cctype>

#include "core/strings.h"

namespace ksmith {
namespace {

bool IsIdentifier(std::string_view word) {
  if (word.empty() || std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  for (char c : word) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : text) {
    if (c == '*') {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
      tokens.emplace_back("*");
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

Result<SignatureParameter> ParseParameter(std::string_view text) {
  auto tokens = Tokenize(text);
  if (tokens.size() < 2) {
    return MakeError(ErrorKind::kParse, "parameter '{}' needs a type and a name", Trim(text));
  }
  SignatureParameter parameter;
  parameter.name = tokens.back();
  tokens.pop_back();
  if (!IsIdentifier(parameter.name)) {
    return MakeError(ErrorKind::kParse, "parameter '{}': '{}' is not a name", Trim(text),
                     parameter.name);
  }
  for (const auto& token : tokens) {
    if (token == "const") {
      parameter.is_const = true;
    } else if (token == "*") {
      if (parameter.is_pointer) {
        return MakeError(ErrorKind::kParse, "parameter '{}': pointers to pointers are not supported",
                         Trim(text));
      }
      parameter.is_pointer = true;
    } else if (IsIdentifier(token) && parameter.base_type.empty()) {
      parameter.base_type = token;
    } else {
      return MakeError(ErrorKind::kParse, "parameter '{}': unexpected '{}'", Trim(text), token);
    }
  }
  if (parameter.base_type.empty()) {
    return MakeError(ErrorKind::kParse, "parameter '{}' has no type", Trim(text));
  }
  return parameter;
}

}  // namespace

std::string SignatureParameter::Declaration() const {
  return (is_const ? "const " : "") + base_type + (is_pointer ? "* " : " ") + name;
}

std::string Signature::Declaration() const {
  std::string text = "extern \"C\" void " + function + "(";
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i > 0) text += ", ";
    text += parameters[i].Declaration();
  }
  return text + ")";
}

Result<Signature> ParseSignature(std::string_view text) {
  std::string_view rest = Trim(text);
  if (rest.starts_with("extern \"C\"")) rest = Trim(rest.substr(10));
  if (!rest.starts_with("void ")) {
    return MakeError(ErrorKind::kParse, "signature '{}' must start with 'void '", text);
  }
  rest = Trim(rest.substr(5));
  const size_t open = rest.find('(');
  const size_t close = rest.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      !Trim(rest.substr(close + 1)).empty()) {
    return MakeError(ErrorKind::kParse, "signature '{}' must look like 'void name(type a, ...)'",
                     text);
  }
  Signature signature;
  signature.function = std::string(Trim(rest.substr(0, open)));
  if (!IsIdentifier(signature.function)) {
    return MakeError(ErrorKind::kParse, "signature '{}': '{}' is not a function name", text,
                     signature.function);
  }
  std::string_view list = Trim(rest.substr(open + 1, close - open - 1));
  while (!list.empty()) {
    const size_t comma = list.find(',');
    auto parameter = ParseParameter(list.substr(0, comma));
    if (!parameter.ok()) return parameter.error();
    for (const auto& existing : signature.parameters) {
      if (existing.name == parameter->name) {
        return MakeError(ErrorKind::kParse, "signature '{}': parameter '{}' appears twice", text,
                         existing.name);
      }
    }
    signature.parameters.push_back(std::move(parameter.value()));
    if (comma == std::string_view::npos) break;
    list = Trim(list.substr(comma + 1));
    if (list.empty()) return MakeError(ErrorKind::kParse, "signature '{}' ends with a comma", text);
  }
  return signature;
}

}  // namespace ksmith
