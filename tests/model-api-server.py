#!/usr/bin/env python3
"""model-api-server: a scripted, loopback stand-in for the Anthropic and
OpenAI model APIs, so that tests can run real agent CLIs (Claude Code, pi,
Codex) with no network.  Python 3 standard library only.

Usage:
  model-api-server.py [--host 127.0.0.1] [--port 0] [--port-file FILE]
                      [--log FILE] [--script FILE] [--cert PEM --key PEM]

--port 0 picks a free port; the port is written to --port-file (and to
stdout).  --cert/--key serve HTTPS instead of HTTP, so the server can stand
in for an https upstream.  HTTP/1.1 with keep-alive; streamed answers use
chunked transfer encoding so the connection stays usable.

Endpoints
  Anthropic: POST /v1/messages (stream or not), POST /v1/messages/count_tokens,
             GET /v1/models (Anthropic format when anthropic-version is sent).
  OpenAI:    POST /v1/responses (stream or not), POST /v1/chat/completions
             (stream or not; usage chunk when stream_options.include_usage),
             GET /v1/models (OpenAI list format).
  The same paths without the /v1 prefix are accepted too.  Anything else is
  answered 404 and logged.

--require-key KEY answers model requests that do not carry KEY (x-api-key,
or Authorization: Bearer) with the API's 401, as the real APIs do.

Log (--log): one JSON line per request:
  {"seq", "time", "method", "path", "headers": {lowercased: value},
   "body": parsed JSON (or {"_raw": text}), "auth": {"x-api-key": value|null,
   "authorization": value|null}, "api": "anthropic"|"responses"|"chat"|...,
   "kind": "main"|"side"|"other", "turn": N|null, "status": HTTP status}
  Written before the answer is sent, so a test that sees the answer sees
  the line.

Scenario (--script FILE, JSON; everything optional):
  {
    "turns": [TURN, ...],       # the main conversation, in order
    "after": TURN,              # answer once the turns are used up
                                #   (default: {"text": "Script finished."})
    "side_text": "OK",          # reply to side requests (see below)
    "delay": 0.0,               # default seconds between streamed events
    "usage": {...}              # default usage for every main reply
  }
  TURN is one of
    {"text": "final answer"}
    {"tool": "bash", "command": "echo hi > f"}          # one tool call
    {"tool_calls": [CALL, CALL, ...], "text": "..."}    # several (+ optional text first)
  with optional keys on any TURN:
    "usage": {"input_tokens": N, "output_tokens": N,
              "cache_creation_input_tokens": N, "cache_read_input_tokens": N}
    "delay": seconds between streamed events (0 by default)
    "wait": seconds to wait after logging the request, before any byte of
       the answer (a slow upstream: nothing to read yet)
    "headers": {"name": "value", ...} more headers of the answer
    "error": {"status": 429, "headers": {"retry-after": "7"},
              "type": "...", "message": "...", "count": N}
       answer this HTTP error instead (Anthropic or OpenAI error JSON,
       with the usual type for the status: 401 authentication_error,
       429 rate_limit_error, 529 overloaded_error, 500 api_error, ...;
       "kind": "context" gives the API's context-window-exceeded 400).
       With "count": N the error is answered N times for this turn, then
       the turn is answered normally (the only state the server keeps).
  CALL is generic and mapped onto the tools the request offers:
    {"tool": "bash",  "command": "..."}
    {"tool": "write", "path": "...", "content": "..."}
    {"tool": "edit",  "path": "...", "old": "...", "new": "..."}
    {"tool": "read",  "path": "..."}
    {"tool": "raw",   "name": "ToolName", "input": {...} or "freeform text"}
  bash maps to Bash / bash / shell / exec_command / shell_command (an array
  "command" parameter gets ["bash", "-lc", CMD]); write to Write / write /
  write_file; edit to Edit / edit (Claude's old_string/new_string, pi's
  edits[{oldText,newText}]); read to Read / read.  When a request offers no
  write/edit tool but apply_patch, write/edit become an apply_patch patch
  (freeform custom tool or function with an "input" string); failing that, a
  bash command that does the same.

  Anthropic and chat requests also take (for MCP tools, whose names and
  results the script cannot know in advance):
    "vars": {"NAME": "REGEX", ...}    (top level) {{NAME}} in any string of
       a TURN (a raw call's input, a text) is replaced by the REGEX's group 1
       (or its whole match) in the latest tool result of the request's
       history that matches (e.g. a task id that an earlier call returned);
       left as is when none matches.
    "until": "REGEX" (and "max": N, default 20) on a TURN: a poll.  The
       turn is answered again (the script does not advance) while the tool
       results that answered it do not match REGEX, at most N times; "wait"
       on the same TURN spaces the polls.

Which turn: the server is stateless.  The turn index is the number of
assistant replies already in the request's own history (Anthropic and chat:
messages with role "assistant"; Responses: runs of consecutive
message/function_call/custom_tool_call/reasoning output items; the repeated
answers of an "until" poll count once), so a resumed session, which resends
the earlier messages, continues the script.  For a
Responses request with previous_response_id, the count stored for that
response id is added.

Side requests (titles, topic detection, bash-prefix checks, quota probes)
are requests that offer no tools or have max_tokens < 256; they get
"side_text" and never advance the script.
"""

