#include "server/http_server.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <httplib.h>

#include "core/json_text.h"
#include "server/kernelgym_api.h"

namespace ksmith {
namespace {

using json = nlohmann::json;

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(JsonText(body), "application/json");
}

void ReplyError(httplib::Response& res, const ApiError& error) {
  Reply(res, error.http_status, error.ToJson());
  if (error.http_status == 429 || error.http_status == 503) res.set_header("Retry-After", "5");
}

// The body as JSON; a malformed one is a 400 that says where it broke.
std::optional<json> ParseBody(const httplib::Request& req, httplib::Response& res) {
  try {
    return json::parse(req.body);
  } catch (const json::parse_error& error) {
    ReplyError(res, BadRequest("", fmt::format("the body is not valid JSON: {}", error.what())));
    return std::nullopt;
  }
}

// Who a request counts against: the X-Ksmith-Client header where it is a plain name.
std::string ClientOf(const httplib::Request& req) {
  const std::string client = req.get_header_value("X-Ksmith-Client");
  return IsPlainName(client) ? client : std::string("default");
}

bool SameToken(const std::string& given, const std::string& expected) {
  // Compared in time that does not depend on where they differ.
  return given.size() == expected.size() && CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

json JobsJson(const std::vector<SubmittedJob>& jobs, JobTable& table) {
  json list = json::array();
  for (const auto& job : jobs) {
    const auto record = table.Get(job.id);
    list.push_back({{"id", job.id},
                    {"state", record ? JobStateName(record->state) : "done"},
                    {"duplicate", job.duplicate}});
  }
  return {{"jobs", list}};
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost" || host.starts_with("127.");
}

HttpServer::HttpServer(HttpServerConfig config, ServeCore& core)
    : config_(std::move(config)), core_(core), server_(std::make_unique<httplib::Server>()) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerConfig config, ServeCore& core) {
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(config), core));
  httplib::Server& http = *server->server_;
  const size_t threads = server->config_.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(server->config_.body_bytes);
  http.set_read_timeout(server->config_.read_timeout_s, 0);
  http.set_write_timeout(server->config_.read_timeout_s, 0);
  http.set_keep_alive_timeout(5);
  server->Routes();
  const std::string& host = server->config_.host;
  if (server->config_.port == 0) {
    server->port_ = http.bind_to_any_port(host);
    if (server->port_ <= 0) return MakeError(ErrorKind::kIo, "cannot listen on {} (any port)", host);
  } else {
    if (!http.bind_to_port(host, server->config_.port)) {
      return MakeError(ErrorKind::kIo, "cannot listen on {}:{} (in use, or not an address of this machine); choose "
                                       "another with --listen HOST:PORT", host, server->config_.port);
    }
    server->port_ = server->config_.port;
  }
  server->thread_ = std::thread([raw = server.get()] { raw->server_->listen_after_bind(); });
  // stop() does nothing before the loop runs: a Stop() right after Start() would wait for ever.
  for (int i = 0; i < 500 && !http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return server;
}

