#include "llm/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "core/strings.h"

namespace ksmith {
namespace {

// curl_global_init is not thread-safe and must run before any other curl call; call_once makes
// the first HttpPost, from whichever thread, do it exactly once.
void InitializeCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using HeaderList = std::unique_ptr<curl_slist, SlistDeleter>;

bool Append(HeaderList& list, const std::string& line) {
  curl_slist* head = curl_slist_append(list.get(), line.c_str());
  if (head == nullptr) return false;
  (void)list.release();  // `head` is the same list, grown, or a new one when it was empty
  list.reset(head);
  return true;
}

// What the callbacks fill while curl runs.
struct Transfer {
  HttpResponse response;
  size_t max_body_bytes = 0;
  bool body_too_large = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  if (transfer->response.body.size() + bytes > transfer->max_body_bytes) {
    transfer->body_too_large = true;
    return 0;  // anything but `bytes` makes curl abort with CURLE_WRITE_ERROR
  }
  transfer->response.body.append(data, bytes);
  return bytes;
}

size_t OnHeaderLine(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  const std::string_view line(data, bytes);
  // A status line starts a new header block (after "100 Continue"): only the last one counts.
  if (line.starts_with("HTTP/")) {
    transfer->response.headers.clear();
    return bytes;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  std::string name(Trim(line.substr(0, colon)));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  transfer->response.headers[name] = std::string(Trim(line.substr(colon + 1)));
  return bytes;
}

}  // namespace

Result<HttpResponse> HttpPost(const std::string& url, const HttpHeaders& headers, std::string_view body,
                              std::chrono::milliseconds connect_timeout, std::chrono::milliseconds total_timeout,
                              size_t max_response_bytes) {
  InitializeCurlOnce();
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (!easy) return MakeError(ErrorKind::kInternal, "POST {}: curl_easy_init failed", url);

  HeaderList header_list;
  for (const auto& [name, value] : headers) {
    if (!Append(header_list, name + ": " + value)) {
      return MakeError(ErrorKind::kInternal, "POST {}: out of memory building the headers", url);
    }
  }
  // Without this curl sends "Expect: 100-continue" for large bodies and waits a second for it.
  if (!Append(header_list, "Expect:")) {
    return MakeError(ErrorKind::kInternal, "POST {}: out of memory building the headers", url);
  }

  Transfer transfer;
  transfer.max_body_bytes = max_response_bytes;
  char curl_message[CURL_ERROR_SIZE] = {};
  CURL* handle = easy.get();
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_POST, 1L);
  curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, header_list.get());
  // Signals (curl's DNS timeouts) are process-wide and unsafe with threads.
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout.count()));
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(total_timeout.count()));
  // A reply may take minutes to generate: keep idle NAT and load-balancer entries alive meanwhile.
  curl_easy_setopt(handle, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");  // decoded bytes count towards the cap
  curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(max_response_bytes));
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &OnHeaderLine);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, curl_message);

  const CURLcode code = curl_easy_perform(handle);
  const std::string reason = curl_message[0] != '\0' ? curl_message : curl_easy_strerror(code);
  if (transfer.body_too_large || code == CURLE_FILESIZE_EXCEEDED) {
    return MakeError(ErrorKind::kProtocol, "POST {}: the answer exceeds the limit of {} bytes", url,
                     max_response_bytes);
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return MakeError(ErrorKind::kTimeout, "POST {}: timed out (limits: connect {} ms, total {} ms): {}", url,
                     connect_timeout.count(), total_timeout.count(), reason);
  }
  if (code != CURLE_OK) return MakeError(ErrorKind::kIo, "POST {}: no answer: {}", url, reason);
  long status = 0;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  transfer.response.status = static_cast<int>(status);
  return std::move(transfer.response);
}

}  // namespace ksmith
