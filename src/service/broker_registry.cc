#include "service/broker_registry.h"

#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "service/redis/redis_eval_service.h"

namespace ksmith {
namespace {

struct BrokerKind {
  std::string prefix;  // what the URL starts with
  std::string usage;
  std::function<Result<std::unique_ptr<EvalService>>(const BrokerRequest&)> start;
};

const std::vector<BrokerKind>& Kinds() {
  static const auto* kinds = new std::vector<BrokerKind>{
      {"local", "local",
       [](const BrokerRequest& request) -> Result<std::unique_ptr<EvalService>> {
         if (request.url != "local") return MakeError(ErrorKind::kInvalidArgument, "'{}': the local broker is just 'local'", request.url);
         auto service = StartLocalService(request.local);
         if (!service.ok()) return service.error();
         return std::unique_ptr<EvalService>(std::move(service.value()));
       }},
      {"redis://", "redis://HOST[:PORT][/PREFIX]",
       [](const BrokerRequest& request) -> Result<std::unique_ptr<EvalService>> {
         auto address = RedisAddress::Parse(request.url);
         if (!address.ok()) return address.error();
         auto service = RedisEvalService::Connect(*address, {request.local.backend});
         if (!service.ok()) {
           return MakeError(service.error().kind, "--broker {}: {} (is redis-server running there?)", request.url,
                            service.error().message);
         }
         return std::unique_ptr<EvalService>(std::move(service.value()));
       }},
  };
  return *kinds;
}

}  // namespace

std::string BrokerKinds() {
  std::vector<std::string> usages;
  for (const auto& kind : Kinds()) usages.push_back(kind.usage);
  return fmt::format("{}", fmt::join(usages, ", "));
}

Result<std::unique_ptr<EvalService>> StartBroker(const BrokerRequest& request) {
  for (const auto& kind : Kinds()) {
    if (request.url.starts_with(kind.prefix)) return kind.start(request);
  }
  return MakeError(ErrorKind::kInvalidArgument, "--broker '{}': not a broker (known: {})", request.url, BrokerKinds());
}

}  // namespace ksmith
