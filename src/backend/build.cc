#include "backend/build.h"

namespace ksmith {

nlohmann::json BuildOutput::ToJson() const {
  return {{"compiled", compiled},
          {"cache_hit", cache_hit},
          {"shared_object", shared_object.string()},
          {"command", command},
          {"compile_s", compile_s},
          {"sandboxed", sandboxed},
          {"log", log},
          {"resources", ksmith::ToJson(resources)},
          {"sass", sass.ToJson()}};
}

}  // namespace ksmith
