#!/usr/bin/env python3
"""A webhook receiver for tests/webhook.test, on 127.0.0.1.

usage: webhook-receiver.py PORT_FILE LOG [FAIL_FIRST]

Listens on a free port (written to PORT_FILE once it listens), appends one
JSON line per request to LOG: {"time", "method", "path", "headers" (names
lowercased), "body" (text), "status" (the answer)}.  The first FAIL_FIRST
requests (default 0) are answered 500, the others 204.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, log_path = sys.argv[1], sys.argv[2]
fail_first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
lock = threading.Lock()
count = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        global count
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace")
        with lock:
            count += 1
            status = 500 if count <= fail_first else 204
            rec = {"time": time.time(), "method": self.command, "path": self.path,
                   "headers": {k.lower(): v for k, v in self.headers.items()},
                   "body": body, "status": status}
            with open(log_path, "a") as f:
                f.write(json.dumps(rec) + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
# After the bind: the rename says "listening".
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()
