// A struct's fields written to and read from a JSON object by key, from one list of fields.
//
// A struct lists its fields once, in a template `Fields(Self& self, Io& io)` (Self const or not)
// that calls `io(key, self.member)` for each; `WriteFields` and `ReadFields` run that list in either direction. Reading is tolerant
// on purpose: verdicts and stores written by older versions lack keys or hold other types, and a
// missing or mistyped key leaves the member as it was instead of throwing. Writing leaves out an
// empty std::optional and nothing else, so a struct's JSON form is fixed by its list.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith::json_fields {

template <class T>
concept HasToJson = requires(const T& value) {
  { value.ToJson() } -> std::convertible_to<nlohmann::json>;
};

template <class T>
concept HasFromJson = requires(const nlohmann::json& json) {
  { T::FromJson(json) } -> std::convertible_to<T>;
};

template <class T>
nlohmann::json ToJsonValue(const T& value) {
  if constexpr (HasToJson<T>) {
    return value.ToJson();
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    return value;
  } else if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string> &&
                       !requires { typename T::key_type; }) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& element : value) list.push_back(ToJsonValue(element));
    return list;
  } else {
    return nlohmann::json(value);
  }
}

/// Reads `json` into `out`; false (and `out` untouched) when it does not have the type.
template <class T>
bool FromJsonValue(const nlohmann::json& json, T& out) {
  if constexpr (HasFromJson<T>) {
    if (!json.is_object()) return false;
    out = T::FromJson(json);
    return true;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!json.is_boolean()) return false;
    out = json.get<bool>();
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    // NaN and infinities are written as null (nlohmann::json's rule).
    if (json.is_null()) {
      out = std::numeric_limits<T>::quiet_NaN();
      return true;
    }
    if (!json.is_number()) return false;
    out = json.get<T>();
    return true;
  } else if constexpr (std::is_arithmetic_v<T>) {
    if (!json.is_number()) return false;
    out = json.get<T>();
    return true;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!json.is_string()) return false;
    out = json.get<std::string>();
    return true;
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    out = json;
    return true;
  } else if constexpr (requires { typename T::key_type; typename T::mapped_type; }) {
    if (!json.is_object()) return false;
    T map;
    for (const auto& [key, element] : json.items()) {
      typename T::mapped_type value{};
      if (FromJsonValue(element, value)) map.emplace(key, std::move(value));
    }
    out = std::move(map);
    return true;
  } else {
    if (!json.is_array()) return false;
    T list;
    for (const auto& element : json) {
      typename T::value_type value{};
      if (FromJsonValue(element, value)) list.push_back(std::move(value));
    }
    out = std::move(list);
    return true;
  }
}

class Writer {
 public:
  explicit Writer(nlohmann::json& object) : object_(object) {}

  template <class T>
  void operator()(const char* key, const T& value) {
    object_[key] = ToJsonValue(value);
  }
  template <class T>
  void operator()(const char* key, const std::optional<T>& value) {
    if (value) object_[key] = ToJsonValue(*value);
  }

 private:
  nlohmann::json& object_;
};

class Reader {
 public:
  explicit Reader(const nlohmann::json& object) : object_(object) {}

  template <class T>
  void operator()(const char* key, T& value) {
    if (const auto found = Find(key)) found_ += FromJsonValue(**found, value);
  }
  template <class T>
  void operator()(const char* key, std::optional<T>& value) {
    if (const auto found = Find(key)) {
      T read{};
      if (FromJsonValue(**found, read)) {
        value = std::move(read);
        ++found_;
      }
    }
  }
  /// How many listed keys were present with the right type.
  int found() const { return found_; }

 private:
  std::optional<const nlohmann::json*> Find(const char* key) const {
    if (!object_.is_object()) return std::nullopt;
    const auto found = object_.find(key);
    if (found == object_.end()) return std::nullopt;
    return &*found;
  }

  const nlohmann::json& object_;
  int found_ = 0;
};

/// Writes the fields `Fields(value, writer)` lists into `object`.
template <class T>
void WriteFields(const T& value, nlohmann::json& object) {
  Writer writer(object);
  Fields(value, writer);
}

/// Reads them back; returns how many were present.
template <class T>
int ReadFields(const nlohmann::json& object, T& value) {
  Reader reader(object);
  Fields(value, reader);
  return reader.found();
}

/// A struct's ToJson, from its field list.
template <class T>
nlohmann::json ToObject(const T& value) {
  nlohmann::json object = nlohmann::json::object();
  WriteFields(value, object);
  return object;
}

/// A struct's FromJson, from its field list: a missing or mistyped key keeps its default.
template <class T>
T FromObject(const nlohmann::json& object) {
  T value{};
  ReadFields(object, value);
  return value;
}

}  // namespace ksmith::json_fields
