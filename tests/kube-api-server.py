#!/usr/bin/env python3
"""kube-api-server: a loopback contract server for the subset of the
Kubernetes API that paddock's client (src/sandbox/kube.c) uses, with the
real API's status bodies and semantics, for tests/test-kube.c.

Usage: kube-api-server.py --port-file F --log F --cert F --key F
           [--client-ca F] [--token-file F] [--faults F]
           [--grace-scale S] [--bookmark-interval S] [--start-delay S]
           [--forbid-namespace NS] [--seed N] [--objects F]

Listens on 127.0.0.1 (a free port, written to --port-file once it
listens), TLS only, with --cert/--key (a test CA's, made at test time).

AUTH.  Authorization: Bearer T is accepted when T is the content of
--token-file as it is at that request (the file is read again for each
request, so a test can rotate it); a bad token is 401 even with a
certificate.  Without a token, a client certificate signed by
--client-ca is accepted (its CN is the user).  Else 401.

THE API.  Pods only, as the real API serves them:
   POST   /api/v1/namespaces/{ns}/pods          201 the pod; 409 AlreadyExists;
                                                422 Invalid (bad name, no
                                                containers); 400 BadRequest
                                                (namespace mismatch, not JSON)
   GET    /api/v1/namespaces/{ns}/pods/{name}   200; 404 NotFound
   DELETE /api/v1/namespaces/{ns}/pods/{name}   body DeleteOptions: uid
                                                precondition (409 Conflict),
                                                gracePeriodSeconds (0: gone
                                                now; else deletionTimestamp
                                                set, MODIFIED, then DELETED
                                                after grace * --grace-scale)
   GET    /api/v1/namespaces/{ns}/pods          labelSelector (=, ==, !=,
                                                key, !key), fieldSelector
                                                (metadata.name=), a PodList
                                                whose items have no kind
   GET    ...pods?watch=1                       resourceVersion (events
                                                after it; older than the
                                                kept history: ERROR 410
                                                Expired), allowWatchBookmarks
                                                (BOOKMARK every
                                                --bookmark-interval s),
                                                timeoutSeconds; chunked, with
                                                chunks that split and coalesce
                                                events (seeded by --seed)
THE ADMIN'S OBJECTS (what `paddock kubernetes manifest` prints), kept as
given, without controllers:
   GET    /api/v1/namespaces[/{name}]           Namespace (status.phase Active)
   GET    /api/v1/namespaces/{ns}/{serviceaccounts|resourcequotas|limitranges}[/{name}]
   GET    /apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies[/{name}]
                                                200 the object, or a List whose
                                                items have no kind; 404 NotFound
   POST   the collection                        201; 409 AlreadyExists; 404 when
                                                the namespace does not exist; 400
                                                (kind or namespace mismatch, not
                                                JSON); 422 (no name)
   DELETE .../{name}                            200 the object, gone at once
--objects F is a JSON List of such objects, there from the start.
--forbid-namespace NS answers these in NS (and namespace NS) with 403 too.

A created pod is Pending; --start-delay seconds later it is Running with
its conditions and container states (MODIFIED).  --forbid-namespace NS
answers 403 Forbidden for any request in NS.  Every change increments one
resourceVersion counter.

   POST   /apis/authentication.k8s.io/v1/tokenreviews
                                                a TokenReview (spec.token,
                                                spec.audiences): 201 with
                                                status.authenticated, the
                                                service account's user and
                                                extra pod-name and pod-uid, as
                                                the API answers for a bound
                                                (projected) token; false with
                                                status.error for a token never
                                                issued, expired, of another
                                                audience, or whose pod is gone

TOKENS.  token_issue(ns, pod, uid, sa, audience, seconds) makes a bound
token (what the kubelet writes into a projected volume), valid while it
has not expired and the pod of that uid exists.

TEST CONTROLS (authenticated as the API): POST /_fake/compact (forget the
event history: older resourceVersions are 410), POST
/_fake/pods/{ns}/{name}/status (merges the JSON body into the pod's status,
MODIFIED), POST /_fake/tokens (body {"namespace", "pod", "uid",
"serviceAccount", "audience", "seconds"}: 201 {"token": T}; "uid" may name
a pod that does not exist, for a token of a pod gone).

FAULTS.  --faults names a file of JSON lines, read again when it grows;
each line is used at most "times" (default 1) times, the first line that
matches a request wins:
  {"method": "POST", "path": "regex", "watch": true|false,
   "action": ACTION, ...}
  ACTION "status":   answer "code" (a Status body of that code, "reason"
                     and "message" optional) with "retry_after" if given
  ACTION "drop":     a watch: close the connection after "after" events,
                     mid-chunk
  ACTION "gone":     a watch: an ERROR event with a 410 Status
  ACTION "garbage":  a watch: a line that is not JSON
  ACTION "huge":     a watch: "size" bytes without a newline
  ACTION "stall":    wait "seconds" before answering
  ACTION "echo":     answer 500 with a Status whose message quotes the
                     request's Authorization header (a hostile server)
A request that comes sooner than the Retry-After it was given is logged
with "violation": "ignored Retry-After".

LOG.  --log gets one JSON line per request: method, path, query (parsed),
headers (Authorization replaced by "Bearer <sha256 prefix>"), body (parsed
JSON or text), auth (who it was), status, fault, violation, and for a
watch (recorded when its stream ends) split (a chunk ended inside an
event) and coalesced (a chunk held the end of one event and the start of
the next).  Other answers are recorded before they are sent.
"""

