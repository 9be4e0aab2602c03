# The Python client of `ksmith serve`: its pure parts, and its HTTP behaviour against a small
# in-test server that answers in the documented shapes. With KSMITH_BIN set, also against the
# real server.
import http.server
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import redirect_stdout

import pytest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
import ksmith_client as kc  # noqa: E402
from ksmith_client import KsmithClient, KsmithError, extract_code, make_reward_function, parse_sse  # noqa: E402

# -- extract_code ------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["cpp", "c++", "cuda", "python", "", "CPP"])
def test_extract_code_fence_styles(lang):
    text = f"Here it is:\n```{lang}\nint x = 1;\n```\nDone."
    assert extract_code(text) == "int x = 1;\n"


def test_extract_code_takes_last_code_block_and_skips_other_languages():
    text = ("<think>\n```cpp\ndraft();\n```\n</think>\n```cpp\nfinal();\n```\n"
            "Build it with:\n```bash\ng++ -O3 k.cc\n```\n")
    assert extract_code(text) == "final();\n"


def test_extract_code_other_fences():
    assert extract_code("~~~cuda\n__global__ void k() {}\n~~~") == "__global__ void k() {}\n"
    assert extract_code("````cpp\na\n```\nb\n````") == "a\n```\nb\n"  # a longer fence holds a shorter one
    assert extract_code("1. code:\n   ```python\n   def f():\n       return 1\n   ```") == "def f():\n    return 1\n"
    assert extract_code("```cpp\r\nint y;\r\n```\r\n") == "int y;\n"


@pytest.mark.parametrize("text", ["no code at all", "", "use ```x``` inline", "```cpp\nunclosed();\n",
                                  "```cpp\n\n```", "```json\n{}\n```", None])
def test_extract_code_none(text):
    assert extract_code(text) is None


def test_extract_code_message_lists():
    chat = [{"role": "user", "content": "```cpp\nprompt();\n```"},
            {"role": "assistant", "content": "```cpp\nfirst();\n```"},
            {"role": "assistant", "content": "ok\n```c++\nsecond();\n```"}]
    assert extract_code(chat) == "second();\n"
    assert extract_code([{"role": "assistant", "content": "nothing"}]) is None
    assert extract_code([{"role": "user", "content": "```cpp\nx;\n```"}]) is None
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "```cuda\nk();\n```"}]}]
    assert extract_code(parts) == "k();\n"
    assert extract_code({"role": "assistant", "content": "```\nplain();\n```"}) == "plain();\n"


# -- SSE ---------------------------------------------------------------------------------------

STREAM = (b": keep-alive\n\n"
          b"event: state\ndata: {\"state\": \"running\"}\n\n"
          b"event: progress\ndata: {\"line\":\ndata:  \"compiling \xe2\x9c\x93\"}\n\n"
          b"data: plain text\r\n\r\n"
          b"event: progress\r: a comment inside an event\rdata:no-space\r\r"
          b"event: nodata\n\n"
          b"event: verdict\ndata: {\"status\": \"passed\", \"reason\": \"\"}\n\n"
          b"event: cut\ndata: {\"never\": 1}\n")

EXPECTED = [("state", {"state": "running"}), ("progress", {"line": "compiling \u2713"}),
            ("message", "plain text"), ("progress", "no-space"),
            ("verdict", {"status": "passed", "reason": ""})]


def test_sse_by_lines():
    assert list(parse_sse(io.BytesIO(STREAM))) == EXPECTED


def test_sse_byte_by_byte_and_as_text():
    assert list(parse_sse(STREAM[i:i + 1] for i in range(len(STREAM)))) == EXPECTED
    assert list(parse_sse([STREAM.decode()])) == EXPECTED


def test_sse_multiline_data_keeps_newlines():
    assert list(parse_sse(["data: a\n", "data\n", "data:  b\n", "\n"])) == [("message", "a\n\n b")]


# -- a small server in the documented shapes -----------------------------------------------------


