#!/usr/bin/env python3
"""Checks an exported rubric_reward.py against the TypeScript judge's shared vectors.

Usage: python3 scripts/check_python_rubric.py path/to/rubric_reward.py test/fixtures/rubric_vectors.json

For every case of the vectors (a reward spec, completions, the TypeScript results) it scores the
completions with the module's RubricReward and compares each criterion's score (None when
unscorable), the
aggregated rewards and, for normalize_then_sum, the per-criterion cells. Judge criteria are asked
to a stand-in OpenAI-compatible endpoint on 127.0.0.1 that answers from the vectors' table, checks
the Authorization header and the messages, and fails requests it does not expect.
Prints a JSON summary; exits 1 on any mismatch. Needs only the standard library.
"""

import importlib.util
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE = 1e-12


def load_module(path):
    spec = importlib.util.spec_from_file_location("rubric_reward_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Judge:
    """The stand-in endpoint's state: the answer table and what went wrong."""

    def __init__(self, vectors):
        self.key = vectors["judge"]["api_key"]
        self.model = vectors["judge"]["model"]
        self.answers = {}
        for case in vectors["cases"]:
            for item in case["judge_answers"]:
                self.answers[item["user"]] = (item["system"], item["answer"])
        self.requests = 0
        self.problems = []
        self.lock = threading.Lock()

    def reply(self, path, headers, body):
        with self.lock:
            self.requests += 1
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": "no such path " + path}}
        if headers.get("Authorization") != "Bearer " + self.key:
            self.problems.append("a request without the key from the environment")
            return 401, {"error": {"message": "bad key"}}
        request = json.loads(body)
        messages = request.get("messages", [])
        if request.get("model") != self.model or len(messages) != 2:
            self.problems.append("unexpected model or messages: %r" % request.get("model"))
            return 400, {"error": {"message": "bad request"}}
        found = self.answers.get(messages[1]["content"])
        if found is None:
            self.problems.append("a user message the TypeScript judge did not send: %r" % messages[1]["content"][:200])
            return 400, {"error": {"message": "unexpected request"}}
        system, answer = found
        if messages[0]["content"] != system or messages[0]["role"] != "system" or messages[1]["role"] != "user":
            self.problems.append("a system message differing from the TypeScript judge's")
        if answer == "__500__":
            return 500, {"error": {"message": "oops"}}
        if answer == "__400__":
            return 400, {"error": {"message": "bad request"}}
        return 200, {"choices": [{"message": {"role": "assistant", "content": answer}}]}


def serve(judge):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8")
            status, payload = judge.reply(self.path, self.headers, body)
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= TOLERANCE * max(1.0, abs(b))


def check(module, vectors):
    mismatches = []
    checked = 0
    for case in vectors["cases"]:
        name = case["name"]
        reward = module.RubricReward(case["spec"], case["key"])
        prompts, completions = case["prompts"], case["completions"]
        results = reward.score(prompts, completions)
        ids = [c["id"] for c in case["spec"][case["key"]]["criteria"]]
        for i, (got_row, want_row) in enumerate(zip(results, case["expected"]["scores"])):
            for k, (got, want) in enumerate(zip(got_row, want_row)):
                checked += 1
                if got["criterion_id"] != ids[k] or got["status"] != ("ok" if want is not None else "unscorable") or not close(got["score"], want):
                    mismatches.append(
                        {"case": name, "completion": completions[i], "criterion": ids[k], "python": [got["status"], got["score"], got["reason"]], "typescript": want}
                    )
        rewards = reward.rewards(prompts, completions, step=case["step"], results=results)
        for i, (got, want) in enumerate(zip(rewards, case["expected"]["rewards"])):
            checked += 1
            if not close(got, want):
                mismatches.append({"case": name, "completion": completions[i], "reward": {"python": got, "typescript": want}})
        if len(rewards) != len(case["expected"]["rewards"]):
            mismatches.append({"case": name, "rewards": "%d rewards for %d expected" % (len(rewards), len(case["expected"]["rewards"]))})
        if "cells" in case["expected"]:
            cells = module.CriterionRewards(reward).cells(prompts, completions, step=case["step"])
            for i, (got_row, want_row) in enumerate(zip(cells, case["expected"]["cells"])):
                for k, (got, want) in enumerate(zip(got_row, want_row)):
                    checked += 1
                    if not close(got, want):
                        mismatches.append({"case": name, "completion": completions[i], "cell": k, "python": got, "typescript": want})
    return checked, mismatches


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    module = load_module(argv[0])
    with open(argv[1], encoding="utf-8") as f:
        vectors = json.load(f)
    judge = Judge(vectors)
    server = serve(judge)
    os.environ["RUBRIC_JUDGE_URL"] = "http://127.0.0.1:%d/v1" % server.server_address[1]
    os.environ["RUBRIC_JUDGE_API_KEY"] = judge.key
    os.environ.pop("RUBRIC_JUDGE_MODEL", None)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    try:
        checked, mismatches = check(module, vectors)
    finally:
        server.shutdown()
    problems = sorted(set(judge.problems))
    print(
        json.dumps(
            {"cases": len(vectors["cases"]), "checked": checked, "judge_requests": judge.requests, "judge_problems": problems, "mismatches": mismatches[:50], "mismatch_count": len(mismatches)},
            ensure_ascii=False,
            indent=1,
        )
    )
    return 1 if mismatches or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
