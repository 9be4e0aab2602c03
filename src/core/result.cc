#include "core/result.h"

namespace ksmith {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid_argument";
    case ErrorKind::kNotFound: return "not_found";
    case ErrorKind::kParse: return "parse_error";
    case ErrorKind::kIo: return "io_error";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kTimeout: return "timeout";
    case ErrorKind::kProtocol: return "protocol_error";
    case ErrorKind::kInternal: return "internal_error";
    case ErrorKind::kDamaged: return "damaged";
  }
  return "unknown";
}

}  // namespace ksmith