class Fake:
    """What the in-test server answers, and what it was asked."""

    def __init__(self):
        self.requests = []  # (method, path, headers, body)
        self.script = []    # (status, headers, body) answered before the defaults, first first
        self.polls = {}
        self.lock = threading.Lock()

    def answer(self, method, path, body):
        with self.lock:
            if self.script:
                return self.script.pop(0)
        if path == "/healthz":
            return 200, {}, {"status": "ok"}
        if path == "/v1/tasks":
            return 200, {}, {"tasks": [{"name": "vector_add", "category": "elementwise", "backends": ["cpu"]}]}
        if method == "POST" and path == "/v1/evaluations":
            return 202, {}, {"jobs": [{"id": "j-" + c["source"], "state": "queued", "duplicate": False}
                                      for c in body["candidates"]]}
        if method == "POST" and path == "/v1/rewards":
            if body["candidates"] and body["candidates"][0]["source"] == "slow":
                time.sleep(0.2)  # a later slice that answers first must still land in order
            return 200, {}, {"results": [_result(c, body) for c in body["candidates"]]}
        if path.endswith("/events"):
            return 200, {"Content-Type": "text/event-stream"}, STREAM
        if path.startswith("/v1/evaluations/"):
            jid = path.rsplit("/", 1)[1]
            with self.lock:
                n = self.polls[jid] = self.polls.get(jid, 0) + 1
            if jid == "j-never" or n < 3:
                return 200, {}, {"id": jid, "state": "queued" if n == 1 else "running"}
            return 200, {}, {"id": jid, "state": "done", "verdict": {"status": "passed", "source": jid[2:]}}
        return 404, {}, {"error": {"code": "not_found", "message": f"no {path}", "where": ""}}


def _result(cand, body):
    task = cand.get("task", body.get("task"))
    reward = float(cand["source"].split(":")[-1]) if ":" in cand["source"] else 1.0
    return {"id": "j-" + cand["source"], "reward": reward, "reward_parts": {}, "status": "passed",
            "verdict": {"status": "passed", "task": task}}


@pytest.fixture
def server():
    fake = Fake()

    class Handler(http.server.BaseHTTPRequestHandler):
        def _do(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n)) if n else None
            with fake.lock:
                fake.requests.append((self.command, self.path, dict(self.headers), body))
            status, headers, reply = fake.answer(self.command, self.path, body)
            raw = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
            self.send_response(status)
            headers.setdefault("Content-Type", "application/json")
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = _do

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield fake
    httpd.shutdown()
    httpd.server_close()


def client_for(fake, **kw):
    c = KsmithClient(fake.url, **kw)
    c.slept = []
    c._sleep = c.slept.append  # record the waits instead of taking them
    return c


def test_health_tasks_and_bearer(server, monkeypatch):
    monkeypatch.setenv("KSMITH_SERVE_TOKEN", "s3cret")
    c = client_for(server)
    assert c.health()["status"] == "ok"
    assert [t["name"] for t in c.tasks()] == ["vector_add"]
    (_, _, h1, _), (_, _, h2, _) = server.requests
    assert "Authorization" not in h1  # /healthz needs none
    assert h2["Authorization"] == "Bearer s3cret"
    monkeypatch.delenv("KSMITH_SERVE_TOKEN")
    client_for(server).tasks()
    assert "Authorization" not in server.requests[-1][2]
    client_for(server, token="given").tasks()
    assert server.requests[-1][2]["Authorization"] == "Bearer given"


def test_retries_503_with_retry_after_then_429(server):
    busy = {"error": {"code": "busy", "message": "queue full", "where": ""}}
    server.script = [(503, {"Retry-After": "2"}, busy), (429, {}, busy)]
    c = client_for(server)
    assert c.tasks()[0]["name"] == "vector_add"
    assert len(server.requests) == 3
    assert c.slept[0] == 2.0  # Retry-After honoured
    assert 0 < c.slept[1] <= 0.5  # no Retry-After: a short backoff


def test_retries_are_bounded_by_count_and_time(server):
    busy = (503, {"Retry-After": "0"}, {"error": {"code": "busy", "message": "queue full", "where": ""}})
    server.script = [busy] * 10
    c = client_for(server, retries=2)
    with pytest.raises(KsmithError) as e:
        c.tasks()
    assert (e.value.status, e.value.code, e.value.message) == (503, "busy", "queue full")
    assert len(server.requests) == 3
    server.requests.clear()
    server.script = [(503, {"Retry-After": "600"}, busy[2])]
    with pytest.raises(KsmithError):
        client_for(server, retry_max_s=30).tasks()  # a wait past the time bound is not taken
    assert len(server.requests) == 1


