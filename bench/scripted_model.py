#!/usr/bin/env python3
"""A stand-in model for measuring the optimize loop on real hardware, where no real model can be
reached: an OpenAI-compatible chat server on loopback that answers every request after a fixed
delay with a variant of a seed kernel (a setting of its @tune knobs, and a constant that makes each
answer a kernel of its own, so that none is skipped as a repeat). Only the answer is scripted; the
kernels are real and are built, checked and timed for real.

    python3 bench/scripted_model.py --seed tasks/elementwise/relu/seed_cuda.cu --delay-s 20 --port 8931
"""
import argparse
import itertools
import json
import random
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TUNE = re.compile(r"^\s*//\s*@tune\s+(\w+)\s*:\s*(.+)$")


def knobs_of(source):
    knobs = []
    for line in source.splitlines():
        match = TUNE.match(line)
        if match:
            knobs.append((match.group(1), [v.strip() for v in match.group(2).split(",") if v.strip()]))
    return knobs


class Variants:
    def __init__(self, source, seed):
        self.source = source
        self.knobs = knobs_of(source)
        self.rng = random.Random(seed)
        self.count = itertools.count(1)
        self.lock = threading.Lock()

    def next(self):
        with self.lock:
            number = next(self.count)
            setting = [(name, self.rng.choice(values)) for name, values in self.knobs]
        header = "".join(f"#define {name} {value}\n" for name, value in setting)
        # A real declaration, not a comment: a kernel of its own once comments are set aside.
        marker = f"static constexpr int kScriptedVariant = {number};\n"
        words = "Variant {}: {}.".format(number, ", ".join(f"{n}={v}" for n, v in setting) or "the seed")
        return words + "\n\n```cuda\n" + header + marker + self.source + "```\n"


def make_handler(variants, delay_s):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            time.sleep(delay_s)
            content = variants.next()
            body = json.dumps({
                "id": "scripted", "object": "chat.completion", "model": "scripted",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": len(content) // 4},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", required=True, help="the kernel whose @tune knobs the answers vary")
    parser.add_argument("--delay-s", type=float, default=20.0, help="seconds before each answer (default 20)")
    parser.add_argument("--port", type=int, default=8931)
    parser.add_argument("--random-seed", type=int, default=1)
    args = parser.parse_args()
    with open(args.seed) as f:
        variants = Variants(f.read(), args.random_seed)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(variants, args.delay_s))
    server.daemon_threads = True
    print(f"scripted model on http://127.0.0.1:{args.port}/v1, {args.delay_s} s an answer", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
