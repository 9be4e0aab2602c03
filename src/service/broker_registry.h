// Where a command's jobs go: the one place that names the brokers. `local` runs them on this
// machine's devices (LocalEvalService); `redis://HOST:PORT[/PREFIX]` queues them on Redis Streams
// for `ksmith worker` processes on any host (RedisEvalService). Adding a broker is its folder and
// one entry in broker_registry.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "service/eval_service.h"
#include "service/service_setup.h"

namespace ksmith {

struct BrokerRequest {
  std::string url = "local";
  LocalServiceRequest local;  // the devices of a local broker; its backend is what a remote one's workers run
};

/// Starts the broker `request.url` names; kInvalidArgument lists the kinds for an unknown one.
Result<std::unique_ptr<EvalService>> StartBroker(const BrokerRequest& request);

/// "local, redis://HOST[:PORT][/PREFIX]": for --help and errors.
std::string BrokerKinds();

}  // namespace ksmith