void HttpServer::Routes() {
  httplib::Server& http = *server_;
  using Handled = httplib::Server::HandlerResponse;

  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Before any body is read: httplib holds the body limit only against a Content-Length, and
    // inflates compressed bodies without one, so a body must come plain, with its length.
    if (req.has_header("Transfer-Encoding")) {
      ReplyError(res, {411, "length_required", "send the body with a Content-Length, not chunked", ""});
      return Handled::Handled;
    }
    if (const std::string encoding = req.get_header_value("Content-Encoding"); !encoding.empty() && encoding != "identity") {
      ReplyError(res, {415, "unsupported_encoding",
                       fmt::format("Content-Encoding '{}': send the body uncompressed", encoding), ""});
      return Handled::Handled;
    }
    if (req.path == "/healthz" && req.method != "GET" && req.method != "HEAD") {
      ReplyError(res, {405, "method_not_allowed", "/healthz answers GET", ""});
      return Handled::Handled;
    }
    if (config_.token.empty() || req.path == "/healthz") return Handled::Unhandled;
    const std::string header = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (!header.starts_with(prefix) || !SameToken(header.substr(prefix.size()), config_.token)) {
      ReplyError(res, {401, "unauthorized",
                       header.empty() ? "no Authorization header: send 'Authorization: Bearer <token>' with the "
                                        "server's KSMITH_SERVE_TOKEN"
                                      : "the bearer token is not this server's (KSMITH_SERVE_TOKEN)",
                       ""});
      res.set_header("WWW-Authenticate", "Bearer");
      return Handled::Handled;
    }
    return Handled::Unhandled;
  });
  // httplib's own refusals (no route, a body past the limit) get the same JSON error shape.
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      ReplyError(res, {413, "too_large",
                       fmt::format("the body is over this server's limit of {} bytes (a source may have at most {})",
                                   config_.body_bytes, core_.config().limits.source_bytes),
                       ""});
    } else if (res.status == 404) {
      ReplyError(res, {404, "no_route", fmt::format("no route {} {}: see docs/serve.md", req.method, req.path), ""});
    } else {
      ReplyError(res, {res.status, "http_error", fmt::format("HTTP {} for {} {}", res.status, req.method, req.path), ""});
    }
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
    std::string what = "unknown";
    try {
      if (error) std::rethrow_exception(error);
    } catch (const std::exception& caught) {
      what = caught.what();
    } catch (...) {
    }
    ReplyError(res, {500, "internal", fmt::format("ksmith serve failed on this request: {}", what), ""});
  });

  http.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    const JobCounts counts = core_.table().Counts();
    Reply(res, 200, {{"status", core_.accepting() ? "ok" : "stopping"},
                     {"backends", core_.config().backends},
                     {"jobs", {{"queued", counts.queued}, {"running", counts.running}}}});
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(core_.MetricsText(), "text/plain; version=0.0.4");
  });
  http.Get("/v1/tasks", [this](const httplib::Request&, httplib::Response& res) {
    auto listed = core_.tasks().List();
    if (!listed.ok()) return ReplyError(res, {500, "tasks_unreadable", listed.error().message, ""});
    json tasks = json::array();
    for (const auto& entry : *listed) {
      tasks.push_back({{"name", entry.name}, {"category", entry.category}, {"backends", core_.config().backends}});
    }
    Reply(res, 200, {{"tasks", tasks}});
  });

  // The body is parsed once, by the route; this queues its candidates.
  auto submit = [this](const httplib::Request& req, const json& body,
                       httplib::Response& res) -> std::optional<std::vector<SubmittedJob>> {
    std::vector<CandidateRequest> candidates;
    if (auto error = ParseCandidates(body, core_.config().limits, candidates)) {
      ReplyError(res, *error);
      return std::nullopt;
    }
    auto submitted = core_.Submit(ClientOf(req), candidates);
    if (auto* error = std::get_if<ApiError>(&submitted)) {
      ReplyError(res, *error);
      return std::nullopt;
    }
    return std::get<std::vector<SubmittedJob>>(std::move(submitted));
  };
  http.Post("/v1/evaluations", [this, submit](const httplib::Request& req, httplib::Response& res) {
    const auto body = ParseBody(req, res);
    if (!body) return;
    if (auto jobs = submit(req, *body, res)) Reply(res, 202, JobsJson(*jobs, core_.table()));
  });
  http.Post("/v1/rewards", [this, submit](const httplib::Request& req, httplib::Response& res) {
    const auto body = ParseBody(req, res);
    if (!body) return;
    double wait_s = config_.max_wait_s;
    if (body->is_object() && body->contains("wait_s")) {
      const json& wait = (*body)["wait_s"];
      if (!wait.is_number() || wait.get<double>() <= 0) {
        return ReplyError(res, BadRequest("wait_s", "wait_s must be a number of seconds above 0"));
      }
      wait_s = std::min(wait_s, wait.get<double>());
    }
    // Each waiting request holds a thread: some are kept for everything else.
    if (open_waits_.fetch_add(1) >= config_.reward_waits) {
      open_waits_.fetch_sub(1);
      return ReplyError(res, {429, "busy", fmt::format("{} reward requests are waiting, this server's limit; submit "
                                                       "with POST /v1/evaluations and poll instead", config_.reward_waits), ""});
    }
    struct Leave {
      std::atomic<size_t>& count;
      ~Leave() { count.fetch_sub(1); }
    } leave{open_waits_};
    auto jobs = submit(req, *body, res);
    if (!jobs) return;
    std::vector<std::string> ids;
    for (const auto& job : *jobs) ids.push_back(job.id);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000));
    if (!core_.table().WaitDone(ids, deadline)) {
      json error = ApiError{504, "not_done", fmt::format("not every verdict came within wait_s = {} s; the jobs go on: "
                                                         "ask for them by id", wait_s), ""}.ToJson();
      error["jobs"] = ids;
      return Reply(res, 504, error);
    }
    json results = json::array();
    for (const auto& id : ids) {
      const auto job = core_.table().Get(id);
      if (!job) {
        results.push_back({{"id", id}, {"reward", nullptr}, {"status", "forgotten"}, {"verdict", nullptr}});
        continue;
      }
      const Reward reward = core_.RewardOf(job->verdict);
      results.push_back({{"id", id}, {"reward", reward.value}, {"reward_parts", reward.parts},
                         {"status", job->verdict.value("status", std::string())}, {"verdict", job->verdict}});
    }
    Reply(res, 200, {{"results", results}, {"rule", core_.config().reward.ToJson()}});
  });
  http.Get(R"(/v1/evaluations/([A-Za-z0-9_-]{1,64}))", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (const auto job = core_.table().Get(id)) return Reply(res, 200, job->ToJson());
    // Finished long ago or before a restart: the run store has every job this store's servers took.
    auto stored = core_.runs().StoredJob(id);
    if (!stored.ok()) return ReplyError(res, {500, "store_unreadable", stored.error().message, ""});
    if (!stored->has_value()) {
      return ReplyError(res, {404, "unknown_job", fmt::format("no job '{}' on this server or in its run store", id), ""});
    }
    // "unfinished": a server stopped before its verdict came and nobody gave one since.
    Reply(res, 200, **stored);
  });
  http.Get(R"(/v1/evaluations/([A-Za-z0-9_-]{1,64})/events)", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (!core_.table().Get(id)) {
      return ReplyError(res, {404, "unknown_job", fmt::format("no job '{}' on this server", id), ""});
    }
    if (open_streams_.fetch_add(1) >= config_.event_streams) {
      open_streams_.fetch_sub(1);
      return ReplyError(res, {429, "busy", fmt::format("{} event streams are open, this server's limit; poll "
                                                       "GET /v1/evaluations/{} instead", config_.event_streams, id), ""});
    }
    auto next = std::make_shared<size_t>(0);
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, id, next](size_t, httplib::DataSink& sink) {
          bool done = false;
          const auto events = core_.table().EventsFrom(id, *next, std::chrono::seconds(15), done);
          if (!events) {
            sink.done();
            return true;
          }
          if (done && events->empty()) {  // the verdict went out last time
            sink.done();
            return true;
          }
          std::string text;
          for (const auto& event : *events) text += fmt::format("event: {}\ndata: {}\n\n", event.kind, JsonText(event.data));
          *next += events->size();
          if (text.empty()) text = ": keep-alive\n\n";  // a comment: tells a proxy the stream lives
          return sink.write(text.data(), text.size());
        },
        [this](bool) { open_streams_.fetch_sub(1); });
  });

  // KernelGYM's endpoints. Its task_id is the job's client_id in a namespace of its own.
  auto gym_client = [](const httplib::Request& req) { return "kernelgym." + ClientOf(req); };
  http.Post("/evaluate", [this, gym_client](const httplib::Request& req, httplib::Response& res) {
    const auto body = ParseBody(req, res);
    if (!body) return;
    KernelGymRequest gym;
    if (auto error = ParseKernelGymRequest(*body, core_.config().limits, gym)) return ReplyError(res, *error);
    const std::string client = gym_client(req);
    if (!gym.force_refresh) {
      if (const auto earlier = core_.table().FindByClientId(client, gym.task_id)) {
        if (const auto job = core_.table().Get(*earlier)) {
          return Reply(res, 200, KernelGymResultResponse(gym.task_id, *job, gym.not_followed));
        }
      }
    }
    auto task = core_.tasks().FromReference(gym.reference_code);
    if (!task.ok()) {
      return ReplyError(res, {task.error().kind == ErrorKind::kInvalidArgument ? 422 : 500, "reference_unusable",
                              task.error().message, "reference_code"});
    }
    CandidateRequest candidate;
    candidate.task = (*task)->name;
    candidate.backend = config_.kernelgym_backend;
    candidate.format = "kernelbench";
    candidate.file_name = "kernel.py";
    candidate.source = gym.kernel_code;
    candidate.client_id = gym.task_id;
    // ksmith's checks never go below its own; more correctness trials than its seeds raise them.
    candidate.options.seeds = std::max(3, (gym.num_correct_trials + 1) / 2);
    auto submitted = core_.SubmitResolved(client, candidate, *task, gym.force_refresh);
    if (auto* error = std::get_if<ApiError>(&submitted)) return ReplyError(res, *error);
    const auto job = core_.table().Get(std::get<SubmittedJob>(submitted).id);
    if (!job) return ReplyError(res, {500, "internal", "the job was accepted and then lost", ""});
    Reply(res, 200, KernelGymResultResponse(gym.task_id, *job, gym.not_followed));
  });
  auto gym_job = [this, gym_client](const httplib::Request& req, httplib::Response& res) -> std::optional<JobRecord> {
    const std::string task_id = req.matches[1];
    const auto id = core_.table().FindByClientId(gym_client(req), task_id);
    const auto job = id ? core_.table().Get(*id) : std::nullopt;
    if (!job) ReplyError(res, {404, "not_found", fmt::format("Task {} not found", task_id), ""});
    return job;
  };
  http.Get(R"(/status/(.{1,100}))", [gym_job](const httplib::Request& req, httplib::Response& res) {
    if (const auto job = gym_job(req, res)) Reply(res, 200, KernelGymStatusResponse(req.matches[1], *job));
  });
  http.Get(R"(/results/(.{1,100}))", [gym_job](const httplib::Request& req, httplib::Response& res) {
    if (const auto job = gym_job(req, res)) Reply(res, 200, KernelGymResultResponse(req.matches[1], *job));
  });
}

}  // namespace ksmith
