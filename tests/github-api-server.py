#!/usr/bin/env python3
"""github-api-server: a loopback stand-in for GitHub's REST API "create a
pull request" endpoint, for tests/push.test.

Usage: github-api-server.py PORT_FILE LOG_FILE

It checks every request against GitHub's documented contract
(POST /repos/{owner}/{repo}/pulls; Accept: application/vnd.github+json;
Authorization: Bearer TOKEN; X-GitHub-Api-Version: 2022-11-28; a
User-Agent; a JSON body with the string fields title, head, base, body and
the boolean draft) and answers as GitHub does:
  201 with html_url for a new pull request on acme/widgets;
  422 "A pull request already exists for acme:BRANCH." when the head was
      already posted, 422 on a base other than main;
  401 "Bad credentials" for a token other than $GITHUB_TEST_TOKEN;
  403 with x-ratelimit-remaining: 0 for acme/limited;
  404 for any other repository.
A request that breaks the contract gets 400 with a message starting with
"contract:", logged too.  LOG_FILE gets each request line, headers, body and
the status.  Binds 127.0.0.1 on a free port, written to PORT_FILE."""

import http.server
import json
import os
import re
import sys
import threading
import time

PORT_FILE, LOG_FILE = sys.argv[1:3]
TOKEN = os.environ["GITHUB_TEST_TOKEN"]
DOCS = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
LOCK = threading.Lock()
PULLS = {}       # (owner, repo, head) -> number
FIELDS = {"title": str, "head": str, "base": str, "body": str, "draft": bool}
OPTIONAL = {"maintainer_can_modify", "issue", "head_repo"}


def log(lines):
    with LOCK, open(LOG_FILE, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, obj, lines, extra=()):
        body = json.dumps(obj).encode()
        log(lines + [f"-> {status}"])
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("X-GitHub-Api-Version-Selected", "2022-11-28")
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        lines = [f"{self.command} {self.path}"]
        lines += [f"{k}: {v}" for k, v in self.headers.items()]
        lines.append("body: " + raw.decode("utf-8", "replace"))
        m = re.fullmatch(r"/repos/([A-Za-z0-9._-]+)/([A-Za-z0-9._-]+)/pulls", self.path)
        if not m:
            return self.reply(404, {"message": "Not Found", "documentation_url": DOCS}, lines)
        owner, repo = m.groups()
        auth = self.headers.get("Authorization", "")
        if auth != f"Bearer {TOKEN}":
            return self.reply(401, {"message": "Bad credentials", "documentation_url": DOCS,
                                    "status": "401"}, lines)
        problems = []
        if self.headers.get("Accept") != "application/vnd.github+json":
            problems.append("Accept is not application/vnd.github+json")
        if self.headers.get("X-GitHub-Api-Version") != "2022-11-28":
            problems.append("X-GitHub-Api-Version is not 2022-11-28")
        if not self.headers.get("User-Agent"):
            problems.append("no User-Agent")
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            problems.append("Content-Type is not application/json")
        try:
            req = json.loads(raw)
        except ValueError:
            req = None
        if not isinstance(req, dict):
            problems.append("the body is not a JSON object")
            req = {}
        for k, t in FIELDS.items():
            if not isinstance(req.get(k), t):
                problems.append(f"{k} is missing or not a {t.__name__}")
        for k in req:
            if k not in FIELDS and k not in OPTIONAL:
                problems.append(f"unknown field {k}")
        if problems:
            return self.reply(400, {"message": "contract: " + "; ".join(problems)},
                              lines + ["contract: " + "; ".join(problems)])
        rate = [("x-ratelimit-limit", "5000"), ("x-ratelimit-remaining", "4999"),
                ("x-ratelimit-reset", str(int(time.time()) + 3600))]
        if (owner, repo) == ("acme", "limited"):
            return self.reply(403, {"message": "API rate limit exceeded for user ID 1.",
                                    "documentation_url": DOCS},
                              lines, [("x-ratelimit-limit", "5000"), ("x-ratelimit-remaining", "0"),
                                      ("x-ratelimit-reset", str(int(time.time()) + 600))])
        if (owner, repo) != ("acme", "widgets"):
            return self.reply(404, {"message": "Not Found", "documentation_url": DOCS,
                                    "status": "404"}, lines, rate)
        if req["base"] != "main":
            return self.reply(422, {"message": "Validation Failed", "errors": [
                {"resource": "PullRequest", "field": "base", "code": "invalid"}],
                "documentation_url": DOCS, "status": "422"}, lines, rate)
        with LOCK:
            key = (owner, repo, req["head"])
            exists = key in PULLS
            if not exists:
                PULLS[key] = len(PULLS) + 1
            number = PULLS[key]
        if exists:
            return self.reply(422, {"message": "Validation Failed", "errors": [
                {"resource": "PullRequest", "code": "custom",
                 "message": f"A pull request already exists for {owner}:{req['head']}."}],
                "documentation_url": DOCS, "status": "422"}, lines, rate)
        host = f"127.0.0.1:{self.server.server_address[1]}"
        return self.reply(201, {
            "url": f"http://{host}/repos/{owner}/{repo}/pulls/{number}",
            "id": 1000 + number, "number": number, "state": "open",
            "html_url": f"https://github.example/{owner}/{repo}/pull/{number}",
            "title": req["title"], "body": req["body"], "draft": req["draft"],
            "head": {"ref": req["head"]}, "base": {"ref": req["base"]},
        }, lines, rate + [("Location", f"http://{host}/repos/{owner}/{repo}/pulls/{number}")])

    def do_GET(self):
        self.reply(404, {"message": "Not Found", "documentation_url": DOCS},
                   [f"{self.command} {self.path}"])


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = PORT_FILE + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(tmp, PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
