// `ksmith serve`'s HTTP face (cpp-httplib): ksmith's own API under /v1, KernelGYM's /evaluate,
// /status and /results, /healthz and /metrics. Every error is a JSON body (server/api_error.h).
// A bearer token guards everything but /healthz; a slow or silent client is dropped after the read
// timeout, never holding the server.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"
#include "server/serve_core.h"

namespace httplib {
class Server;
}

namespace ksmith {

struct HttpServerConfig {
  std::string host = "127.0.0.1";
  int port = 8080;                 // 0: any free port (port() says which)
  std::string token;               // empty: no authentication (loopback only, checked by the caller)
  size_t body_bytes = size_t{16} << 20;
  int read_timeout_s = 10;         // a client that sends nothing for this long is dropped
  size_t threads = 64;             // requests served at once (a reward request holds one while it waits)
  size_t event_streams = 32;       // event streams open at once
  size_t reward_waits = 48;        // POST /v1/rewards requests waiting at once (each holds a thread)
  double max_wait_s = 3600;        // the longest a /v1/rewards request may wait
  /// The backend KernelGYM's "cuda" and "triton" map to (the server's GPU backend); empty: the
  /// server's first.
  std::string kernelgym_backend;
};

class HttpServer {
 public:
  /// Binds and starts serving on a thread of its own; fails when the address cannot be bound.
  static Result<std::unique_ptr<HttpServer>> Start(HttpServerConfig config, ServeCore& core);
  /// Stops listening and waits for the handlers to end.
  ~HttpServer();
  int port() const { return port_; }
  void Stop();

 private:
  HttpServer(HttpServerConfig config, ServeCore& core);
  void Routes();

  HttpServerConfig config_;
  ServeCore& core_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<size_t> open_streams_{0};
  std::atomic<size_t> open_waits_{0};
};

/// Whether `host` names this machine's loopback only ("127.0.0.1", "::1", "localhost").
bool IsLoopbackHost(const std::string& host);

}  // namespace ksmith
