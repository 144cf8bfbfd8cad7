#!/usr/bin/env python3
"""git-http-server: `git http-backend` behind HTTP basic auth, on loopback,
for tests/push.test.

Usage: git-http-server.py PROJECT_ROOT PORT_FILE LOG_FILE

Every request needs `Authorization: Basic` with the user:password in
$GIT_HTTP_TEST_AUTH; others get 401 with WWW-Authenticate, as a forge does.
Binds 127.0.0.1 on a free port and writes the port to PORT_FILE once it
listens.  LOG_FILE gets each request line, its headers and the status
answered, so that the test can check what reached the server (and that no
secret is anywhere but the Authorization header).  $GIT_HTTP_BACKEND is the
CGI program (default /usr/lib/git-core/git-http-backend)."""

import base64
import http.server
import os
import subprocess
import sys
import threading
import time

ROOT, PORT_FILE, LOG_FILE = sys.argv[1:4]
EXPECTED = os.environ["GIT_HTTP_TEST_AUTH"]
BACKEND = os.environ.get("GIT_HTTP_BACKEND", "/usr/lib/git-core/git-http-backend")
LOG_LOCK = threading.Lock()


def log(lines):
    with LOG_LOCK, open(LOG_FILE, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # the log file is ours
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def answer(self, status, headers, body):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_git(self):
        body = self.read_body()
        lines = [f"{self.command} {self.path}"]
        lines += [f"{k}: {v}" for k, v in self.headers.items()]
        user = None
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                cred = base64.b64decode(auth[6:], validate=True).decode()
            except ValueError:
                cred = ""
            if cred == EXPECTED:
                user = cred.split(":", 1)[0]
        if user is None:
            log(lines + ["-> 401"])
            self.answer(401, [("WWW-Authenticate", 'Basic realm="git"')], b"")
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REMOTE_USER": user,
            "REMOTE_ADDR": self.client_address[0],
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
        }
        for h, var in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
            if self.headers.get(h):
                env[var] = self.headers[h]
        # GIT_HTTP_TEST_HOLD=FILE: a push, its body read, waits while FILE
        # exists (a test kills the pusher meanwhile; FILE.held says it
        # waits), then goes on with that body.
        hold = os.environ.get("GIT_HTTP_TEST_HOLD")
        if hold and path.endswith("/git-receive-pack") and os.path.exists(hold):
            open(hold + ".held", "w").close()
            for _ in range(600):
                if not os.path.exists(hold):
                    break
                time.sleep(0.1)
        p = subprocess.run([BACKEND], input=body, env=env, capture_output=True, check=False)
        out = p.stdout
        sep = out.find(b"\r\n\r\n")
        head, rest = (out[:sep], out[sep + 4:]) if sep >= 0 else out.split(b"\n\n", 1) if b"\n\n" in out else (b"", out)
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        if p.returncode != 0 and not head:
            status = 500
        log(lines + [f"-> {status}"])
        self.answer(status, headers, rest)

    do_GET = handle_git
    do_POST = handle_git


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = PORT_FILE + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(tmp, PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