import argparse
import base64
import copy
import hashlib
import json
import os
import random
import re
import select
import socket
import ssl
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ARGS = None
LOCK = threading.Condition()
STATE = {
    "rv": 100,
    "pods": {},           # (ns, name) -> pod
    "events": [],         # (rv, type, pod)
    "oldest": 0,          # events before this rv are forgotten
    "retry_at": {},       # (method, path) -> mono time allowed again
    "tokens": {},         # token -> {ns, pod, uid, sa, audience, exp}
}
FAULTS = {"lines": [], "used": [], "size": -1}
# The admin's objects: (resource, ns or "", name) -> object.
OBJECTS = {}
LOGF = None
RNG = random.Random(1)


def now_iso():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_body(code, reason, message, details=None):
    b = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
         "message": message, "reason": reason, "code": code}
    if details:
        b["details"] = details
    return b


REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
           409: "Conflict", 410: "Expired", 422: "Invalid", 429: "TooManyRequests",
           500: "InternalError", 503: "ServiceUnavailable"}


def load_faults():
    path = ARGS.faults
    if not path or not os.path.exists(path):
        return
    size = os.path.getsize(path)
    if size == FAULTS["size"]:
        return
    FAULTS["size"] = size
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    for _ in range(len(lines) - len(FAULTS["lines"])):
        FAULTS["used"].append(0)
    FAULTS["lines"] = lines


def take_fault(method, path, watch):
    with LOCK:
        load_faults()
        for i, f in enumerate(FAULTS["lines"]):
            if FAULTS["used"][i] >= f.get("times", 1):
                continue
            if f.get("method") and f["method"] != method:
                continue
            if f.get("path") and not re.search(f["path"], path):
                continue
            if "watch" in f and bool(f["watch"]) != watch:
                continue
            FAULTS["used"][i] += 1
            return f
    return None


def bump(kind, pod):
    """Under LOCK: a change, its event, watchers woken."""
    STATE["rv"] += 1
    pod["metadata"]["resourceVersion"] = str(STATE["rv"])
    STATE["events"].append((STATE["rv"], kind, copy.deepcopy(pod)))
    LOCK.notify_all()


def token_issue(ns, pod, uid, sa, audience, seconds):
    """A bound service-account token for the pod of that uid: random, as
    opaque to paddock as a real one (a JWT paddock never parses)."""
    tok = "eyJ" + base64.urlsafe_b64encode(os.urandom(48)).decode().rstrip("=")
    with LOCK:
        STATE["tokens"][tok] = {"ns": ns, "pod": pod, "uid": uid, "sa": sa,
                                "audience": audience, "exp": time.time() + seconds}
    return tok