def test_connection_errors_are_retried():
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = KsmithClient(f"http://127.0.0.1:{port}", retries=3)
    c.slept = []
    c._sleep = c.slept.append
    with pytest.raises(KsmithError) as e:
        c.health()
    assert e.value.status == 0 and e.value.code == "unreachable"
    assert len(c.slept) == 3


def test_errors_carry_the_servers_message(server):
    server.script = [(400, {}, {"error": {"code": "bad_request", "message": "unknown task 'sofmax'",
                                          "where": "candidates[0].task"}}),
                     (500, {"Content-Type": "text/plain"}, b"boom")]
    c = client_for(server)
    with pytest.raises(KsmithError) as e:
        c.submit("src", task="sofmax", backend="cpu")
    assert (e.value.status, e.value.code, e.value.where) == (400, "bad_request", "candidates[0].task")
    assert "unknown task 'sofmax'" in str(e.value)
    with pytest.raises(KsmithError) as e:
        c.get("j-1")
    assert (e.value.status, e.value.message) == (500, "boom")
    assert len(server.requests) == 2 and not c.slept  # neither is retried


def test_rewards_504_lists_the_unfinished_jobs(server):
    server.script = [(504, {}, {"error": {"code": "wait_timeout", "message": "not done in 1 s", "where": ""},
                                "jobs": ["j-a"]})]
    with pytest.raises(KsmithError) as e:
        client_for(server).rewards(["a"], task="t", wait_s=1)
    assert e.value.status == 504 and e.value.jobs == ["j-a"]


def test_submit_defaults_and_candidates(server):
    c = client_for(server)
    jobs = c.submit(["a", {"source": "b", "task": "relu", "client_id": "mine"}], task="softmax",
                    backend="cpu", format=None, options={"seeds": 1})
    assert [j["id"] for j in jobs] == ["j-a", "j-b"]
    body = server.requests[0][3]
    assert (body["task"], body["backend"], body["options"]) == ("softmax", "cpu", {"seeds": 1})
    assert "format" not in body  # None means not given
    a, b = body["candidates"]
    assert a["source"] == "a" and "task" not in a and a["client_id"]
    assert b["task"] == "relu" and b["client_id"] == "mine"


def test_batches_split_and_keep_order(server):
    c = client_for(server, max_batch=3)
    sources = ["slow"] + [f"s{i}:{i}" for i in range(1, 8)]
    results = c.rewards(sources, task="vector_add", backend="cpu")
    assert [r["id"] for r in results] == ["j-" + s for s in sources]
    sizes = sorted(len(r[3]["candidates"]) for r in server.requests)
    assert sizes == [2, 3, 3]
    assert all(r[3]["wait_s"] == 3600 and r[3]["task"] == "vector_add" for r in server.requests)
    server.requests.clear()
    assert [j["id"] for j in c.submit(sources, task="t", max_batch=5)] == ["j-" + s for s in sources]
    assert len(server.requests) == 2


def test_wait_evaluate_and_events(server):
    c = client_for(server)
    verdicts = c.evaluate(["x", "y"], task="t", backend="cpu", poll_s=0.01)
    assert [v["source"] for v in verdicts] == ["x", "y"]
    assert c.slept == [0.01, 0.01]
    with pytest.raises(KsmithError) as e:
        c.wait(["j-x", "j-never"], poll_s=0.01, timeout_s=0.05)
    assert e.value.code == "timeout" and e.value.jobs == ["j-never"]
    assert list(c.events("j-x")) == EXPECTED  # stops at the verdict: "cut" never comes