import argparse
import http.server
import json
import os
import re
import shlex
import ssl
import sys
import threading
import time
import uuid

LOCK = threading.Lock()
SEQ = [0]
ERRORS_SENT = {}        # (api, turn index) -> error answers given
RESPONSE_TURNS = {}     # Responses API: response id -> turns it closes
ARGS = None
SCRIPT = {}

ANTHROPIC_ERRORS = {
    400: "invalid_request_error", 401: "authentication_error",
    403: "permission_error", 404: "not_found_error",
    413: "request_too_large", 429: "rate_limit_error",
    500: "api_error", 529: "overloaded_error", 503: "overloaded_error",
}
ANTHROPIC_MESSAGES = {
    400: "invalid request", 401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "Not found", 413: "Request exceeds the maximum allowed number of bytes.",
    429: "Number of request tokens has exceeded your per-minute rate limit",
    500: "Internal server error", 529: "Overloaded", 503: "Overloaded",
}
OPENAI_ERRORS = {
    400: ("invalid_request_error", None), 401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", None), 404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"), 500: ("server_error", None),
    503: ("server_error", None), 529: ("server_error", None),
}
OPENAI_MESSAGES = {
    401: "Incorrect API key provided: placeholder.",
    429: "Rate limit reached for requests. Please try again in 7s.",
    500: "The server had an error while processing your request.",
    503: "The engine is currently overloaded, please try again later.",
    529: "The engine is currently overloaded, please try again later.",
}

TOOL_NAMES = {
    "bash": ["bash", "shell", "exec_command", "shell_command", "run_shell_command",
             "local_shell", "execute_command", "run_terminal_cmd"],
    "write": ["write", "write_file", "create_file"],
    "edit": ["edit", "edit_file", "str_replace", "replace"],
    "read": ["read", "read_file", "view"],
}
PARAM_NAMES = {
    "command": ["command", "cmd"],
    "path": ["file_path", "path", "filePath", "file", "filename"],
    "content": ["content", "text", "contents"],
    "old": ["old_string", "oldString", "oldText", "old_str", "old_text", "old", "search"],
    "new": ["new_string", "newString", "newText", "new_str", "new_text", "new", "replace"],
}


def new_id(prefix):
    return prefix + uuid.uuid4().hex[:24]


def log_request(entry):
    if not ARGS.log:
        return
    with LOCK:
        with open(ARGS.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, sort_keys=True) + "\n")


# ---------------------------------------------------------------- tools

def offered_tools(api, body):
    """Normalise the request's tools to [{name, props, kind}]."""
    out = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if api == "anthropic":
            if "input_schema" in t:
                out.append({"name": t.get("name", ""), "kind": "function",
                            "props": (t["input_schema"] or {}).get("properties") or {}})
        elif api == "chat":
            fn = t.get("function") or {}
            out.append({"name": fn.get("name", ""), "kind": "function",
                        "props": (fn.get("parameters") or {}).get("properties") or {}})
        else:
            typ = t.get("type")
            if typ == "function":
                out.append({"name": t.get("name", ""), "kind": "function",
                            "props": (t.get("parameters") or {}).get("properties") or {}})
            elif typ == "custom":
                out.append({"name": t.get("name", ""), "kind": "custom", "props": {}})
            elif typ == "local_shell":
                out.append({"name": "local_shell", "kind": "local_shell", "props": {}})
    return out


