"""Client for `ksmith serve`, the kernel evaluation and reward service (Python stdlib only).

    from ksmith_client import KsmithClient, extract_code, make_reward_function

    client = KsmithClient("http://127.0.0.1:8080")        # token: $KSMITH_SERVE_TOKEN
    print(client.health(), [t["name"] for t in client.tasks()])
    src = open("softmax.cc").read()
    [verdict] = client.evaluate(src, task="softmax", backend="cpu")
    print(verdict["status"], verdict.get("speedup"))
    results = client.rewards([src, src2], task="softmax", backend="cpu")   # one POST per 256
    reward = make_reward_function(client, task="softmax", backend="cuda")  # TRL reward_funcs
    reward(["```cpp\\n...kernel...\\n```", "no code here"])                # -> [1.7, 0.0]

From the shell: `python3 ksmith_client.py --url URL --task softmax --backend cpu kernel.cc`
prints the verdict as JSON (`--reward` prints the reward results instead). verl's
`custom_reward_function` can point at this file with name `compute_score` (or
`compute_score_batch` with `reward_model.reward_manager=batch`).
"""

import argparse
import codecs
import concurrent.futures
import http.client
import json
import os
import random
import re
import socket
import sys
import time
import urllib.error
import urllib.request
import uuid

__all__ = ["KsmithClient", "KsmithError", "extract_code", "parse_sse", "make_reward_function",
           "compute_score", "compute_score_batch"]

DEFAULT_URL = "http://127.0.0.1:8080"


class KsmithError(Exception):
    """An error reply from the server (or none at all: status 0), with the server's own words."""

    def __init__(self, status, code, message, where="", jobs=None):
        self.status, self.code, self.message, self.where = status, code, message, where or ""
        self.jobs = jobs or []  # the job ids a 504 from /v1/rewards left unfinished
        at = f" at {self.where}" if self.where else ""
        super().__init__(f"ksmith {status} {code}: {message}{at}")


_EOL = re.compile(r"\r\n|\r|\n")


def _iter_lines(chunks):
    """Split str/bytes chunks into lines on \\r\\n, \\n or \\r, even across chunk boundaries."""
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode  # a character may straddle chunks
    buf = ""
    for chunk in chunks:
        buf += decode(chunk) if isinstance(chunk, (bytes, bytearray)) else chunk
        hold = buf.endswith("\r")  # maybe the first half of a \r\n
        lines = _EOL.split(buf[:-1] if hold else buf)
        buf = lines.pop() + ("\r" if hold else "")
        yield from lines
    if buf.endswith("\r"):
        yield buf[:-1]
    # A last line without its terminator cannot end an event, so it is dropped with it.


def parse_sse(chunks):
    """Yield (event, data) from a text/event-stream given as str/bytes chunks (lines or not).

    Follows the HTML standard's rules: `:` comments, multi-line `data:` joined by newlines,
    events dispatched at a blank line, none without data, an unfinished last event dropped.
    Data that is JSON comes back decoded, else as a string.
    """
    event, data, first = "", [], True
    for line in _iter_lines(chunks):
        if first and line.startswith("\ufeff"):
            line = line[1:]
        first = False
        if line == "":
            if data:
                text = "\n".join(data)
                try:
                    value = json.loads(text)
                except ValueError:
                    value = text
                yield event or "message", value
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
        # id and retry matter only for reconnecting, which events() does not do.