def test_reward_function(server):
    c = client_for(server)
    reward = kc.make_reward_function(c, task="softmax", backend="cpu", failure_reward=-1.0)
    assert reward.__name__ == "ksmith_reward"
    completions = [
        "```cpp\na:0.5\n```",
        "I could not do it.",
        [{"role": "assistant", "content": "```cuda\nb:2.25\n```"}],
        [{"role": "assistant", "content": "no code"}],
        "```c++\nc\n```",
    ]
    rewards = reward(completions, prompts=["p"] * 5, task=["relu", "x", None, "y", "gelu"],
                     completion_ids=[[1]] * 5)
    assert rewards == [0.5, -1.0, 2.25, -1.0, 1.0]
    assert all(isinstance(r, float) for r in rewards)
    assert len(server.requests) == 1
    sent = server.requests[0][3]["candidates"]
    assert [(s["source"], s["task"], s["backend"]) for s in sent] == [
        ("a:0.5\n", "relu", "cpu"), ("b:2.25\n", "softmax", "cpu"), ("c\n", "gelu", "cpu")]
    assert reward(["nothing here"]) == [-1.0] and len(server.requests) == 1


def test_compute_score(server, monkeypatch):
    monkeypatch.setenv("KSMITH_SERVE_URL", server.url)
    assert kc.compute_score("ksmith", "```cpp\nk:3.5\n```", "softmax", {"task": "relu"}) == 3.5
    assert kc.compute_score("ksmith", "```cpp\nk:1.5\n```", "softmax") == 1.5
    assert kc.compute_score("ksmith", "no code", "softmax") == 0.0
    tasks = [(r[3]["candidates"][0]["task"], r[3]["candidates"][0]["backend"]) for r in server.requests]
    assert tasks == [("relu", "cuda"), ("softmax", "cuda")]


def test_command_line(server, tmp_path):
    k = tmp_path / "kernel.cc"
    k.write_text("k")
    out = io.StringIO()
    with redirect_stdout(out):
        rc = kc.main(["--url", server.url, "--task", "vector_add", "--backend", "cpu", "--no-time",
                      "--reward", str(k)])
    assert rc == 0 and json.loads(out.getvalue())["reward"] == 1.0
    cand = server.requests[0][3]
    assert cand["options"] == {"time": False} and cand["candidates"][0]["file_name"] == "kernel.cc"


# -- the real server -----------------------------------------------------------------------------

HONEST = """#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
"""


@pytest.mark.skipif(not os.environ.get("KSMITH_BIN"), reason="set KSMITH_BIN to a built ksmith to test the real server")
def test_live_server(tmp_path):
    port_file, log = tmp_path / "port", open(tmp_path / "serve.log", "wb")
    proc = subprocess.Popen([os.environ["KSMITH_BIN"], "serve", "--listen", "127.0.0.1:0", "--no-auth",
                             "--backend", "cpu", "--port-file", str(port_file), "--db", str(tmp_path / "runs.db")],
                            stdout=log, stderr=log)

    def server_log():
        log.flush()
        return (tmp_path / "serve.log").read_text(errors="replace")[-4000:]

    try:
        port, deadline = None, time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            assert proc.poll() is None, f"ksmith serve exited with {proc.returncode}:\n{server_log()}"
            text = port_file.read_text().strip() if port_file.exists() else ""
            if text.rsplit(":", 1)[-1].isdigit():
                port = int(text.rsplit(":", 1)[-1])
            else:
                time.sleep(0.05)
        assert port, f"no port in {port_file} after 30 s:\n{server_log()}"
        c = KsmithClient(f"http://127.0.0.1:{port}", token="", timeout_s=600)
        assert c.health()["status"] == "ok"
        assert "vector_add" in [t["name"] for t in c.tasks()]
        opts = {"seeds": 1, "time": False}
        [verdict] = c.evaluate(HONEST, task="vector_add", backend="cpu", options=opts, poll_s=0.2)
        assert verdict["status"] == "passed", verdict
        wrong = HONEST.replace("a[i] + b[i]", "a[i] - b[i]")
        good, bad = c.rewards([HONEST, wrong], task="vector_add", backend="cpu", options=opts)
        assert good["reward"] > 0, good
        assert bad["reward"] == 0.0 and bad["status"] == "wrong_output", bad
        # TRL's shape: completions in, floats out; a completion without code costs no request.
        reward = make_reward_function(c, task="vector_add", backend="cpu", options=opts)
        scores = reward([f"Here it is:\n```cpp\n{HONEST}```", "I cannot write this kernel."])
        assert len(scores) == 2 and scores[0] > 0 and scores[1] == 0.0, scores
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