def find_tool(tools, generic):
    names = TOOL_NAMES.get(generic, [generic])
    for cand in names:
        for t in tools:
            if t["name"].lower() == cand.lower():
                return t
    return None


def pick(props, what):
    for cand in PARAM_NAMES[what]:
        if cand in props:
            return cand
    return None


def fill_command(tool, cmd):
    props = tool["props"]
    key = pick(props, "command") or "command"
    if (props.get(key) or {}).get("type") == "array":
        return {key: ["bash", "-lc", cmd]}
    return {key: cmd}


def patch_for(call):
    path = call["path"]
    if call["tool"] == "write":
        lines = call.get("content", "").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        body = "".join("+" + ln + "\n" for ln in lines)
        return "*** Begin Patch\n*** Add File: %s\n%s*** End Patch\n" % (path, body)
    old = call["old"].split("\n")
    new = call["new"].split("\n")
    body = "".join("-" + ln + "\n" for ln in old) + "".join("+" + ln + "\n" for ln in new)
    return "*** Begin Patch\n*** Update File: %s\n@@\n%s*** End Patch\n" % (path, body)


def bash_for(call):
    path = call["path"]
    if call["tool"] == "write":
        return "mkdir -p \"$(dirname %s)\" && printf %%s %s > %s" % (
            shlex.quote(path), shlex.quote(call.get("content", "")), shlex.quote(path))
    if call["tool"] == "read":
        return "cat " + shlex.quote(path)
    prog = ("import sys;p,o,n=sys.argv[1:];s=open(p).read();"
            "assert s.count(o)==1,'old text not unique';open(p,'w').write(s.replace(o,n))")
    return "python3 -c %s %s %s %s" % (shlex.quote(prog), shlex.quote(path),
                                       shlex.quote(call["old"]), shlex.quote(call["new"]))


def map_call(call, tools):
    """Generic CALL -> (tool name, input dict or freeform string, kind)."""
    g = call.get("tool")
    if g == "raw":
        t = next((t for t in tools if t["name"] == call["name"]), None)
        kind = t["kind"] if t else ("custom" if isinstance(call.get("input"), str) else "function")
        return call["name"], call.get("input", {}), kind
    t = find_tool(tools, g)
    if t is not None and t["kind"] == "function":
        props = t["props"]
        if g == "bash":
            return t["name"], fill_command(t, call["command"]), "function"
        if g in ("write", "read"):
            args = {pick(props, "path") or "path": call["path"]}
            if g == "write":
                args[pick(props, "content") or "content"] = call.get("content", "")
            return t["name"], args, "function"
        if g == "edit":
            args = {pick(props, "path") or "path": call["path"]}
            old_k, new_k = pick(props, "old"), pick(props, "new")
            arr = next((k for k, v in props.items() if isinstance(v, dict)
                        and v.get("type") == "array"
                        and pick((v.get("items") or {}).get("properties") or {}, "old")), None)
            if arr and not old_k:
                ip = props[arr]["items"]["properties"]
                args[arr] = [{pick(ip, "old"): call["old"], pick(ip, "new"): call["new"]}]
            else:
                args[old_k or "old_string"] = call["old"]
                args[new_k or "new_string"] = call["new"]
            return t["name"], args, "function"
    if g == "bash":
        if t is not None and t["kind"] == "local_shell":
            return "local_shell", {"command": ["bash", "-lc", call["command"]]}, "local_shell"
        if t is not None and t["kind"] == "custom":
            return t["name"], call["command"], "custom"
    if g in ("write", "edit"):
        ap = next((t for t in tools if t["name"] == "apply_patch"), None)
        if ap is not None:
            patch = patch_for(call)
            if ap["kind"] == "custom":
                return "apply_patch", patch, "custom"
            key = "input" if "input" in ap["props"] or not ap["props"] else next(iter(ap["props"]))
            return "apply_patch", {key: patch}, "function"
    if g in ("write", "edit", "read"):
        b = find_tool(tools, "bash")
        if b is not None:
            return map_call({"tool": "bash", "command": bash_for(call)}, tools)
    # Nothing fits: name the generic tool anyway so the failure shows in the agent.
    return g or "unknown", {k: v for k, v in call.items()
                            if k not in ("tool", "usage", "delay", "error", "text")}, "function"