class KsmithClient:
    """Talks to one `ksmith serve`.

    Retries connection failures, 429 and 503 up to `retries` times within `retry_max_s` seconds,
    waiting as Retry-After says or else backing off exponentially (with jitter). Candidates
    submitted without a `client_id` get a fresh one so that a retried POST cannot queue a job twice.
    """

    def __init__(self, url=DEFAULT_URL, token=None, timeout_s=3600, retries=5, retry_max_s=120.0,
                 max_batch=256, parallel_batches=4, auto_client_id=True):
        self.url = url.rstrip("/")
        self.token = os.environ.get("KSMITH_SERVE_TOKEN") if token is None else token
        self.timeout_s = timeout_s
        self.retries, self.retry_max_s = retries, retry_max_s
        self.max_batch, self.parallel_batches = max(1, max_batch), max(1, parallel_batches)
        self.auto_client_id = auto_client_id
        self._sleep = time.sleep  # tests replace it to see the waits without taking them

    # -- HTTP ------------------------------------------------------------------------------

    def _open(self, method, path, body=None, auth=True, timeout=None, stream=False):
        """One request with retries; the decoded JSON reply, or the open response if `stream`."""
        headers = {"Accept": "text/event-stream" if stream else "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if auth and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        deadline = time.monotonic() + self.retry_max_s
        attempt = 0
        while True:
            req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
            wait = None
            try:
                # Plain calls answer at once; only rewards and event streams pass a long timeout.
                resp = urllib.request.urlopen(req, timeout=timeout or min(self.timeout_s, 300))
                if stream:
                    return resp
                with resp:
                    raw = resp.read()
                try:
                    return json.loads(raw) if raw else {}
                except ValueError:
                    raise KsmithError(resp.status, "bad_reply", f"{method} {path}: not JSON: {raw[:200]!r}") from None
            except urllib.error.HTTPError as e:
                err = _error_from(e)
                if e.code not in (429, 503):
                    raise err from None
                wait = _retry_after(e.headers.get("Retry-After"))
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError) as e:
                reason = getattr(e, "reason", e)
                if isinstance(reason, (socket.timeout, TimeoutError)):
                    # A request that ran out its time is not retried: it may have been a long wait.
                    raise KsmithError(0, "timeout", f"{method} {self.url}{path}: {reason}") from None
                err = KsmithError(0, "unreachable", f"{method} {self.url}{path}: {reason}")
            except (socket.timeout, TimeoutError) as e:
                raise KsmithError(0, "timeout", f"{method} {self.url}{path}: {e}") from None
            if wait is None:
                wait = min(30.0, 0.25 * 2 ** attempt) * (0.5 + random.random() / 2)
            attempt += 1
            if attempt > self.retries or time.monotonic() + wait > deadline:
                raise err
            self._sleep(wait)

    def _batched(self, path, candidates, defaults, key, timeout=None, max_batch=None):
        """POST the candidates in slices of max_batch, a few at once; replies joined in order."""
        cands = _normalize(candidates)
        if self.auto_client_id:
            for c in cands:
                c.setdefault("client_id", uuid.uuid4().hex)
        top = {k: v for k, v in defaults.items() if v is not None}
        n = max(1, max_batch or self.max_batch)
        slices = [cands[i:i + n] for i in range(0, len(cands), n)]

        def post(part):
            reply = self._open("POST", path, dict(top, candidates=part), timeout=timeout)
            got = reply.get(key)
            if not isinstance(got, list) or len(got) != len(part):
                raise KsmithError(0, "bad_reply", f"{path} answered {len(got or [])} {key} for {len(part)}")
            return got

        if len(slices) <= 1:
            return post(slices[0]) if slices else []
        with concurrent.futures.ThreadPoolExecutor(min(self.parallel_batches, len(slices))) as pool:
            return [item for part in pool.map(post, slices) for item in part]

    # -- API -------------------------------------------------------------------------------

    def health(self):
        """GET /healthz: {"status": "ok", ...}."""
        return self._open("GET", "/healthz", auth=False)

    def tasks(self):
        """GET /v1/tasks: a list of {"name", "category", "backends"}."""
        return self._open("GET", "/v1/tasks")["tasks"]

    def submit(self, candidates, max_batch=None, **defaults):
        """Queue candidates (dicts or source strings); defaults: task, backend, format, options.

        Returns [{"id", "state", "duplicate"}], one per candidate, in order.
        """
        return self._batched("/v1/evaluations", candidates, defaults, "jobs", max_batch=max_batch)

    def get(self, job_id):
        """GET /v1/evaluations/{id}: the job, with its verdict once state is "done"."""
        return self._open("GET", f"/v1/evaluations/{_job_id(job_id)}")

    def events(self, job_id):
        """Yield (event, data) from the job's event stream until its `verdict` event."""
        resp = self._open("GET", f"/v1/evaluations/{_job_id(job_id)}/events", timeout=self.timeout_s,
                          stream=True)
        with resp:
            # read1 hands over what has arrived, so an event is seen as soon as it is sent.
            for event, data in parse_sse(iter(lambda: resp.read1(65536), b"")):
                yield event, data
                if event == "verdict":
                    return

    def wait(self, job_ids, poll_s=1.0, timeout_s=None):
        """Poll until every job is done; their verdicts in the order of job_ids (ids or job dicts)."""
        ids = [_job_id(j) for j in ([job_ids] if isinstance(job_ids, (str, dict)) else job_ids)]
        verdicts = {}
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        while True:
            for jid in ids:
                if jid not in verdicts:
                    job = self.get(jid)
                    if job.get("state") == "done":
                        verdicts[jid] = job.get("verdict") or {}
            pending = [j for j in ids if j not in verdicts]
            if not pending:
                return [verdicts[j] for j in ids]
            if time.monotonic() + poll_s > deadline:
                raise KsmithError(0, "timeout", f"{len(pending)} job(s) not done: {', '.join(pending[:8])}",
                                  jobs=pending)
            self._sleep(poll_s)

    def evaluate(self, candidates, poll_s=1.0, timeout_s=None, **defaults):
        """Submit and wait: one verdict per candidate, in order."""
        return self.wait(self.submit(candidates, **defaults), poll_s=poll_s, timeout_s=timeout_s)

    def rewards(self, candidates, wait_s=None, max_batch=None, **defaults):
        """POST /v1/rewards, max_batch candidates a request; results {"id", "reward", "status", ...} in order.

        The server waits up to wait_s (default: this client's timeout_s); past it, KsmithError
        with status 504 and `.jobs` holding the unfinished ids.
        """
        wait_s = self.timeout_s if wait_s is None else wait_s
        return self._batched("/v1/rewards", candidates, dict(defaults, wait_s=wait_s), "results",
                             timeout=wait_s + 60, max_batch=max_batch)