def token_review(body):
    """The TokenReview the API would answer for body (a dict)."""
    spec = body.get("spec") or {}
    tok, auds = spec.get("token", ""), spec.get("audiences") or []
    out = {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
           "metadata": {"creationTimestamp": None}, "spec": spec, "status": {}}
    with LOCK:
        t = STATE["tokens"].get(tok)
        pod = t and STATE["pods"].get((t["ns"], t["pod"]))
    err = None
    if not t:
        err = "[invalid bearer token, token lookup failed]"
    elif time.time() >= t["exp"]:
        err = "[invalid bearer token, Token has expired.]"
    elif auds and t["audience"] not in auds:
        err = "[invalid bearer token, token audiences %s is invalid for the target audiences %s]" % (
            json.dumps([t["audience"]]), json.dumps(auds))
    elif not pod or pod["metadata"]["uid"] != t["uid"]:
        err = "[invalid bearer token, pod \"%s\" not found]" % t["pod"]
    if err:
        out["status"] = {"authenticated": False, "error": err, "user": {}}
        return out
    out["status"] = {
        "authenticated": True,
        "audiences": [t["audience"]],
        "user": {
            "username": "system:serviceaccount:%s:%s" % (t["ns"], t["sa"]),
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, t["ns"] + "/" + t["sa"])),
            "groups": ["system:serviceaccounts", "system:serviceaccounts:" + t["ns"],
                       "system:authenticated"],
            "extra": {
                "authentication.kubernetes.io/pod-name": [t["pod"]],
                "authentication.kubernetes.io/pod-uid": [t["uid"]],
            },
        },
    }
    return out


NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def selector_match(sel, labels):
    for term in filter(None, (t.strip() for t in sel.split(","))):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "==" in term or "=" in term:
            k, v = re.split("==?", term, 1)
            if labels.get(k) != v:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def field_match(sel, pod):
    for term in filter(None, sel.split(",")):
        k, _, v = term.partition("=")
        if k == "metadata.name" and pod["metadata"]["name"] != v:
            return False
        if k == "metadata.namespace" and pod["metadata"]["namespace"] != v:
            return False
    return True


def start_pod(ns, name, uid):
    time.sleep(ARGS.start_delay)
    with LOCK:
        pod = STATE["pods"].get((ns, name))
        if not pod or pod["metadata"]["uid"] != uid or "deletionTimestamp" in pod["metadata"]:
            return
        t = now_iso()
        pod["status"] = {
            "phase": "Running", "podIP": "10.0.0.7", "hostIP": "10.0.1.1", "startTime": t,
            "qosClass": "Burstable",
            "conditions": [{"type": c, "status": "True", "lastProbeTime": None,
                            "lastTransitionTime": t}
                           for c in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"name": c["name"], "image": c.get("image", ""),
                                   "imageID": "", "ready": True, "restartCount": 0,
                                   "started": True, "state": {"running": {"startedAt": t}},
                                   "lastState": {}}
                                  for c in pod["spec"].get("containers", [])],
        }
        bump("MODIFIED", pod)


def finish_delete(ns, name, uid, delay):
    time.sleep(delay)
    with LOCK:
        pod = STATE["pods"].get((ns, name))
        if pod and pod["metadata"]["uid"] == uid:
            del STATE["pods"][(ns, name)]
            bump("DELETED", pod)


# ---- the admin's objects (namespaces, networkpolicies, serviceaccounts,
# resourcequotas, limitranges) ----

# resource -> (kind, apiVersion, API group, namespaced)
ADMIN_KINDS = {
    "namespaces": ("Namespace", "v1", "", False),
    "serviceaccounts": ("ServiceAccount", "v1", "", True),
    "resourcequotas": ("ResourceQuota", "v1", "", True),
    "limitranges": ("LimitRange", "v1", "", True),
    "networkpolicies": ("NetworkPolicy", "networking.k8s.io/v1", "networking.k8s.io", True),
}
ADMIN_PATH = re.compile(
    r"^(?:/api/v1|/apis/networking\.k8s\.io/v1)(?:/namespaces/([^/]+))?/"
    r"(namespaces|serviceaccounts|resourcequotas|limitranges|networkpolicies)(?:/([^/]+))?$")