def turn_calls(turn):
    if "tool_calls" in turn:
        return list(turn["tool_calls"])
    if "tool" in turn:
        return [turn]
    return []


# ---------------------------------------------------------------- turns

def result_text(m):
    """The tool results' text in one Anthropic or chat message ("" if none)."""
    if m.get("role") == "tool":
        c = m.get("content")
        return c if isinstance(c, str) else json.dumps(c)
    out = []
    for b in m.get("content") if isinstance(m.get("content"), list) else []:
        if isinstance(b, dict) and b.get("type") == "tool_result":
            c = b.get("content")
            if isinstance(c, list):
                c = "\n".join(x.get("text", "") for x in c if isinstance(x, dict))
            out.append(c if isinstance(c, str) else json.dumps(c))
    return "\n".join(out)


def history_results(body):
    """Anthropic and chat: the tool results' texts in the history, oldest first."""
    return [t for t in (result_text(m) for m in body.get("messages") or []
                        if isinstance(m, dict)) if t]


def count_turns(api, body):
    if api in ("anthropic", "chat"):
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        turns = SCRIPT.get("turns") or []
        n = repeats = 0
        for k, m in enumerate(msgs):
            if m.get("role") != "assistant":
                continue
            until = turns[n].get("until") if n < len(turns) else None
            if until is not None:
                # A poll: the turn is answered again while the results of
                # its calls (the messages up to the next assistant one)
                # do not match, at most "max" times.
                nxt = next((j for j in range(k + 1, len(msgs))
                            if msgs[j].get("role") == "assistant"), len(msgs))
                got = "\n".join(result_text(x) for x in msgs[k + 1:nxt])
                if not re.search(until, got) and repeats + 1 < int(turns[n].get("max", 20)):
                    repeats += 1
                    continue
            n += 1
            repeats = 0
        return n
    inp = body.get("input")
    n = 0
    if isinstance(inp, list):
        in_run = False
        for item in inp:
            if not isinstance(item, dict):
                continue
            typ = item.get("type", "message")
            model_item = (typ in ("function_call", "custom_tool_call", "reasoning",
                                  "local_shell_call", "web_search_call")
                          or (typ == "message" and item.get("role") == "assistant"))
            if model_item and not in_run:
                n += 1
            in_run = model_item
    prev = body.get("previous_response_id")
    if prev:
        with LOCK:
            n += RESPONSE_TURNS.get(prev, 0)
    return n


def is_side(api, body):
    if not body.get("tools"):
        return True
    mt = body.get("max_tokens") or body.get("max_output_tokens") or body.get("max_completion_tokens")
    return isinstance(mt, int) and mt < 256