def _job_id(job):
    return job["id"] if isinstance(job, dict) else str(job)


def _normalize(candidates):
    """One candidate or a list; each a dict (copied) or a source string."""
    if isinstance(candidates, (str, dict)):
        candidates = [candidates]
    out = []
    for c in candidates:
        if isinstance(c, str):
            out.append({"source": c})
        elif isinstance(c, dict):
            out.append(dict(c))
        else:
            raise TypeError(f"a candidate is a dict or a source string, not {type(c).__name__}")
    return out


def _retry_after(value):
    # Only the delta-seconds form: the server sends no dates, and a date would need clock agreement.
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _error_from(e):
    raw = b""
    try:
        raw = e.read()
        err = json.loads(raw)
        jobs = err.get("jobs")
        err = err["error"]
        return KsmithError(e.code, err.get("code", f"http_{e.code}"), err.get("message", ""),
                           err.get("where", ""), jobs=jobs)
    except (ValueError, KeyError, TypeError, AttributeError, OSError):
        text = raw.decode("utf-8", "replace").strip()[:500] if raw else str(e.reason)
        return KsmithError(e.code, f"http_{e.code}", text)


# -- Completions to code -------------------------------------------------------------------

_CODE_LANGS = {"", "cpp", "c++", "cxx", "cc", "c", "cuda", "cu", "h", "hpp", "python", "py"}


def _completion_text(completion):
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        msgs = [m for m in completion if isinstance(m, dict)]
        mine = [m for m in msgs if m.get("role") == "assistant"] or [m for m in msgs if "role" not in m]
        if not mine:
            return ""
        content = mine[-1].get("content") or ""
        if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return content
    return completion if isinstance(completion, str) else ""


def extract_code(completion):
    """The last closed fenced code block (```cpp, c++, cuda, python or none) of a completion.

    A completion is a string or a chat message list (the last assistant message counts).
    Blocks in other languages (```bash, ```json) and an unclosed last fence are skipped. None
    when there is no code.
    """
    text = _completion_text(completion)
    found, fence, lang, indent, body = None, None, "", 0, []
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None:
            # Any indentation opens a fence: models put code blocks inside list items.
            if stripped[:3] in ("```", "~~~"):
                ch = stripped[0]
                width = len(stripped) - len(stripped.lstrip(ch))
                info = stripped[width:].strip()
                if ch == "`" and "`" in info:
                    continue  # inline code such as ```x``` on one line, not a fence
                fence, lang, body = ch * width, (info.split() or [""])[0].lower(), []
                indent = len(line) - len(line.lstrip(" "))
        elif stripped.startswith(fence) and stripped.strip(fence[0]) == "":
            code = "\n".join(body)
            if lang in _CODE_LANGS and code.strip():
                found = code + "\n"
            fence = None
        else:
            # Drop the fence's own indentation (as CommonMark does), which Python source cannot keep.
            cut = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[cut:])
    return found


# -- Trainer hooks -------------------------------------------------------------------------

def _column(kwargs, name, i, default):
    v = kwargs.get(name)
    if isinstance(v, (list, tuple)):
        v = v[i] if i < len(v) else None
    return default if v is None else v