def admin_stored(resource, ns, obj):
    """Under LOCK: obj as the API keeps it (uid, resourceVersion, ...)."""
    kind, api, _, namespaced = ADMIN_KINDS[resource]
    o = copy.deepcopy(obj)
    o["kind"], o["apiVersion"] = kind, api
    md = o.setdefault("metadata", {})
    STATE["rv"] += 1
    md.update({"uid": str(uuid.uuid4()), "creationTimestamp": now_iso(),
               "resourceVersion": str(STATE["rv"])})
    if namespaced:
        md["namespace"] = ns
    if resource == "namespaces":
        md.setdefault("labels", {})["kubernetes.io/metadata.name"] = md["name"]
        o["spec"] = {"finalizers": ["kubernetes"]}
        o["status"] = {"phase": "Active"}
    if resource == "resourcequotas":
        hard = (o.get("spec") or {}).get("hard") or {}
        o["status"] = {"hard": dict(hard), "used": {k: "0" for k in hard}}
    return o


def admin_load(path):
    """--objects: a List of admin objects, stored as if created."""
    with open(path) as f:
        items = json.load(f).get("items", [])
    by_kind = {v[0]: k for k, v in ADMIN_KINDS.items()}
    with LOCK:
        for it in items:
            res = by_kind[it["kind"]]
            ns = (it.get("metadata") or {}).get("namespace", "") if ADMIN_KINDS[res][3] else ""
            OBJECTS[(res, ns, it["metadata"]["name"])] = admin_stored(res, ns, it)


def admin_gr(resource):
    """The group-qualified resource of the API's messages."""
    group = ADMIN_KINDS[resource][2]
    return resource + ("." + group if group else "")


