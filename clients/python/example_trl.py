"""GRPO on kernel writing with TRL, rewarded by `ksmith serve`.

Start the server first (`ksmith serve --listen 127.0.0.1:8080 --backend cuda`), then
`python3 example_trl.py --model Qwen/Qwen2.5-Coder-1.5B-Instruct --tasks softmax,relu`.
Each prompt row carries its task in a `task` column; TRL hands that column to the reward
function, one entry per completion, so one run can train on many tasks.

verl: no code needed; point its custom reward function at the client module, e.g.

    custom_reward_function:
      path: clients/python/ksmith_client.py
      name: compute_score            # one request per sample (reward_model.reward_manager=naive)
      # name: compute_score_batch    # one request per batch  (reward_model.reward_manager=batch)

with KSMITH_SERVE_URL (and KSMITH_SERVE_TOKEN) in the workers' environment and, in each
dataset row, `extra_info: {"task": "softmax", "backend": "cuda"}` (or the task as
`reward_model.ground_truth`).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmith_client import KsmithClient, make_reward_function  # noqa: E402

PROMPT = (
    "Write a fast {backend} kernel for the ksmith task `{task}`. Keep the signature the task "
    "gives, `extern \"C\"`, and answer with one ```{lang} code block."
)


def build_dataset(client, names, backend):
    """One chat prompt per task, with the task and backend as columns the reward function reads."""
    from datasets import Dataset

    known = {t["name"] for t in client.tasks()}
    missing = [n for n in names if n not in known]
    if missing:
        raise SystemExit(f"not on the server: {', '.join(missing)}")
    lang = "cuda" if backend == "cuda" else "cpp"
    rows = [{"prompt": [{"role": "user", "content": PROMPT.format(task=n, backend=backend, lang=lang)}],
             "task": n, "backend": backend} for n in names]
    return Dataset.from_list(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="Qwen/Qwen2.5-Coder-1.5B-Instruct")
    p.add_argument("--tasks", default="softmax")
    p.add_argument("--backend", default="cuda", choices=["cpu", "cuda"])
    p.add_argument("--url", default=os.environ.get("KSMITH_SERVE_URL", "http://127.0.0.1:8080"))
    p.add_argument("--output-dir", default="ksmith-grpo")
    a = p.parse_args()
    try:
        from trl import GRPOConfig, GRPOTrainer
    except ImportError:
        raise SystemExit("this example needs TRL: pip install trl datasets")

    client = KsmithClient(a.url)
    print("ksmith:", client.health())
    dataset = build_dataset(client, a.tasks.split(","), a.backend)
    # Correctness only keeps steps short; drop `options` to reward measured speedup too.
    reward = make_reward_function(client, backend=a.backend, failure_reward=0.0,
                                  options={"seeds": 2, "time": False})
    config = GRPOConfig(output_dir=a.output_dir, num_generations=8, max_completion_length=2048,
                        per_device_train_batch_size=8, logging_steps=1)
    trainer = GRPOTrainer(model=a.model, reward_funcs=[reward], args=config, train_dataset=dataset)
    trainer.train()


if __name__ == "__main__":
    main()