def make_reward_function(client, task=None, backend="cuda", format=None, failure_reward=0.0, options=None):
    """A reward function as TRL's GRPOTrainer calls it: reward(completions, **kwargs) -> [float].

    Per-sample dataset columns `task`, `backend` and `format` in kwargs override the defaults.
    Completions without a code block score failure_reward without a request; the rest go in one
    rewards() call. Server errors raise, so that an outage never trains as a row of zeros.
    """

    def reward(completions, **kwargs):
        out = [float(failure_reward)] * len(completions)
        cands, where = [], []
        for i, completion in enumerate(completions):
            code = extract_code(completion)
            if code is None:
                continue
            t = _column(kwargs, "task", i, task)
            if not t:
                raise ValueError("ksmith_reward: no task: pass task= or a `task` dataset column")
            cand = {"task": t, "backend": _column(kwargs, "backend", i, backend), "source": code}
            fmt = _column(kwargs, "format", i, format)
            if fmt:
                cand["format"] = fmt
            if options:
                cand["options"] = dict(options)
            cands.append(cand)
            where.append(i)
        if cands:
            for i, r in zip(where, client.rewards(cands)):
                out[i] = float(r.get("reward", failure_reward))
        return out

    reward.__name__ = reward.__qualname__ = "ksmith_reward"
    return reward


_clients = {}


def _env_client():
    url = os.environ.get("KSMITH_SERVE_URL", DEFAULT_URL)
    if url not in _clients:
        _clients[url] = KsmithClient(url)
    return _clients[url]


def _verl_task(ground_truth, extra_info):
    info = extra_info or {}
    task = info.get("task") or (ground_truth.get("task") if isinstance(ground_truth, dict) else ground_truth)
    return task, info.get("backend", "cuda"), info.get("format")


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward function: the reward of one solution (0.0 when it has no code).

    Server: $KSMITH_SERVE_URL. Task: extra_info["task"], else ground_truth; backend:
    extra_info["backend"] (default cuda).
    """
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])[0]


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """compute_score for verl's batch reward manager: one request for the whole batch."""
    extra_infos = extra_infos or [None] * len(solution_strs)
    out, cands, where = [0.0] * len(solution_strs), [], []
    for i, (text, gt, info) in enumerate(zip(solution_strs, ground_truths, extra_infos)):
        code = extract_code(text)
        if code is None:
            continue
        task, backend, fmt = _verl_task(gt, info)
        if not task:
            raise ValueError("compute_score: no task in extra_info['task'] or ground_truth")
        cand = {"task": task, "backend": backend, "source": code}
        if fmt:
            cand["format"] = fmt
        cands.append(cand)
        where.append(i)
    if cands:
        for i, r in zip(where, _env_client().rewards(cands)):
            out[i] = float(r.get("reward", 0.0))
    return out


# -- Command line --------------------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(description="Evaluate kernels on a ksmith server.")
    p.add_argument("files", nargs="*", help="kernel sources ('-' for stdin)")
    p.add_argument("--url", default=os.environ.get("KSMITH_SERVE_URL", DEFAULT_URL))
    p.add_argument("--token", default=None, help="default: $KSMITH_SERVE_TOKEN")
    p.add_argument("--task")
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"], help="default: cpu")
    p.add_argument("--format", choices=["native", "kernelbench"])
    p.add_argument("--seeds", type=int)
    p.add_argument("--no-time", action="store_true", help="check correctness only")
    p.add_argument("--timeout", type=float, default=3600, help="seconds to wait for verdicts")
    p.add_argument("--reward", action="store_true", help="print rewards instead of verdicts")
    p.add_argument("--tasks", action="store_true", help="list the server's tasks")
    a = p.parse_args(argv)
    client = KsmithClient(a.url, token=a.token, timeout_s=a.timeout)
    try:
        if a.tasks:
            print(json.dumps(client.tasks(), indent=2))
            return 0
        if not a.files or not a.task:
            p.error("give --task and at least one kernel file (or --tasks)")
        cands = []
        for path in a.files:
            try:
                with (sys.stdin if path == "-" else open(path, encoding="utf-8")) as f:
                    cand = {"source": f.read()}
            except OSError as e:
                print(f"ksmith_client: {e}", file=sys.stderr)
                return 2
            if path != "-":
                cand["file_name"] = os.path.basename(path)
            cands.append(cand)
        options = {k: v for k, v in (("seeds", a.seeds), ("time", False if a.no_time else None)) if v is not None}
        common = dict(task=a.task, backend=a.backend, format=a.format, options=options or None)
        if a.reward:
            out = client.rewards(cands, **common)
            statuses = [r.get("status") for r in out]
        else:
            out = client.evaluate(cands, timeout_s=a.timeout, **common)
            statuses = [v.get("status") for v in out]
    except KsmithError as e:
        print(f"ksmith_client: {e}", file=sys.stderr)
        return 2
    print(json.dumps(out[0] if len(out) == 1 else out, indent=2))
    return 0 if all(s == "passed" for s in statuses) else 1


if __name__ == "__main__":
    sys.exit(main())