def admin_route(h, method, path, body, user):
    """Answers a request for an admin object; False when path is not one."""
    m = ADMIN_PATH.match(path)
    if not m:
        return False
    ns, resource, name = m.group(1), m.group(2), m.group(3)
    kind, api, group, namespaced = ADMIN_KINDS[resource]
    # /api/v1/namespaces/{name} is the namespace itself; networkpolicies
    # live only under their group, the rest only under /api/v1.
    if resource == "namespaces" and ns is not None:
        return False
    if bool(group) != path.startswith("/apis/") or (namespaced and ns is None):
        return False
    ns = ns or ""
    gr = admin_gr(resource)
    forbid = ARGS.forbid_namespace
    if forbid and (ns == forbid or (resource == "namespaces" and name == forbid)):
        verb = {"POST": "create", "DELETE": "delete"}.get(method, "get" if name else "list")
        h.send_status(403, '%s%s is forbidden: User "%s" cannot %s resource "%s" in API group '
                      '"%s"%s' % (gr, ' "%s"' % name if name else "", user, verb, resource, group,
                                  ' in the namespace "%s"' % (ns or name) if ns or name else ""))
        return True
    key = (resource, ns, name)
    if method == "GET" and name:
        with LOCK:
            o = copy.deepcopy(OBJECTS.get(key))
        if o is None:
            h.send_status(404, '%s "%s" not found' % (gr, name),
                          details={"name": name, "group": group, "kind": resource}
                          if group else {"name": name, "kind": resource})
        else:
            h.send_json(200, o)
        return True
    if method == "GET":
        with LOCK:
            items = [copy.deepcopy(o) for (r, n, _), o in sorted(OBJECTS.items())
                     if r == resource and (not namespaced or n == ns)]
            rv = str(STATE["rv"])
        for o in items:
            o.pop("kind", None)
            o.pop("apiVersion", None)
        h.send_json(200, {"kind": kind + "List", "apiVersion": api,
                          "metadata": {"resourceVersion": rv}, "items": items})
        return True
    if method == "DELETE" and name:
        with LOCK:
            o = OBJECTS.pop(key, None)
        if o is None:
            h.send_status(404, '%s "%s" not found' % (gr, name),
                          details={"name": name, "group": group, "kind": resource}
                          if group else {"name": name, "kind": resource})
        else:
            h.send_json(200, o)
        return True
    if method == "POST" and not name:
        if not isinstance(body, dict):
            h.send_status(400, "the body of the request was in an unknown format - accepted "
                          "media types include: application/json, application/yaml")
            return True
        if body.get("kind") != kind or body.get("apiVersion") != api:
            h.send_status(400, "the API version in the data (%s) does not match the expected API "
                          "version (%s)" % (body.get("apiVersion"), api))
            return True
        meta = body.get("metadata") or {}
        oname = meta.get("name", "")
        if namespaced and meta.get("namespace") and meta["namespace"] != ns:
            h.send_status(400, "the namespace of the provided object does not match the "
                          "namespace sent on the request")
            return True
        if not oname or len(oname) > 253 or not NAME_RE.match(oname):
            h.send_status(422, '%s "%s" is invalid: metadata.name: Required value: name or '
                          'generateName is required' % (kind, oname),
                          details={"name": oname, "group": group, "kind": kind,
                                   "causes": [{"reason": "FieldValueRequired",
                                               "message": "Required value: name or generateName "
                                                          "is required",
                                               "field": "metadata.name"}]})
            return True
        with LOCK:
            if namespaced and ("namespaces", "", ns) not in OBJECTS:
                h.send_status(404, 'namespaces "%s" not found' % ns,
                              details={"name": ns, "kind": "namespaces"})
                return True
            if (resource, ns, oname) in OBJECTS:
                h.send_status(409, '%s "%s" already exists' % (gr, oname), "AlreadyExists",
                              details={"name": oname, "group": group, "kind": resource}
                              if group else {"name": oname, "kind": resource})
                return True
            o = admin_stored(resource, ns, body)
            OBJECTS[(resource, ns, oname)] = o
            out = copy.deepcopy(o)
        h.send_json(201, out)
        return True
    h.send_status(405, "the server does not allow this method on the requested resource",
                  "MethodNotAllowed")
    return True


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-api-server"

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        self.connection.settimeout(15)
        try:
            self.connection.do_handshake()
        except (ssl.SSLError, OSError):
            self.close_connection = True
            self.rfile = open(os.devnull, "rb")

    # ---- answering ----
    def send_json(self, code, body, extra=None):
        data = json.dumps(body).encode()
        # Recorded before the answer goes: a client that got it finds it
        # in the log.
        self.rec["status"] = code
        self.log_rec()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Audit-Id", str(uuid.uuid4()))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def send_status(self, code, message, reason=None, details=None, extra=None):
        self.send_json(code, status_body(code, reason or REASONS.get(code, "Unknown"), message,
                                         details), extra)

    # ---- the request ----
    def who(self):
        auth = self.headers.get("Authorization")
        if auth is not None:
            tok = auth[7:] if auth.startswith("Bearer ") else None
            want = None
            if ARGS.token_file and os.path.exists(ARGS.token_file):
                with open(ARGS.token_file) as f:
                    want = f.read().strip()
            if tok and want and tok == want:
                return "token:" + hashlib.sha256(tok.encode()).hexdigest()[:12]
            return None
        try:
            cert = self.connection.getpeercert()
        except (AttributeError, ValueError):
            cert = None
        if cert:
            for rdn in cert.get("subject", ()):
                for k, v in rdn:
                    if k == "commonName":
                        return "cert:" + v
        return None

    def handle_any(self, method):
        u = urlsplit(self.path)
        q = parse_qs(u.query)
        self.q = {k: v[-1] for k, v in q.items()}
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        hdrs = {}
        for k, v in self.headers.items():
            if k.lower() == "authorization":
                v = "Bearer <%s>" % hashlib.sha256(v[7:].encode()).hexdigest()[:12]
            hdrs[k] = v
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.rec = {"method": method, "path": u.path, "query": self.q, "headers": hdrs,
                    "body": body, "time": time.time()}
        watch = self.q.get("watch") in ("1", "true")
        key = (method, u.path)
        with LOCK:
            at = STATE["retry_at"].pop(key, None)
        if at is not None and time.monotonic() < at - 0.05:
            self.rec["violation"] = "ignored Retry-After"
        try:
            self.route(method, u.path, raw, body, watch)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout):
            self.close_connection = True
        finally:
            self.log_rec()

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def log_rec(self):
        if self.rec.get("logged"):
            return
        self.rec["logged"] = True
        with LOCK:
            LOGF.write(json.dumps({k: v for k, v in self.rec.items() if k != "logged"}) + "\n")
            LOGF.flush()

    def route(self, method, path, raw, body, watch):
        user = self.who()
        self.rec["auth"] = user
        if not user:
            self.send_status(401, "Unauthorized")
            return
        f = take_fault(method, path, watch)
        if f:
            self.rec["fault"] = f["action"]
            if f["action"] == "stall":
                # Recorded now: the client has given up by the answer.
                self.log_rec()
                time.sleep(f.get("seconds", 5))
            elif f["action"] == "status":
                code = f["code"]
                extra = {}
                if "retry_after" in f:
                    extra["Retry-After"] = str(f["retry_after"])
                    try:
                        wait = float(f["retry_after"])
                        with LOCK:
                            STATE["retry_at"][(method, path)] = time.monotonic() + wait
                    except ValueError:
                        pass
                self.send_status(code, f.get("message", "injected"), f.get("reason"), extra=extra)
                return
            elif f["action"] == "echo":
                self.send_status(500, "internal error while handling %s"
                                 % self.headers.get("Authorization", ""))
                return
        m = re.match(r"^/_fake/(compact|pods/([^/]+)/([^/]+)/status)$", path)
        if m and method == "POST":
            return self.fake(m, body)
        if path == "/_fake/tokens" and method == "POST" and isinstance(body, dict):
            tok = token_issue(body.get("namespace", "default"), body.get("pod", ""),
                              body.get("uid", ""), body.get("serviceAccount", "default"),
                              body.get("audience", "paddock"), float(body.get("seconds", 3600)))
            self.send_json(201, {"token": tok})
            return
        if path == "/apis/authentication.k8s.io/v1/tokenreviews" and method == "POST":
            if not isinstance(body, dict) or body.get("kind") != "TokenReview":
                self.send_status(400, "the body of the request was in an unknown format - "
                                 "accepted media types include: application/json, "
                                 "application/yaml")
                return
            self.send_json(201, token_review(body))
            return
        if admin_route(self, method, path, body, user):
            return
        m = re.match(r"^/api/v1/namespaces/([^/]+)/pods(?:/([^/]+))?$", path)
        if not m:
            self.send_status(404, "the server could not find the requested resource")
            return
        ns, name = m.group(1), m.group(2)
        if ARGS.forbid_namespace and ns == ARGS.forbid_namespace:
            verb = {"POST": "create", "DELETE": "delete"}.get(method, "watch" if watch else
                                                              "get" if name else "list")
            self.send_status(403, 'pods%s is forbidden: User "%s" cannot %s resource "pods" in API '
                             'group "" in the namespace "%s"' % (' "%s"' % name if name else "",
                                                                 user, verb, ns))
            return
        if method == "POST" and not name:
            return self.create(ns, raw, body)
        if method == "GET" and name:
            with LOCK:
                pod = copy.deepcopy(STATE["pods"].get((ns, name)))
            if not pod:
                self.send_status(404, 'pods "%s" not found' % name,
                                 details={"name": name, "kind": "pods"})
            else:
                self.send_json(200, pod)
            return
        if method == "DELETE" and name:
            return self.delete(ns, name, body)
        if method == "GET" and not name and watch:
            return self.watch(ns, f)
        if method == "GET" and not name:
            return self.list(ns)
        self.send_status(405, "the server does not allow this method on the requested resource",
                         "MethodNotAllowed")

    def fake(self, m, body):
        with LOCK:
            if m.group(1) == "compact":
                STATE["oldest"] = STATE["rv"]
                STATE["events"] = []
                self.send_json(200, {"compacted": STATE["rv"]})
                return
            pod = STATE["pods"].get((m.group(2), m.group(3)))
            if not pod:
                self.send_status(404, "no such pod")
                return
            pod.setdefault("status", {}).update(body or {})
            bump("MODIFIED", pod)
            self.send_json(200, pod)

    def create(self, ns, raw, body):
        if not isinstance(body, dict):
            self.send_status(400, "the body of the request was in an unknown format - accepted "
                             "media types include: application/json, application/yaml")
            return
        meta = body.get("metadata") or {}
        name = meta.get("name", "")
        if meta.get("namespace") and meta["namespace"] != ns:
            self.send_status(400, "the namespace of the provided object does not match the "
                             "namespace sent on the request")
            return
        causes = []
        if not name or len(name) > 253 or not NAME_RE.match(name):
            causes.append({"reason": "FieldValueInvalid", "field": "metadata.name",
                           "message": "Invalid value: %s: a lowercase RFC 1123 subdomain must "
                           "consist of lower case alphanumeric characters, '-' or '.'" %
                           json.dumps(name)})
        if not (body.get("spec") or {}).get("containers"):
            causes.append({"reason": "FieldValueRequired", "field": "spec.containers",
                           "message": "Required value"})
        if causes:
            self.send_status(422, 'Pod "%s" is invalid: %s' % (
                name, ", ".join("%s: %s" % (c["field"], c["message"]) for c in causes)),
                details={"name": name, "kind": "Pod", "causes": causes})
            return
        with LOCK:
            if (ns, name) in STATE["pods"]:
                self.send_status(409, 'pods "%s" already exists' % name, "AlreadyExists",
                                 details={"name": name, "kind": "pods"})
                return
            pod = copy.deepcopy(body)
            pod["kind"], pod["apiVersion"] = "Pod", "v1"
            md = pod.setdefault("metadata", {})
            md.update({"namespace": ns, "uid": str(uuid.uuid4()), "creationTimestamp": now_iso(),
                       "generation": 1})
            pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
            STATE["pods"][(ns, name)] = pod
            bump("ADDED", pod)
            out = copy.deepcopy(pod)
        threading.Thread(target=start_pod, args=(ns, name, md["uid"]), daemon=True).start()
        self.send_json(201, out)

    def delete(self, ns, name, body):
        opts = body if isinstance(body, dict) else {}
        grace = opts.get("gracePeriodSeconds")
        with LOCK:
            pod = STATE["pods"].get((ns, name))
            if not pod:
                self.send_status(404, 'pods "%s" not found' % name,
                                 details={"name": name, "kind": "pods"})
                return
            uid = (opts.get("preconditions") or {}).get("uid")
            if uid and uid != pod["metadata"]["uid"]:
                self.send_status(409, 'Operation cannot be fulfilled on Pod "%s": Precondition '
                                 'failed: UID in precondition: %s, UID in object meta: %s'
                                 % (name, uid, pod["metadata"]["uid"]), "Conflict",
                                 details={"name": name, "kind": "Pod"})
                return
            if grace is None:
                grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
            if grace == 0:
                del STATE["pods"][(ns, name)]
                pod["metadata"]["deletionTimestamp"] = now_iso()
                pod["metadata"]["deletionGracePeriodSeconds"] = 0
                bump("DELETED", pod)
            elif "deletionTimestamp" not in pod["metadata"]:
                pod["metadata"]["deletionTimestamp"] = now_iso()
                pod["metadata"]["deletionGracePeriodSeconds"] = grace
                bump("MODIFIED", pod)
                threading.Thread(target=finish_delete, daemon=True,
                                 args=(ns, name, pod["metadata"]["uid"],
                                       grace * ARGS.grace_scale)).start()
            out = copy.deepcopy(pod)
        self.send_json(200, out)

    def matching(self, ns):
        ls, fs = self.q.get("labelSelector", ""), self.q.get("fieldSelector", "")
        return lambda p: (p["metadata"]["namespace"] == ns and
                          selector_match(ls, p["metadata"].get("labels") or {}) and
                          field_match(fs, p))

    def list(self, ns):
        match = self.matching(ns)
        with LOCK:
            items = [copy.deepcopy(p) for p in STATE["pods"].values() if match(p)]
            rv = str(STATE["rv"])
        for p in items:
            p.pop("kind", None)
            p.pop("apiVersion", None)
        self.send_json(200, {"kind": "PodList", "apiVersion": "v1",
                             "metadata": {"resourceVersion": rv}, "items": items})

    # ---- the watch ----
    def chunk(self, data):
        if data:
            if not data.endswith(b"\n"):
                self.rec["split"] = True
            if b"\n" in data[:-1]:
                self.rec["coalesced"] = True
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def emit(self, pending, final=False):
        """Sends what is pending in chunks cut anywhere (one event split
        across several); unless final, the last few bytes wait for the
        next event (two events in one chunk)."""
        keep = 0 if final else 8
        while len(pending) > keep:
            cut = RNG.randint(1, max(1, min(len(pending) - keep, 96)))
            if RNG.random() < 0.3:
                cut = len(pending) - keep
            self.chunk(bytes(pending[:cut]))
            del pending[:cut]
            time.sleep(0.002)

    def client_gone(self):
        r, _, _ = select.select([self.connection], [], [], 0)
        return bool(r)

    def watch(self, ns, fault):
        match = self.matching(ns)
        rv = self.q.get("resourceVersion", "")
        bookmarks = self.q.get("allowWatchBookmarks") == "true"
        timeout = float(self.q.get("timeoutSeconds", "30"))
        end = time.monotonic() + min(timeout, 60)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.rec["status"] = 200
        pending = bytearray()
        sent = 0
        action = fault["action"] if fault else None

        def line(ev):
            pending.extend(json.dumps(ev).encode() + b"\n")

        with LOCK:
            if rv in ("", "0"):
                queue = [("ADDED", copy.deepcopy(p)) for p in STATE["pods"].values() if match(p)]
                last = STATE["rv"]
            elif int(rv) < STATE["oldest"]:
                queue = None
                last = STATE["rv"]
            else:
                last = int(rv)
                queue = []
        if action == "gone":
            line({"type": "ERROR", "object": status_body(
                410, "Expired", "too old resource version: %s (%d)" % (rv, last + 1))})
            self.emit(pending, True)
            self.chunk(b"")
            return
        if action == "garbage":
            pending.extend(b'{"type": "MODIFIED", "object": {"metadata": \n')
            self.emit(pending, True)
            self.chunk(b"")
            return
        if action == "huge":
            self.chunk(b'{"type":"MODIFIED","object":{"x":"')
            block = b"A" * 65536
            left = fault.get("size", 1100000)
            while left > 0:
                self.chunk(block[:left])
                left -= len(block)
            self.chunk(b"")
            return
        if queue is None:
            line({"type": "ERROR", "object": status_body(
                410, "Expired", "too old resource version: %s (%d)" % (rv, STATE["oldest"]))})
            self.emit(pending, True)
            self.chunk(b"")
            return
        next_bm = time.monotonic() + ARGS.bookmark_interval
        held = time.monotonic()
        queue_sent = bool(queue)
        while True:
            with LOCK:
                evs = [(r, t, p) for (r, t, p) in STATE["events"] if r > last and match(p)]
                if evs:
                    last = evs[-1][0]
                else:
                    last = max(last, STATE["rv"]) if not queue else last
                if not evs and not queue:
                    LOCK.wait(0.05)
            for t, p in queue:
                line({"type": t, "object": p})
                sent += 1
            queue = []
            for r, t, p in evs:
                line({"type": t, "object": p})
                sent += 1
            if bookmarks and time.monotonic() >= next_bm:
                with LOCK:
                    cur = str(STATE["rv"])
                line({"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                                     "metadata": {"resourceVersion": cur}}})
                held = time.monotonic()
                next_bm = time.monotonic() + ARGS.bookmark_interval
            if action == "drop" and sent >= fault.get("after", 1) and pending:
                # Half of what is pending, then the connection closes.
                half = max(1, len(pending) // 2)
                self.chunk(bytes(pending[:half]))
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if evs or queue_sent:
                held = time.monotonic()
            queue_sent = False
            self.emit(pending, time.monotonic() - held > 0.4)
            if time.monotonic() >= end or self.client_gone():
                break
        self.emit(pending, True)
        self.chunk(b"")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass


def main():
    global ARGS, LOGF
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--client-ca")
    ap.add_argument("--token-file")
    ap.add_argument("--faults")
    ap.add_argument("--grace-scale", type=float, default=1.0)
    ap.add_argument("--bookmark-interval", type=float, default=60.0)
    ap.add_argument("--start-delay", type=float, default=0.1)
    ap.add_argument("--forbid-namespace")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--objects")
    ARGS = ap.parse_args()
    if ARGS.objects:
        admin_load(ARGS.objects)
    RNG.seed(ARGS.seed)
    LOGF = open(ARGS.log, "a")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    if ARGS.client_ca:
        ctx.load_verify_locations(ARGS.client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
    srv = Server(("127.0.0.1", 0), Handler)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, ARGS.port_file)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