def estimate_tokens(body):
    return max(1, len(json.dumps(body)) // 4)


def fill(value, found):
    """VALUE with each {{NAME}} in its strings replaced by found[NAME]."""
    if isinstance(value, str):
        return re.sub(r"\{\{(\w+)\}\}", lambda m: found.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [fill(v, found) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, found) for k, v in value.items()}
    return value


def captured(api, body):
    """The script's "vars": NAME -> its regex's group 1 (or whole match) in
    the latest tool result of the history that matches."""
    found = {}
    if api not in ("anthropic", "chat") or not SCRIPT.get("vars"):
        return found
    results = history_results(body)
    for name, rx in SCRIPT["vars"].items():
        for text in reversed(results):
            m = re.search(rx, text)
            if m:
                found[name] = m.group(1) if m.groups() else m.group(0)
                break
    return found


def choose(api, body):
    """-> (kind, turn index or None, TURN dict)."""
    if is_side(api, body):
        return "side", None, {"text": SCRIPT.get("side_text", "OK")}
    n = count_turns(api, body)
    turns = SCRIPT.get("turns") or []
    turn = turns[n] if n < len(turns) else SCRIPT.get("after", {"text": "Script finished."})
    if SCRIPT.get("vars"):
        turn = fill(turn, captured(api, body))
    return "main", n, turn


def usage_for(turn, body, kind):
    u = {"input_tokens": estimate_tokens(body), "output_tokens": 10,
         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    if kind == "main":
        u.update(SCRIPT.get("usage") or {})
        u.update(turn.get("usage") or {})
    return u


def pending_error(api, n, turn):
    err = turn.get("error")
    if not err:
        return None
    count = err.get("count")
    if count is None:
        return err
    with LOCK:
        done = ERRORS_SENT.get((api, n), 0)
        if done >= count:
            return None
        ERRORS_SENT[(api, n)] = done + 1
    return err


# ---------------------------------------------------------------- handler

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Head and body are separate writes: without this, Nagle and the
    # client's delayed ACK add 40 ms to each answer.
    disable_nagle_algorithm = True
    server_version = "model-api-server/1"

    def log_message(self, fmt, *args):
        pass

    # -- plumbing
    def read_body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            raw = self.read_chunked()
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def read_chunked(self):
        out = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return out
            out += self.rfile.read(size)
            self.rfile.readline()

    def entry(self, body, api, kind, turn, status):
        with LOCK:
            SEQ[0] += 1
            seq = SEQ[0]
        h = {k.lower(): v for k, v in self.headers.items()}
        return {"seq": seq, "time": time.time(), "method": self.command, "path": self.path,
                "headers": h, "body": body, "api": api, "kind": kind, "turn": turn,
                "status": status,
                "auth": {"x-api-key": h.get("x-api-key"), "authorization": h.get("authorization")}}

    def begin(self, turn, kind):
        """A main turn's extra headers and wait, once its request is logged."""
        if kind != "main":
            return
        self.extra_headers = dict(turn.get("headers") or {})
        if turn.get("wait"):
            time.sleep(float(turn["wait"]))

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("request-id", new_id("req_"))
        self.send_header("x-request-id", new_id("req_"))
        for k, v in dict(self.extra_headers, **(headers or {})).items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", new_id("req_"))
        self.send_header("x-request-id", new_id("req_"))
        for k, v in self.extra_headers.items():
            self.send_header(k, str(v))
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def sse(self, event, obj, delay):
        data = json.dumps(obj) if not isinstance(obj, str) else obj
        text = ("event: %s\n" % event if event else "") + "data: %s\n\n" % data
        self.chunk(text.encode())
        if delay:
            time.sleep(delay)

    # -- dispatch
    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def do_HEAD(self):
        self.route()

    def do_PUT(self):
        self.route()

    def do_DELETE(self):
        self.route()

    def do_PATCH(self):
        self.route()

    def route(self):
        self.extra_headers = {}
        body = self.read_body() if self.command in ("POST", "PUT", "PATCH") else {}
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.startswith("/v1/"):
            path = path[3:]
        apis = {"/messages": "anthropic", "/messages/count_tokens": "anthropic",
                "/responses": "responses", "/chat/completions": "chat"}
        if ARGS.require_key and self.command == "POST" and path in apis:
            got = (self.headers.get("x-api-key") if apis[path] == "anthropic"
                   else (self.headers.get("authorization") or "")[len("Bearer "):])
            if got != ARGS.require_key:
                return self.api_error(apis[path], body, "main", None, {"status": 401})
        try:
            if self.command == "POST" and path == "/messages":
                return self.anthropic(body)
            if self.command == "POST" and path == "/messages/count_tokens":
                log_request(self.entry(body, "anthropic", "other", None, 200))
                return self.send_json(200, {"input_tokens": estimate_tokens(body)})
            if self.command == "POST" and path == "/responses":
                return self.openai_responses(body)
            if self.command == "POST" and path == "/chat/completions":
                return self.chat(body)
            if self.command in ("GET", "HEAD") and path == "/models":
                return self.models(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        log_request(self.entry(body, None, "other", None, 404))
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                        "message": "no route %s" % self.path}})

    def models(self, body):
        names = SCRIPT.get("models") or ["claude-sonnet-4-5", "claude-haiku-4-5", "gpt-5.1-codex"]
        log_request(self.entry(body, "models", "other", None, 200))
        if "anthropic-version" in self.headers:
            data = [{"type": "model", "id": m, "display_name": m,
                     "created_at": "2025-01-01T00:00:00Z"} for m in names]
            return self.send_json(200, {"data": data, "has_more": False,
                                        "first_id": names[0], "last_id": names[-1]})
        data = [{"id": m, "object": "model", "created": 1735689600, "owned_by": "test"}
                for m in names]
        return self.send_json(200, {"object": "list", "data": data})

    def api_error(self, api, body, kind, n, err):
        status = int(err.get("status", 500))
        log_request(self.entry(body, api, kind, n, status))
        headers = dict(err.get("headers") or {})
        context = err.get("kind") == "context"
        if api == "anthropic":
            typ = err.get("type") or ANTHROPIC_ERRORS.get(status, "api_error")
            msg = err.get("message") or (
                "prompt is too long: 250000 tokens > 200000 maximum" if context
                else ANTHROPIC_MESSAGES.get(status, "error"))
            if status == 529:
                headers.setdefault("x-should-retry", "true")
            return self.send_json(status, {"type": "error",
                                           "error": {"type": typ, "message": msg}}, headers)
        typ, code = OPENAI_ERRORS.get(status, ("api_error", None))
        if context:
            typ, code = "invalid_request_error", "context_length_exceeded"
        msg = err.get("message") or (
            "Your input exceeds the context window of this model. Please adjust your input and try again."
            if context else OPENAI_MESSAGES.get(status, "error"))
        return self.send_json(status, {"error": {"message": msg, "type": err.get("type") or typ,
                                                 "param": None, "code": err.get("code", code)}},
                              headers)

    # -- Anthropic Messages
    def anthropic(self, body):
        kind, n, turn = choose("anthropic", body)
        err = pending_error("anthropic", n, turn) if kind == "main" else None
        if err:
            return self.api_error("anthropic", body, kind, n, err)
        tools = offered_tools("anthropic", body)
        blocks = []
        if turn.get("text") or not turn_calls(turn):
            blocks.append({"type": "text", "text": turn.get("text", "")})
        for c in turn_calls(turn):
            name, inp, _ = map_call(c, tools)
            blocks.append({"type": "tool_use", "id": new_id("toolu_"), "name": name,
                           "input": inp if isinstance(inp, dict) else {"input": inp}})
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        u = usage_for(turn, body, kind)
        model = body.get("model", "claude-sonnet-4-5")
        mid = new_id("msg_")
        log_request(self.entry(body, "anthropic", kind, n, 200))
        self.begin(turn, kind)
        if not body.get("stream"):
            return self.send_json(200, {
                "id": mid, "type": "message", "role": "assistant", "model": model,
                "content": blocks, "stop_reason": stop, "stop_sequence": None,
                "usage": u})
        delay = float(turn.get("delay", SCRIPT.get("delay", 0)) if kind == "main" else 0)
        self.start_stream()
        start_usage = dict(u)
        start_usage["output_tokens"] = 1
        self.sse("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": start_usage}}, delay)
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "text", "text": ""}},
                         delay)
                if i == 0:
                    self.sse("ping", {"type": "ping"}, delay)
                text = b["text"]
                parts = [text[j:j + 20] for j in range(0, len(text), 20)] or [""]
                for p in parts:
                    self.sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "text_delta", "text": p}},
                             delay)
            else:
                self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "tool_use",
                                                                   "id": b["id"],
                                                                   "name": b["name"],
                                                                   "input": {}}}, delay)
                js = json.dumps(b["input"])
                self.sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                 "delta": {"type": "input_json_delta",
                                                           "partial_json": ""}}, delay)
                for j in range(0, len(js), 40):
                    self.sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "input_json_delta",
                                                               "partial_json": js[j:j + 40]}},
                             delay)
            self.sse("content_block_stop", {"type": "content_block_stop", "index": i}, delay)
        self.sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": u["output_tokens"]}}, delay)
        self.sse("message_stop", {"type": "message_stop"}, 0)
        self.end_stream()

    # -- OpenAI Responses
    def openai_responses(self, body):
        kind, n, turn = choose("responses", body)
        err = pending_error("responses", n, turn) if kind == "main" else None
        if err:
            return self.api_error("responses", body, kind, n, err)
        tools = offered_tools("responses", body)
        items = []
        if turn.get("text") or not turn_calls(turn):
            items.append({"id": new_id("msg_"), "type": "message", "status": "completed",
                          "role": "assistant",
                          "content": [{"type": "output_text", "text": turn.get("text", ""),
                                       "annotations": []}]})
        for c in turn_calls(turn):
            name, inp, tkind = map_call(c, tools)
            cid = new_id("call_")
            if tkind == "custom":
                items.append({"id": new_id("ctc_"), "type": "custom_tool_call",
                              "status": "completed", "call_id": cid, "name": name,
                              "input": inp if isinstance(inp, str) else json.dumps(inp)})
            elif tkind == "local_shell":
                items.append({"id": new_id("lsh_"), "type": "local_shell_call",
                              "status": "completed", "call_id": cid,
                              "action": {"type": "exec", "command": inp["command"],
                                         "env": {}}})
            else:
                items.append({"id": new_id("fc_"), "type": "function_call",
                              "status": "completed", "call_id": cid, "name": name,
                              "arguments": inp if isinstance(inp, str) else json.dumps(inp)})
        u = usage_for(turn, body, kind)
        usage = {"input_tokens": u["input_tokens"],
                 "input_tokens_details": {"cached_tokens": u.get("cache_read_input_tokens", 0)},
                 "output_tokens": u["output_tokens"],
                 "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": u["input_tokens"] + u["output_tokens"]}
        rid = new_id("resp_")
        if kind == "main":
            with LOCK:
                RESPONSE_TURNS[rid] = n + 1
        base = {"id": rid, "object": "response", "created_at": int(time.time()),
                "model": body.get("model", "gpt-5.1-codex"), "output": [],
                "parallel_tool_calls": True, "previous_response_id":
                body.get("previous_response_id"), "tool_choice": body.get("tool_choice", "auto"),
                "tools": body.get("tools") or [], "error": None, "incomplete_details": None,
                "instructions": body.get("instructions"), "metadata": {}, "usage": None}
        log_request(self.entry(body, "responses", kind, n, 200))
        self.begin(turn, kind)
        done = dict(base, status="completed", output=items, usage=usage)
        if not body.get("stream"):
            return self.send_json(200, done)
        delay = float(turn.get("delay", SCRIPT.get("delay", 0)) if kind == "main" else 0)
        seq = [0]

        def ev(name, obj):
            obj = dict(obj, type=name, sequence_number=seq[0])
            seq[0] += 1
            self.sse(name, obj, delay)

        self.start_stream()
        ev("response.created", {"response": dict(base, status="in_progress")})
        ev("response.in_progress", {"response": dict(base, status="in_progress")})
        for oi, it in enumerate(items):
            if it["type"] == "message":
                text = it["content"][0]["text"]
                ev("response.output_item.added", {"output_index": oi, "item": dict(
                    it, status="in_progress", content=[])})
                ev("response.content_part.added", {"item_id": it["id"], "output_index": oi,
                                                   "content_index": 0, "part": {
                                                       "type": "output_text", "text": "",
                                                       "annotations": []}})
                for j in range(0, max(len(text), 1), 20):
                    ev("response.output_text.delta", {"item_id": it["id"], "output_index": oi,
                                                      "content_index": 0,
                                                      "delta": text[j:j + 20]})
                ev("response.output_text.done", {"item_id": it["id"], "output_index": oi,
                                                 "content_index": 0, "text": text})
                ev("response.content_part.done", {"item_id": it["id"], "output_index": oi,
                                                  "content_index": 0,
                                                  "part": it["content"][0]})
            elif it["type"] == "function_call":
                ev("response.output_item.added", {"output_index": oi, "item": dict(
                    it, status="in_progress", arguments="")})
                a = it["arguments"]
                for j in range(0, len(a), 40):
                    ev("response.function_call_arguments.delta", {
                        "item_id": it["id"], "output_index": oi, "delta": a[j:j + 40]})
                ev("response.function_call_arguments.done", {
                    "item_id": it["id"], "output_index": oi, "arguments": a})
            elif it["type"] == "custom_tool_call":
                ev("response.output_item.added", {"output_index": oi, "item": dict(
                    it, status="in_progress", input="")})
                a = it["input"]
                for j in range(0, len(a), 40):
                    ev("response.custom_tool_call_input.delta", {
                        "item_id": it["id"], "output_index": oi, "delta": a[j:j + 40]})
                ev("response.custom_tool_call_input.done", {
                    "item_id": it["id"], "output_index": oi, "input": a})
            else:
                ev("response.output_item.added", {"output_index": oi, "item": it})
            ev("response.output_item.done", {"output_index": oi, "item": it})
        ev("response.completed", {"response": done})
        self.end_stream()

    # -- OpenAI Chat Completions
    def chat(self, body):
        kind, n, turn = choose("chat", body)
        err = pending_error("chat", n, turn) if kind == "main" else None
        if err:
            return self.api_error("chat", body, kind, n, err)
        tools = offered_tools("chat", body)
        text = turn.get("text", "") if (turn.get("text") or not turn_calls(turn)) else None
        calls = []
        for c in turn_calls(turn):
            name, inp, _ = map_call(c, tools)
            calls.append({"id": new_id("call_"), "type": "function", "function": {
                "name": name, "arguments": inp if isinstance(inp, str) else json.dumps(inp)}})
        finish = "tool_calls" if calls else "stop"
        u = usage_for(turn, body, kind)
        usage = {"prompt_tokens": u["input_tokens"], "completion_tokens": u["output_tokens"],
                 "total_tokens": u["input_tokens"] + u["output_tokens"],
                 "prompt_tokens_details": {"cached_tokens": u.get("cache_read_input_tokens", 0)}}
        cid = new_id("chatcmpl-")
        model = body.get("model", "gpt-4o")
        created = int(time.time())
        log_request(self.entry(body, "chat", kind, n, 200))
        self.begin(turn, kind)
        if not body.get("stream"):
            msg = {"role": "assistant", "content": text}
            if calls:
                msg["tool_calls"] = calls
            return self.send_json(200, {"id": cid, "object": "chat.completion",
                                        "created": created, "model": model,
                                        "choices": [{"index": 0, "message": msg,
                                                     "finish_reason": finish}],
                                        "usage": usage})
        delay = float(turn.get("delay", SCRIPT.get("delay", 0)) if kind == "main" else 0)

        def chunk(delta, fin=None, **extra):
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created,
                   "model": model, "choices": [{"index": 0, "delta": delta,
                                                "finish_reason": fin}]}
            obj.update(extra)
            self.sse(None, obj, delay)

        self.start_stream()
        chunk({"role": "assistant", "content": ""})
        if text:
            for j in range(0, len(text), 20):
                chunk({"content": text[j:j + 20]})
        for i, c in enumerate(calls):
            chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                   "function": {"name": c["function"]["name"],
                                                "arguments": ""}}]})
            a = c["function"]["arguments"]
            for j in range(0, len(a), 40):
                chunk({"tool_calls": [{"index": i, "function": {"arguments": a[j:j + 40]}}]})
        chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            self.sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                            "model": model, "choices": [], "usage": usage}, 0)
        self.sse(None, "[DONE]", 0)
        self.end_stream()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global ARGS, SCRIPT
    p = argparse.ArgumentParser(description="scripted Anthropic/OpenAI API stand-in")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--log")
    p.add_argument("--script")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--require-key", help="answer 401 (as the real APIs do) to a model "
                   "request without this key")
    ARGS = p.parse_args()
    if ARGS.script:
        with open(ARGS.script, encoding="utf-8") as f:
            SCRIPT = json.load(f)
        if isinstance(SCRIPT, list):
            SCRIPT = {"turns": SCRIPT}
    srv = Server((ARGS.host, ARGS.port), Handler)
    if ARGS.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.cert, ARGS.key or ARGS.cert)
        # Handshake in the handler thread, so one stuck client cannot block accept().
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                                     do_handshake_on_connect=False)
    port = srv.server_address[1]
    if ARGS.port_file:
        tmp = ARGS.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, ARGS.port_file)
    print(port, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
