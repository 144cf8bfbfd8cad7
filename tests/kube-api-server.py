#!/usr/bin/env python3
"""kube-api-server: a loopback contract server for the subset of the
Kubernetes API that paddock's client (src/sandbox/kube.c) uses, with the
real API's status bodies and semantics, for tests/test-kube.c,
tests/kube-kubelet.test, tests/kube-kubectl.test and, with its fake
kubelet, the kubernetes backend's tests (tests/kube.test,
tests/kube-limits.test).

Usage: kube-api-server.py --port-file F --log F --cert F --key F
           [--client-ca F] [--token-file F] [--faults F]
           [--grace-scale S] [--bookmark-interval S] [--start-delay S]
           [--forbid-namespace NS] [--seed N]
           [--objects FILE]
           [--kubelet --kubelet-state DIR --bridge PATH [--bwrap PATH]
            [--kubelet-log F] [--door-connections F]]
       kube-api-server.py --reap-cgroups    (the server's own helper)

Listens on 127.0.0.1 (a free port, written to --port-file once it
listens), TLS only, with --cert/--key (a test CA's, made at test time).

AUTH.  Authorization: Bearer T is accepted when T is the content of
--token-file as it is at that request (the file is read again for each
request, so a test can rotate it); a bad token is 401 even with a
certificate.  Without a token, a client certificate signed by
--client-ca is accepted (its CN is the user).  Else 401.

THE API.  Pods as the real API serves them:
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
THE ADMIN'S OBJECTS, as preflight, doctor and kubectl read them:
namespaces, and in a namespace serviceaccounts, resourcequotas,
limitranges (/api/v1) and networkpolicies (/apis/networking.k8s.io/v1):
   GET    .../{resource}/{name}   200 the object; 404 NotFound, the API's
                                  message ('networkpolicies.networking.k8s.io
                                  "x" not found') and details
   GET    .../{resource}          a {Kind}List (labelSelector), items
                                  without kind; without a namespace: all
   POST   .../{resource}          201; 409 AlreadyExists; 422 Invalid (bad
                                  name); 400 (kind or namespace mismatch);
                                  404 when the namespace does not exist;
                                  dryRun=All answers without storing
   DELETE .../{resource}/{name}   gone at once: 200 a Status Success with
                                  details (a Namespace: 200 the object,
                                  phase Terminating); 404 NotFound
--forbid-namespace NS: 403 Forbidden for these in NS, and for the
Namespace NS itself.
Each gets a uid, creationTimestamp and resourceVersion; a Namespace its
kubernetes.io/metadata.name label, spec.finalizers and phase Active.
--objects FILE: a JSON object or List of them, held from the start (for a
test of preflight: e.g. the output of `paddock kubernetes manifest --json`).
Fields are stored as sent: no schema, no defaults.

DISCOVERY, for kubectl (1.20 to 1.32): /api, /apis, /api/v1,
/apis/networking.k8s.io/v1, /apis/authentication.k8s.io/v1 (the legacy
documents kubectl falls back to, APIVersions, APIGroupList,
APIResourceList), /version; /openapi/v3 and a document per group version
with only a PATCH operation per kind carrying
x-kubernetes-group-version-kind and the fieldValidation parameter (so
kubectl validates on the server, sending ?fieldValidation=Strict, which is
accepted and not enforced); /openapi/v2 is an empty protobuf Document
(kubectl's client-side validation of a List then has no schema and checks
nothing: the schemas are tests/kube-spec.test's).  An Accept of
as=Table is answered with the object or list itself (kubectl prints its
name and age).

A created pod is Pending; --start-delay seconds later it is Running with
its conditions and container states (MODIFIED) (with --kubelet, see THE
KUBELET).  --forbid-namespace NS
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

THE KUBELET (--kubelet).  A created pod is run for real instead of
being marked Running: the init containers' `cp -- SRC DST` (the runner
image's copy; SRC a host path) is done by the kubelet into a host folder
for each emptyDir an init container mounts; the first container runs
under bwrap (--bwrap) with its runAsUser/runAsGroup (a user namespace,
root or not), capabilities dropped, its own pid, ipc, uts and network
namespaces (only lo), the host's /usr and the /etc pieces paddock's own
bwrap backend shows, /etc/passwd, group, hosts, hostname and resolv.conf
(from dnsConfig) of its own, a tmpfs of its sizeLimit at each other
emptyDir's mount (/tmp 1777), the init containers' folders bound (subPath
a file of one), a read-only root when readOnlyRootFilesystem, its
workingDir, and an environment of exactly its env plus PATH, HOSTNAME and
KUBERNETES_SERVICE_HOST/PORT (10.96.0.1:443), as a kubelet sets them.
A projected serviceAccountToken volume holds a token_issue() token of its
audience and expirationSeconds, written with defaultMode (renamed into
place), written again at 80% of its life and on a fault "rotate".
The command is the pod's pid 1; but when the env has
PADDOCK_FRONT_DOOR=127.0.0.1:PORT, pid 1 is paddock-bridge (--bridge,
bound at /.kubelet/bridge), the command its child, listening on
the pod's 127.0.0.1:PORT and relaying to the unix socket
/.kubelet/door/PORT, which the kubelet relays to the host's
127.0.0.1:PORT: the front door, and nothing else of the host, is reached.
GET .../pods/{name}/log: the container's output (stdout and stderr, the
last 64 KiB, kept once it ends while the pod exists), text/plain, as
kubectl logs reads it; 400 while it has not started (and without
--kubelet).
Status: Pending with the init containers' and the container's states as
they go, Running (Ready, containerStatuses running) once started,
Succeeded or Failed when the process ends (terminated exitCode, reason
Completed or Error, and, with terminationMessagePolicy
FallbackToLogsOnError, the end of its output as the message); a pod it
cannot run (a volume other than emptyDir or a projected token, a subPath with "..", an env valueFrom) stays Pending,
the container waiting CreateContainerConfigError with the reason; an init
container other than that cp, or a cp that fails, ends terminated
(exitCode 1, reason Error, cp's message) and the pod Failed;
activeDeadlineSeconds (times --grace-scale) kills it: Failed, reason
DeadlineExceeded.  A DELETE with a grace period sends
SIGTERM to the pod's pid 1 (the bridge passes it on), SIGKILL after the
grace period (times --grace-scale); the pod is DELETED once the process is
gone, after its final status.  Grace 0: DELETED now, killed now.  A pod's
host state (--kubelet-state/<uid>: volumes, relay, log of its output) is
removed when it ends.  --door-connections F: a line "POD UID" for each
connection a pod makes through its relay to the front door.  Killing the
server kills every pod (bwrap's --die-with-parent).  --kubelet-log F: a JSON line per pod that reached
Running, {"pod", "uid", "running"} (unix time, time.time() as the request
log's "time"), for bench/kube.sh: a pod's own start is its POST to this.
Not done: probes, restarts (restartPolicy is taken as Never).

RESOURCES (--kubelet).  Each pod gets cgroup v1 memory and cpu cgroups of
its own, pod<uid> below the server's own cgroup in each hierarchy, with
its first container's resources as the kubelet sets them:
memory.limit_in_bytes (and memory.memsw.limit_in_bytes where the kernel
has it) the memory limit; cpu.cfs_period_us 100000, cpu.cfs_quota_us
milli-cpus * 100 (at least 1000; -1 without a cpu limit), cpu.shares from
the request.  bwrap starts in them (a shell enters them, then execs
bwrap), so everything of the pod is counted, its tmpfs emptyDirs too
(files written there are memory, as a medium: Memory emptyDir's are).
Memory: the kernel's OOM killer is off in the pod's cgroup
(memory.oom_control), so a process over the limit waits (under_oom); the
kubelet, polling every 0.05 s, then kills the whole container at once, as
cgroup v2's memory.oom.group does (kubelet >= 1.28): no process of the
pod sees another die; the container terminated reason OOMKilled, exitCode
137, the pod Failed.  Ephemeral storage: every 0.5 s (the kubelet: every
10 s) the pod's use, its emptyDirs (a tmpfs's use as the pod's mount
namespace shows it; a folder's blocks) and its log, against its
containers' resources.limits["ephemeral-storage"] together (or an init
container's, the larger): past it the pod is evicted as the kubelet does,
at once: Failed, reason Evicted, message "Pod ephemeral local storage
usage exceeds the total limit of containers Q. ", no DisruptionTarget
condition, the container terminated exitCode 137.  An emptyDir's own
sizeLimit is its tmpfs's size (a write past it fails with ENOSPC; the
kubelet would evict).  The cgroups are removed once the pod's processes are
gone; should the server die first, a helper it started (the reaper, this
script with --reap-cgroups, reading which cgroups exist on a pipe) removes
them when the pipe closes.  Where the cgroups cannot be made (not root, no
writable v1 memory hierarchy; or no cpu one) the server says so once on
stderr, "kube-api-server: kubelet: no cgroups for pods (WHY): pods run
without resource limits (memory, cpu)", and runs pods unlimited (the
ephemeral storage is still measured, through /proc/PID/root of the pod's
first process).

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
Lines with "pod" (a regex of pod names) are the kubelet's, never a
request's:
  {"pod": "regex", "action": "unschedulable"}  the pod stays Pending,
                     PodScheduled False, reason Unschedulable, the
                     scheduler's "message" (one is given)
  {"pod": ..., "action": "image-pull"}  the container waiting, reason
                     ErrImagePull with the runtime's "message", then after
                     "backoff" s (0.5) ImagePullBackOff, 'Back-off pulling
                     image "..."'; phase Pending; nothing runs.  With
                     "container" naming an init container: its image,
                     Initialized False, the others PodInitializing
  {"pod": ..., "action": "oom"}   a running pod's processes killed: Failed,
                     container terminated reason OOMKilled, exitCode 137
                     (what RESOURCES does for real, without a limit hit)
  {"pod": ..., "action": "evict"} a running pod's process killed: Failed,
                     reason Evicted, the kubelet's message about the
                     node's "resource" (memory; or ephemeral-storage) and
                     the container's use over its request, condition
                     DisruptionTarget reason TerminationByKubelet, the
                     container terminated exitCode 137
  {"pod": ..., "action": "rotate"} a running pod's token written anew now
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
import shutil
import signal
import socket
import ssl
import subprocess
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
    "objects": {},        # (resource, ns or "", name) -> object (not pods)
    "logs": {},           # pod uid -> the end of its output (--kubelet)
}
FAULTS = {"lines": [], "used": [], "size": -1}
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
            if FAULTS["used"][i] >= f.get("times", 1) or "pod" in f:
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


# ---- discovery and the admin's objects (--objects) ----

# resource -> (group version, kind, namespaced, short names, verbs)
RESOURCES = {
    "pods": ("v1", "Pod", True, ["po"], ["create", "delete", "get", "list", "watch"]),
    "namespaces": ("v1", "Namespace", False, ["ns"], ["create", "get", "list"]),
    "resourcequotas": ("v1", "ResourceQuota", True, ["quota"], ["create", "get", "list"]),
    "limitranges": ("v1", "LimitRange", True, ["limits"], ["create", "get", "list"]),
    "serviceaccounts": ("v1", "ServiceAccount", True, ["sa"], ["create", "get", "list"]),
    "networkpolicies": ("networking.k8s.io/v1", "NetworkPolicy", True, ["netpol"],
                        ["create", "get", "list"]),
    "tokenreviews": ("authentication.k8s.io/v1", "TokenReview", False, [], ["create"]),
}
KINDS = {v[1]: k for k, v in RESOURCES.items()}


def discovery(path):
    """The legacy discovery documents (what a client falls back to when it
    is not offered the aggregated ones), or None."""
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:%d" % ARGS.port}]}
    groups = sorted({v[0] for v in RESOURCES.values() if "/" in v[0]})
    if path == "/apis":
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": g.split("/")[0], "versions": [{"groupVersion": g, "version": "v1"}],
             "preferredVersion": {"groupVersion": g, "version": "v1"}} for g in groups]}
    if path == "/version":
        return {"major": "1", "minor": "32", "gitVersion": "v1.32.0", "gitCommit": "0" * 40,
                "gitTreeState": "clean", "buildDate": "2024-12-11T17:58:08Z",
                "goVersion": "go1.23.3", "compiler": "gc", "platform": "linux/amd64"}
    gv = "v1" if path == "/api/v1" else path[len("/apis/"):] if path.startswith("/apis/") else None
    if gv not in ["v1"] + groups:
        return None
    res = []
    for name, (g, kind, nsd, short, verbs) in sorted(RESOURCES.items()):
        if g != gv:
            continue
        r = {"name": name, "singularName": kind.lower(), "namespaced": nsd, "kind": kind,
             "verbs": verbs}
        if short:
            r["shortNames"] = short
        if name == "pods":
            r["categories"] = ["all"]
        res.append(r)
        if name == "pods":
            res.append({"name": "pods/log", "singularName": "", "namespaced": True,
                        "kind": "Pod", "verbs": ["get"]})
            res.append({"name": "pods/status", "singularName": "", "namespaced": True,
                        "kind": "Pod", "verbs": ["get"]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
            "resources": res}


def openapi_v3(path):
    """The OpenAPI v3 documents, cut to what kubectl reads of them: the
    root's list of group versions, and for each a PATCH operation per kind
    with its x-kubernetes-group-version-kind and the fieldValidation query
    parameter (kubectl then validates on the server, with
    ?fieldValidation=Strict, instead of downloading every schema); or
    None."""
    gvs = sorted({v[0] for v in RESOURCES.values()})

    def rel(gv):
        return "api/v1" if gv == "v1" else "apis/" + gv
    if path == "/openapi/v3":
        return {"paths": {rel(gv): {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (
            rel(gv), hashlib.sha512(gv.encode()).hexdigest()[:128].upper())} for gv in gvs}}
    gv = next((g for g in gvs if path == "/openapi/v3/" + rel(g)), None)
    if not gv:
        return None
    paths = {}
    for name, (g, kind, nsd, _, verbs) in sorted(RESOURCES.items()):
        if g != gv or "get" not in verbs:
            continue
        p = "/%s/%s%s/{name}" % (rel(gv), "namespaces/{namespace}/" if nsd else "", name)
        paths[p] = {"patch": {
            "tags": [("core" if gv == "v1" else gv.split(".")[0]) + "_v1"],
            "description": "partially update the specified " + kind,
            "operationId": "patch%s%s" % ("Core" if gv == "v1" else "NetworkingV1",
                                          ("Namespaced" if nsd else "") + kind),
            "parameters": [{"name": "fieldValidation", "in": "query", "description":
                            "fieldValidation instructs the server on how to handle objects in "
                            "the request (POST/PUT/PATCH) containing unknown or duplicate "
                            "fields.", "schema": {"type": "string", "uniqueItems": True}}],
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": gv.split("/")[0] if "/" in gv else "",
                                                "version": "v1", "kind": kind}}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
            "paths": paths, "components": {"schemas": {}}}


def object_put(obj):
    """Under LOCK: obj (a dict with kind and metadata.name) stored as the API
    would have it; the stored copy."""
    res = KINDS[obj["kind"]]
    gv, kind, nsd = RESOURCES[res][:3]
    o = copy.deepcopy(obj)
    o["apiVersion"], o["kind"] = gv, kind
    md = o.setdefault("metadata", {})
    if nsd:
        md["namespace"] = md.get("namespace") or "default"
    else:
        md.pop("namespace", None)
    STATE["rv"] += 1
    md.update({"uid": str(uuid.uuid4()), "creationTimestamp": now_iso(),
               "resourceVersion": str(STATE["rv"])})
    if kind == "Namespace":
        md.setdefault("labels", {})["kubernetes.io/metadata.name"] = md["name"]
        o["spec"] = {"finalizers": ["kubernetes"]}
        o["status"] = {"phase": "Active"}
    if kind == "ServiceAccount":
        o.pop("secrets", None)
    STATE["objects"][(res, md.get("namespace", ""), md["name"])] = o
    return copy.deepcopy(o)


def objects_load(path):
    with open(path) as f:
        doc = json.load(f)
    items = doc.get("items", []) if doc.get("kind", "").endswith("List") else [doc]
    with LOCK:
        for it in items:
            if it.get("kind") not in KINDS or it["kind"] in ("Pod", "TokenReview"):
                raise SystemExit("--objects: cannot hold a %s" % it.get("kind"))
            object_put(it)


OBJ_PATH = re.compile(r"^/(?:api/v1|apis/(networking\.k8s\.io/v1))"
                      r"(?:/namespaces/([^/]+))?/([a-z]+)(?:/([^/]+))?$")


# ---- the fake kubelet (--kubelet) ----

KUBELET_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Where the kubelet's relay shows inside the pod: the bridge binary and
# the unix sockets it relays to (nothing a real pod has; the price of a
# network namespace with only lo that still reaches the host's front door).
RELAY_DIR = "/.kubelet"
ETC_PASSWD = ("root:x:0:0:root:/root:/bin/sh\n"
              "agent:x:1000:1000:paddock agent:/home/agent:/bin/bash\n"
              "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
ETC_GROUP = "root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n"
RUNS = {}  # uid -> PodRun

# ---- the pods' cgroups (v1) ----
# controller -> the server's own cgroup folder in that v1 hierarchy, where
# a pod's cgroup can be made (cgroup_setup); absent: none, limits unenforced.
CGROUP = {}
# The helper that removes the pods' cgroups should the server die first
# (a pod dies with it, bwrap --die-with-parent; its cgroup would stay).
REAPER = None
REAPER_LOCK = threading.Lock()
# How often the kubelet measures a pod's ephemeral storage (the kubelet:
# its eviction manager every 10 s; scaled down for tests), and looks for an
# OOM in its memory cgroup (each supervise round, 0.05 s, unless
# --kubelet-housekeeping S says: then both every S seconds).
DISK_INTERVAL = 0.5


def cgroup_mounts():
    """controller -> (mount point, the mount's root in the hierarchy) of
    each cgroup v1 hierarchy mounted here."""
    out = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            a, b = left.split(), right.split()
            if len(b) < 3 or b[0] != "cgroup":
                continue
            for opt in b[2].split(","):
                out.setdefault(opt, (a[4], a[3]))
    return out


def cgroup_setup():
    """Finds the server's own v1 memory and cpu cgroups and whether a
    pod's can be made below them (root, a writable hierarchy); says once on
    stderr (the kubelet's log) what it cannot limit.  Starts the reaper."""
    global REAPER
    try:
        mounts = cgroup_mounts()
        own = {}
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                for c in ctrls.split(","):
                    own[c] = path
    except OSError as ex:
        mounts, own = {}, {}
        sys.stderr.write("kube-api-server: cannot read this process's cgroups: %s\n" % ex)
    why = {}
    for ctrl in ("memory", "cpu"):
        if ctrl not in mounts or ctrl not in own:
            why[ctrl] = "no cgroup v1 %s hierarchy is mounted" % ctrl
            continue
        mnt, root = mounts[ctrl]
        rel = own[ctrl]
        if root != "/" and (rel + "/").startswith(root + "/"):
            rel = rel[len(root):]
        d = os.path.normpath(mnt + "/" + rel)
        probe = os.path.join(d, "kube-api-server-probe-%d" % os.getpid())
        try:
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError as ex:
            why[ctrl] = "cannot make a cgroup in %s: %s" % (d, ex.strerror)
            continue
        CGROUP[ctrl] = d
    if "memory" not in CGROUP:
        CGROUP.clear()
        sys.stderr.write("kube-api-server: kubelet: no cgroups for pods (%s): pods run without "
                         "resource limits (memory, cpu)\n" % why["memory"])
    elif "cpu" not in CGROUP:
        sys.stderr.write("kube-api-server: kubelet: no cpu cgroups for pods (%s): pods run "
                         "without a cpu limit\n" % why["cpu"])
    sys.stderr.flush()
    if CGROUP:
        REAPER = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--reap-cgroups"],
                                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)


def reaper_tell(op, path):
    """The reaper learns of a cgroup made (+) or removed (-)."""
    with REAPER_LOCK:
        try:
            REAPER.stdin.write(("%s %s\n" % (op, path)).encode())
            REAPER.stdin.flush()
        except (OSError, AttributeError):
            pass


def cgroup_procs(d):
    try:
        with open(os.path.join(d, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def cgroup_remove(d, wait):
    """Kills what is left in the cgroup d and removes it, within wait s."""
    end = time.monotonic() + wait
    while True:
        for pid in cgroup_procs(d):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.rmdir(d)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)


def reap_cgroups():
    """The reaper (--reap-cgroups): reads "+ PATH" and "- PATH" lines from
    the server; at their end (the server gone, however it died) removes
    the cgroups still listed, whose pods died with the server."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    live = set()
    for line in sys.stdin.buffer:
        op, _, path = line.decode().rstrip("\n").partition(" ")
        if op == "+":
            live.add(path)
        else:
            live.discard(path)
    for d in live:
        if not cgroup_remove(d, 2.0):
            sys.stderr.write("kube-api-server: cannot remove the cgroup %s\n" % d)
    return 0


def cpu_milli(q):
    """Millicores of a cpu quantity ("500m", "1", "0.25"), rounded up as
    the API's MilliValue does."""
    m = re.match(r"^([0-9.]+)(m?)$", str(q))
    if not m:
        raise ValueError("not a cpu quantity: %r" % q)
    v = float(m.group(1))
    return int(v) if m.group(2) else int(-(-v * 1000 // 1))


def quantity_str(q):
    """A byte quantity as resource.Quantity's String() writes it: the
    largest unit of its own kind (binary Ki..Ei, else decimal k..E) that
    divides it."""
    n = quantity(q)
    binary = str(q).endswith("i")
    units = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] if binary else ["k", "M", "G", "T", "P", "E"]
    base = 1024 if binary else 1000
    out = str(n)
    for i, u in enumerate(units):
        f = base ** (i + 1)
        if n and n % f == 0:
            out = "%d%s" % (n // f, u)
    return out



def quantity(q):
    """Bytes of a quantity ("64Mi", "1G", "1048576")."""
    m = re.match(r"^([0-9.]+)([KMGTPE]i?|[kmu]|)$", str(q))
    if not m:
        raise ValueError("not a quantity: %r" % q)
    mult = {"": 1, "k": 1000, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "T": 1000 ** 4,
            "P": 1000 ** 5, "E": 1000 ** 6, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30,
            "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}[m.group(2)]
    return int(float(m.group(1)) * mult)


def pod_fault(name, kinds):
    """Under no lock: the first unused fault line for this pod of one of
    kinds ({"pod": regex, "action": kind}), taken; or None."""
    with LOCK:
        load_faults()
        for i, f in enumerate(FAULTS["lines"]):
            if f.get("action") not in kinds or "pod" not in f:
                continue
            if FAULTS["used"][i] >= f.get("times", 1) or not re.search(f["pod"], name):
                continue
            FAULTS["used"][i] += 1
            return f
    return None


def cond(kind, status, reason=None, message=None):
    c = {"type": kind, "status": status, "lastProbeTime": None,
         "lastTransitionTime": now_iso()}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def relay_pump(a, b):
    """Bytes from a to b until a ends; then b's write side is shut."""
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class PodRun:
    """One pod run for real: the init containers' copy, the main container
    under bwrap, its token, its relay, its status."""

    def __init__(self, ns, name, uid, pod):
        self.ns, self.name, self.uid, self.pod = ns, name, uid, pod
        self.dir = os.path.join(ARGS.kubelet_state, uid)
        self.proc = None
        self.child_pid = None
        self.stop = threading.Event()      # a DELETE: terminate
        self.grace = 0.0
        self.done = threading.Event()
        self.relay = None
        self.killed_for = None             # "oom", ("evict", msg, node), "deadline"
        self.cgroups = {}                  # controller -> this pod's cgroup

    # ---- the pod's status ----
    def update(self, fn):
        """fn(status) under LOCK on the pod if it is still this pod."""
        with LOCK:
            pod = STATE["pods"].get((self.ns, self.name))
            if not pod or pod["metadata"]["uid"] != self.uid:
                return False
            fn(pod.setdefault("status", {}))
            bump("MODIFIED", pod)
            return True

    def cstatus(self, c, state, ready=False, started=False):
        return {"name": c["name"], "image": c.get("image", ""), "imageID": "",
                "containerID": "containerd://" + hashlib.sha256(
                    (self.uid + c["name"]).encode()).hexdigest(),
                "ready": ready, "restartCount": 0, "started": started, "state": state,
                "lastState": {}}

    def spec(self):
        return self.pod["spec"]

    def main_c(self):
        return self.spec()["containers"][0]

    # ---- the run ----
    def run(self):
        try:
            self.run_inner()
        except Exception as ex:  # a pod it cannot run: it says so, the server goes on
            self.fail_config("%s: %s" % (type(ex).__name__, ex))
        finally:
            self.cleanup()
            self.done.set()

    def fail_config(self, msg):
        """What the kubelet cannot run: Pending, the container waiting
        CreateContainerConfigError, until the pod is deleted."""
        c = self.main_c()

        def f(s):
            s["phase"] = "Pending"
            s["containerStatuses"] = [self.cstatus(c, {"waiting": {
                "reason": "CreateContainerConfigError", "message": msg}})]
        self.update(f)
        self.stop.wait()

    def run_inner(self):
        time.sleep(ARGS.start_delay)
        if self.stop.is_set():
            return
        spec = self.spec()
        f = pod_fault(self.name, ("unschedulable",))
        if f:
            msg = f.get("message", "0/3 nodes are available: 3 Insufficient memory. preemption: "
                        "0/3 nodes are available: 3 No preemption victims found for incoming pod.")
            self.update(lambda s: s.update({"phase": "Pending", "conditions": [
                cond("PodScheduled", "False", "Unschedulable", msg)]}))
            self.stop.wait()
            return
        t0 = now_iso()
        inits = spec.get("initContainers") or []
        c = self.main_c()
        pending_init = [self.cstatus(i, {"waiting": {"reason": "PodInitializing"}}) for i in inits]

        def scheduled(s):
            s.update({"phase": "Pending", "hostIP": "10.0.1.1", "podIP": "10.0.0.7",
                      "startTime": t0, "conditions": [
                          cond("PodReadyToStartContainers", "True"),
                          cond("Initialized", "False" if inits else "True",
                               "ContainersNotInitialized" if inits else None,
                               "containers with incomplete status: [%s]" % " ".join(
                                   i["name"] for i in inits) if inits else None),
                          cond("Ready", "False", "ContainersNotReady",
                               "containers with unready status: [%s]" % c["name"]),
                          cond("ContainersReady", "False", "ContainersNotReady",
                               "containers with unready status: [%s]" % c["name"]),
                          cond("PodScheduled", "True")]})
            if inits:
                s["initContainerStatuses"] = pending_init
            s["containerStatuses"] = [self.cstatus(c, {"waiting": {"reason": "PodInitializing"}})]
        self.update(scheduled)
        f = pod_fault(self.name, ("image-pull",))
        if f:
            self.image_pull(f)
            return
        os.makedirs(self.dir, mode=0o700)
        vols = {v["name"]: v for v in spec.get("volumes") or []}
        # emptyDirs an init container writes are host folders (they outlive
        # it); the others are tmpfs of their sizeLimit in the main container.
        self.hostdirs = {}
        for i in inits:
            for m in i.get("volumeMounts") or []:
                if "emptyDir" in vols.get(m["name"], {}):
                    d = os.path.join(self.dir, "vol-" + m["name"])
                    os.makedirs(d, exist_ok=True)
                    self.hostdirs[m["name"]] = d
        done_init = []
        for i in inits:
            code, msg = self.run_init(i)
            st = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                 "startedAt": t0, "finishedAt": now_iso(),
                                 "containerID": self.cstatus(i, {})["containerID"]}}
            if msg:
                st["terminated"]["message"] = msg
            done_init.append(self.cstatus(i, st, ready=code == 0))
            if code != 0:
                def failed(s):
                    s["phase"] = "Failed"
                    s["initContainerStatuses"] = done_init + pending_init[len(done_init):]
                    s["containerStatuses"] = [self.cstatus(c, {"waiting": {
                        "reason": "PodInitializing"}})]
                self.update(failed)
                return
        self.write_token(rotate=False)
        argv, fds = self.bwrap_argv(c, vols)
        self.start_relay(c)
        log = open(os.path.join(self.dir, "log"), "wb")
        info_r, info_w = os.pipe()
        argv[argv.index("--info-fd") + 1] = str(info_w)
        # bwrap starts in the pod's cgroups: a shell moves itself there
        # first, then becomes bwrap (its pid: bwrap's --die-with-parent
        # still names the server).
        procs = self.make_cgroups(c)
        if procs:
            argv = ["/bin/sh", "-c", 'while [ "$1" != -- ]; do echo $$ >"$1" || exit 126; '
                    'shift; done; shift; exec "$@"', "sh"] + procs + ["--"] + argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     pass_fds=[info_w] + fds, start_new_session=True)
        os.close(info_w)
        for fd in fds:
            os.close(fd)
        log.close()
        info = b""
        while True:
            chunk = os.read(info_r, 4096)
            if not chunk:
                break
            info += chunk
        os.close(info_r)
        try:
            self.child_pid = json.loads(info.decode())["child-pid"]
        except (ValueError, KeyError):
            self.child_pid = None
        started = now_iso()
        self.started_at = time.monotonic()
        if ARGS.kubelet_log:
            with LOCK:
                with open(ARGS.kubelet_log, "a") as f:
                    f.write(json.dumps({"pod": self.name, "uid": self.uid,
                                        "running": time.time()}) + "\n")

        def running(s):
            s["phase"] = "Running"
            s["conditions"] = [cond(k, "True") for k in (
                "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                "PodScheduled")]
            if inits:
                s["initContainerStatuses"] = done_init
            s["containerStatuses"] = [self.cstatus(c, {"running": {"startedAt": started}},
                                                   ready=True, started=True)]
        self.update(running)
        self.supervise()
        code = self.proc.returncode
        if code < 0:
            code = 128 - code
        ended = now_iso()
        why = self.killed_for
        # terminationMessagePolicy FallbackToLogsOnError: a failed
        # container's message is the end of its log (80 lines, 2048 bytes
        # at most), as the kubelet gives it.
        tail = ""
        if code != 0 and c.get("terminationMessagePolicy") == "FallbackToLogsOnError":
            try:
                with open(os.path.join(self.dir, "log"), "rb") as f:
                    lines = f.read().decode("utf-8", "replace").splitlines(True)[-80:]
                tail = "".join(lines)[-2048:]
            except OSError:
                pass

        def ended_fn(s):
            term = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                    "startedAt": started, "finishedAt": ended,
                    "containerID": self.cstatus(c, {})["containerID"]}
            if tail:
                term["message"] = tail
            s["phase"] = "Succeeded" if code == 0 else "Failed"
            if why == "oom":
                term.update({"exitCode": 137, "reason": "OOMKilled"})
                s["phase"] = "Failed"
            elif why and why[0] == "evict":
                term.update({"exitCode": 137, "reason": "Error"})
                s.update({"phase": "Failed", "reason": "Evicted", "message": why[1]})
            elif why == "deadline":
                term.update({"exitCode": 137, "reason": "Error"})
                s.update({"phase": "Failed", "reason": "DeadlineExceeded", "message":
                          "Pod was active on the node longer than the specified deadline"})
            r = "PodCompleted" if s["phase"] == "Succeeded" else "PodFailed"
            s["conditions"] = [cond("PodReadyToStartContainers", "False"),
                               cond("Initialized", "True"),
                               cond("Ready", "False", r), cond("ContainersReady", "False", r),
                               cond("PodScheduled", "True")]
            # a node-pressure eviction's condition; a pod past its own
            # limits (local storage) gets none, as the kubelet does
            if why and why[0] == "evict" and why[2]:
                s["conditions"].insert(0, cond("DisruptionTarget", "True",
                                               "TerminationByKubelet", why[1]))
            s["containerStatuses"] = [self.cstatus(c, {"terminated": term})]
        self.update(ended_fn)

    def image_pull(self, f):
        """The image of the container f["container"] names (the first
        container by default; an init container's name: its image) cannot
        be pulled."""
        spec = self.spec()
        inits = spec.get("initContainers") or []
        c = self.main_c()
        bad = next((i for i in inits if i["name"] == f.get("container")), None)
        image = (bad or c).get("image", "")
        ref = image if "/" in image.split(":")[0] else "docker.io/library/" + image
        if ":" not in ref.rsplit("/", 1)[-1] and "@" not in ref:
            ref += ":latest"
        msg = f.get("message", 'rpc error: code = NotFound desc = failed to pull and unpack '
                    'image "%s": failed to resolve reference "%s": %s: not found'
                    % (ref, ref, ref))

        def waiting(reason, m):
            def fn(s):
                w = {"waiting": {"reason": reason, "message": m}}
                s["conditions"] = [x for x in s.get("conditions", [])
                                   if x["type"] != "Initialized"]
                if bad:
                    # an init container's image: the pod is not initialised
                    s["conditions"].append(cond(
                        "Initialized", "False", "ContainersNotInitialized",
                        "containers with incomplete status: [%s]" % bad["name"]))
                    s["initContainerStatuses"] = [self.cstatus(i, w if i is bad else {
                        "waiting": {"reason": "PodInitializing"}}) for i in inits]
                    s["containerStatuses"] = [self.cstatus(c, {"waiting": {
                        "reason": "PodInitializing"}})]
                    return
                s["conditions"].append(cond("Initialized", "True"))
                s["containerStatuses"] = [self.cstatus(c, w)]
                if inits:
                    s["initContainerStatuses"] = [self.cstatus(i, {"terminated": {
                        "exitCode": 0, "reason": "Completed", "startedAt": now_iso(),
                        "finishedAt": now_iso()}}, ready=True) for i in inits]
            return fn
        self.update(waiting("ErrImagePull", msg))
        if self.stop.wait(f.get("backoff", 0.5)):
            return
        self.update(waiting("ImagePullBackOff", 'Back-off pulling image "%s"' % image))
        self.stop.wait()

    def run_init(self, i):
        """An init container: only `cp -- SRC DST` (the runner image's copy)
        is run, by the kubelet itself, SRC a host path, DST in a mounted
        emptyDir.  (exit code, message)."""
        cmd = (i.get("command") or []) + (i.get("args") or [])
        if len(cmd) != 4 or cmd[0] != "cp" or cmd[1] != "--":
            return 1, "the fake kubelet runs only `cp -- SRC DST` in an init container"
        src, dst = cmd[2], cmd[3]
        for m in i.get("volumeMounts") or []:
            mp = m["mountPath"].rstrip("/")
            if dst.startswith(mp + "/") and m["name"] in self.hostdirs:
                rel = dst[len(mp) + 1:]
                if not rel or ".." in rel.split("/"):
                    break
                out = os.path.join(self.hostdirs[m["name"]], rel)
                try:
                    shutil.copyfile(src, out)
                    os.chmod(out, os.stat(src).st_mode & 0o777)
                except OSError as ex:
                    return 1, "cp: cannot stat '%s': %s\n" % (src, ex.strerror)
                return 0, None
        return 1, "cp: cannot create regular file '%s': No such file or directory\n" % dst

    def write_token(self, rotate):
        vols = self.spec().get("volumes") or []
        for v in vols:
            for src in (v.get("projected") or {}).get("sources") or []:
                sat = src.get("serviceAccountToken")
                if not sat:
                    continue
                d = os.path.join(self.dir, "vol-" + v["name"])
                os.makedirs(d, mode=0o755, exist_ok=True)
                secs = float(sat.get("expirationSeconds", 3600))
                tok = token_issue(self.ns, self.name, self.uid,
                                  self.spec().get("serviceAccountName", "default"),
                                  sat.get("audience", "https://kubernetes.default.svc"), secs)
                # as the kubelet does: new file, then renamed over the old
                p = os.path.join(d, sat.get("path", "token"))
                tmp = p + ".new"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                             v["projected"].get("defaultMode", 0o644))
                os.write(fd, tok.encode())
                os.fchmod(fd, v["projected"].get("defaultMode", 0o644))
                os.close(fd)
                os.rename(tmp, p)
                # refreshed at 80% of its life, as the kubelet does
                self.token_due = time.monotonic() + secs * 0.8
                self.token_secs = secs
                with LOCK:
                    self.tokens = getattr(self, "tokens", 0) + 1

    def bwrap_argv(self, c, vols):
        """bwrap's arguments for container c, and the fds they name."""
        spec = self.spec()
        psc = spec.get("securityContext") or {}
        csc = c.get("securityContext") or {}
        uid = csc.get("runAsUser", psc.get("runAsUser", 0))
        gid = csc.get("runAsGroup", psc.get("runAsGroup", 0))
        a = [ARGS.bwrap, "--unshare-user", "--uid", str(uid), "--gid", str(gid),
             "--disable-userns", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--unshare-net", "--hostname", self.name,
             "--die-with-parent", "--new-session", "--as-pid-1", "--info-fd", "-1"]
        caps = (csc.get("capabilities") or {})
        if "ALL" in (caps.get("drop") or []):
            a += ["--cap-drop", "ALL"]
        a += ["--clearenv"]
        env = {"PATH": KUBELET_PATH, "HOSTNAME": self.name,
               "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
        for e in c.get("env") or []:
            if "value" not in e:
                raise ValueError("env %s: only values are supported" % e.get("name"))
            env[e["name"]] = e["value"]
        for k, v in env.items():
            a += ["--setenv", k, v]
        # the image's root: the host's /usr and a few /etc files, as
        # paddock's own bwrap backend shows them
        a += ["--ro-bind", "/usr", "/usr"]
        for n in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
            if os.path.islink(n):
                a += ["--symlink", os.readlink(n), n]
            elif os.path.isdir(n):
                a += ["--ro-bind", n, n]
        for n in ("/etc/ssl", "/etc/ca-certificates", "/etc/alternatives", "/etc/ld.so.cache",
                  "/etc/localtime", "/etc/timezone", "/etc/nsswitch.conf"):
            a += ["--ro-bind-try", n, n]
        dns = spec.get("dnsConfig") or {}
        files = {"/etc/passwd": ETC_PASSWD, "/etc/group": ETC_GROUP,
                 "/etc/hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                               "10.0.0.7\t%s\n" % self.name,
                 "/etc/hostname": self.name + "\n",
                 "/etc/resolv.conf": "".join("nameserver %s\n" % n
                                             for n in dns.get("nameservers") or [])}
        etc = os.path.join(self.dir, "etc")
        os.makedirs(etc, exist_ok=True)
        for dst, text in files.items():
            p = os.path.join(etc, os.path.basename(dst))
            with open(p, "w") as fh:
                fh.write(text)
            a += ["--ro-bind", p, dst]
        a += ["--proc", "/proc", "--dev", "/dev"]
        mounts = sorted(c.get("volumeMounts") or [], key=lambda m: m["mountPath"].count("/"))
        for m in mounts:
            v = vols.get(m["name"])
            if v is None:
                raise ValueError("volumeMount %s names no volume" % m["name"])
            path, ro = m["mountPath"], m.get("readOnly", False)
            sub = m.get("subPath", "")
            if not path.startswith("/") or ".." in path.split("/") or sub.startswith("/") or \
                    ".." in sub.split("/"):
                raise ValueError("volumeMount %s: an absolute mountPath and a subPath "
                                 "without '..' are required" % m["name"])
            if "emptyDir" in v and m["name"] not in self.hostdirs:
                if m.get("subPath"):
                    raise ValueError("subPath of a tmpfs emptyDir is not supported")
                size = (v["emptyDir"] or {}).get("sizeLimit")
                a += ["--perms", "0777" if path == "/tmp" else "0755"]
                if path == "/tmp":
                    a[-1] = "01777"
                if size:
                    a += ["--size", str(quantity(size))]
                a += ["--tmpfs", path]
                if ro:
                    a += ["--remount-ro", path]
                continue
            src = self.hostdirs.get(m["name"]) or os.path.join(self.dir, "vol-" + m["name"])
            if not os.path.isdir(src):
                raise ValueError("volume %s is not supported" % m["name"])
            if m.get("subPath"):
                src = os.path.join(src, m["subPath"])
            a += ["--ro-bind" if ro else "--bind", src, path]
        # the relay: the bridge and its sockets
        self.door_port = self.front_door_port(c)
        fds = []
        if self.door_port:
            a += ["--ro-bind", os.path.join(self.dir, "relay"), RELAY_DIR + "/door",
                  "--ro-bind", ARGS.bridge, RELAY_DIR + "/bridge"]
        if csc.get("readOnlyRootFilesystem"):
            a += ["--remount-ro", "/"]
        a += ["--chdir", c.get("workingDir") or "/"]
        a += ["--"]
        if self.door_port:
            a += [RELAY_DIR + "/bridge", RELAY_DIR + "/door", str(self.door_port), "--"]
        a += (c.get("command") or []) + (c.get("args") or [])
        return a, fds

    @staticmethod
    def front_door_port(c):
        for e in c.get("env") or []:
            if e.get("name") == "PADDOCK_FRONT_DOOR":
                m = re.match(r"^127\.0\.0\.1:(\d+)$", e.get("value", ""))
                if m:
                    return int(m.group(1))
        return None

    def start_relay(self, c):
        """A unix socket relay/<port> whose connections reach the host's
        127.0.0.1:<port>: the bridge in the pod relays its listener there."""
        if not self.door_port:
            return
        d = os.path.join(self.dir, "relay")
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o755)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        p = os.path.join(d, str(self.door_port))
        s.bind(p)
        os.chmod(p, 0o666)
        s.listen(64)
        s.settimeout(0.2)
        self.relay = s
        port = self.door_port

        def accept():
            while not self.done.is_set():
                try:
                    conn, _ = s.accept()
                except socket.timeout:
                    continue
                except OSError:
                    return
                conn.settimeout(None)
                try:
                    up = socket.create_connection(("127.0.0.1", port), timeout=5)
                    up.settimeout(None)
                    # The runner's own socket has TCP_NODELAY (runner/dial.c):
                    # so has the relay's leg that stands in for it, else each
                    # small write waits for a delayed ACK (40 ms).
                    up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                except OSError:
                    conn.close()
                    continue
                # Each connection the pod made to the front door, for the
                # tests that count them (a pod's session is its one).
                if ARGS.door_connections:
                    with LOCK:
                        with open(ARGS.door_connections, "a") as f:
                            f.write("%s %s\n" % (self.name, self.uid))
                threading.Thread(target=self.pair, args=(conn, up), daemon=True).start()
        threading.Thread(target=accept, daemon=True).start()

    def pair(self, a, b):
        t = threading.Thread(target=relay_pump, args=(b, a), daemon=True)
        t.start()
        relay_pump(a, b)
        t.join()
        a.close()
        b.close()

    def signal(self, sig):
        """sig to the pod's pid 1 (the bridge or the command: it passes
        SIGTERM on); SIGKILL to bwrap as well."""
        for pid in (self.child_pid, self.proc.pid if sig == signal.SIGKILL and self.proc else None):
            if pid:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass

    def supervise(self):
        deadline = self.spec().get("activeDeadlineSeconds")
        term_at = None
        every = ARGS.kubelet_housekeeping or DISK_INTERVAL
        disk_due = time.monotonic() + every
        oom_due = time.monotonic()
        # A round: the faults, the grace period, the checks.  The process's
        # end wakes it at once through a pidfd (Popen.wait's timeout polls
        # every 50 ms, which for a few hundred pods takes a core).
        rnd = 0.5 if ARGS.kubelet_housekeeping else 0.05
        try:
            pidfd = os.pidfd_open(self.proc.pid)
            ended = select.poll()
            ended.register(pidfd, select.POLLIN)
        except (AttributeError, OSError):
            pidfd = None
        while True:
            if pidfd is not None:
                if ended.poll(rnd * 1000):
                    self.proc.wait()
                    os.close(pidfd)
                    return
            else:
                try:
                    self.proc.wait(timeout=rnd)
                    return
                except subprocess.TimeoutExpired:
                    pass
            now = time.monotonic()
            if self.stop.is_set() and term_at is None:
                self.signal(signal.SIGTERM)
                term_at = now + self.grace
            if term_at is not None and now >= term_at:
                self.signal(signal.SIGKILL)
            oom = False
            if self.killed_for is None and now >= oom_due:
                oom_due = now + (ARGS.kubelet_housekeeping or 0)
                oom = self.under_oom()
            if self.killed_for is None:
                f = pod_fault(self.name, ("oom", "evict", "rotate"))
                if f and f["action"] == "rotate":
                    self.write_token(rotate=True)
                elif f and f["action"] == "oom":
                    self.killed_for = "oom"
                    self.kill_all()
                elif f and f["action"] == "evict":
                    res = f.get("resource", "memory")
                    c = self.main_c()
                    req = ((c.get("resources") or {}).get("requests") or {}).get(res, "0")
                    try:
                        used = "%dKi" % (quantity(req) * 11 // 10 // 1024 + 1)
                    except ValueError:
                        used = "1048576Ki"
                    # the kubelet's words (eviction_manager's message)
                    msg = f.get("message") or (
                        "The node was low on resource: %s. Threshold quantity: %s, available: "
                        "%s. Container %s was using %s, request is %s, has larger consumption "
                        "of %s. " % (res, "100Mi" if res == "memory" else "1Gi",
                                     "91560Ki" if res == "memory" else "777784Ki", c["name"],
                                     used, req, res))
                    self.killed_for = ("evict", msg, True)
                    self.kill_all()
                elif deadline and now - self.started_at >= deadline * ARGS.grace_scale:
                    self.killed_for = "deadline"
                    self.signal(signal.SIGKILL)
                elif oom:
                    # cgroup v2's memory.oom.group, as kubelet >= 1.28
                    # sets it: the whole container goes
                    self.killed_for = "oom"
                    self.kill_all()
                elif now >= disk_due:
                    disk_due = now + every
                    msg = self.storage_over()
                    if msg:
                        self.killed_for = ("evict", msg, False)
                        self.kill_all()
            if now >= getattr(self, "token_due", float("inf")):
                self.write_token(rotate=True)

    # ---- the container's resources ----
    def make_cgroups(self, c):
        """The pod's cgroups (pod<uid> below the server's own, v1), with c's
        resources.limits as the kubelet sets them; the cgroup.procs files
        its processes must enter.  None where the host has none."""
        res = c.get("resources") or {}
        lim, req = res.get("limits") or {}, res.get("requests") or {}
        procs = []
        for ctrl, parent in sorted(CGROUP.items()):
            d = os.path.join(parent, "pod" + self.uid)
            os.mkdir(d)
            self.cgroups[ctrl] = d
            reaper_tell("+", d)
            procs.append(os.path.join(d, "cgroup.procs"))
        mem = self.cgroups.get("memory")
        if mem:
            if "memory" in lim:
                n = str(quantity(lim["memory"]))
                with open(os.path.join(mem, "memory.limit_in_bytes"), "w") as f:
                    f.write(n)
                # no swap beyond it, where the kernel accounts swap
                if os.path.exists(os.path.join(mem, "memory.memsw.limit_in_bytes")):
                    with open(os.path.join(mem, "memory.memsw.limit_in_bytes"), "w") as f:
                        f.write(n)
            # The kernel's OOM killer would kill one process and leave
            # the rest to see it die; with it off, a process over the
            # limit waits (under_oom) until the kubelet kills them all.
            with open(os.path.join(mem, "memory.oom_control"), "w") as f:
                f.write("1")
        cpu = self.cgroups.get("cpu")
        if cpu:
            # the kubelet's MilliCPUToQuota and MilliCPUToShares
            period = 100000
            quota = max(1000, cpu_milli(lim["cpu"]) * period // 1000) if "cpu" in lim else -1
            want = req.get("cpu", lim.get("cpu"))
            shares = max(2, cpu_milli(want) * 1024 // 1000) if want is not None else 2
            for k, v in (("cpu.cfs_period_us", period), ("cpu.cfs_quota_us", quota),
                         ("cpu.shares", shares)):
                with open(os.path.join(cpu, k), "w") as f:
                    f.write(str(v))
        return procs

    def under_oom(self):
        """Whether a process of the pod is over its memory limit (waiting,
        memory.oom_control's under_oom) or was OOM-killed (oom_kill)."""
        mem = self.cgroups.get("memory")
        if not mem:
            return False
        try:
            with open(os.path.join(mem, "memory.oom_control")) as f:
                kv = dict(line.split() for line in f if line.strip())
        except (OSError, ValueError):
            return False
        return kv.get("under_oom") == "1" or int(kv.get("oom_kill", "0")) > 0

    def kill_all(self):
        """SIGKILL to the pod's pid 1 (the kernel then kills the rest of its
        pid namespace at once), bwrap, and whatever else is in its cgroup."""
        self.signal(signal.SIGKILL)
        for d in self.cgroups.values():
            for pid in cgroup_procs(d):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def storage_over(self):
        """The kubelet's message when the pod's ephemeral storage (its
        emptyDirs and its log) is over the containers' limits together
        (resources.limits["ephemeral-storage"]); else None."""
        spec = self.spec()
        total = 0
        for c in spec["containers"]:
            q = ((c.get("resources") or {}).get("limits") or {}).get("ephemeral-storage")
            if q is None:
                return None
            total += quantity(q)
        # PodLimits: the larger of the containers' sum and any init container's
        for i in spec.get("initContainers") or []:
            q = ((i.get("resources") or {}).get("limits") or {}).get("ephemeral-storage")
            total = max(total, quantity(q)) if q is not None else total
        used = self.storage_used()
        if used <= total:
            return None
        c = spec["containers"][0]
        q = c["resources"]["limits"]["ephemeral-storage"]
        shown = quantity_str(q) if len(spec["containers"]) == 1 and quantity(q) == total \
            else str(total)
        return "Pod ephemeral local storage usage exceeds the total limit of containers %s. " % shown

    def storage_used(self):
        """Bytes of the pod's emptyDirs (a host folder's blocks, or a
        tmpfs's use as the pod's mount namespace shows it) and its log."""
        used = 0
        vols = {v["name"]: v for v in self.spec().get("volumes") or []}
        seen = set()
        for m in self.main_c().get("volumeMounts") or []:
            v = vols.get(m["name"]) or {}
            if "emptyDir" not in v or m["name"] in seen or \
                    (v["emptyDir"] or {}).get("medium") == "Memory":
                continue
            seen.add(m["name"])
            if m["name"] in self.hostdirs:
                for root, dirs, files in os.walk(self.hostdirs[m["name"]]):
                    for n in dirs + files:
                        try:
                            used += os.lstat(os.path.join(root, n)).st_blocks * 512
                        except OSError:
                            pass
                continue
            try:
                st = os.statvfs("/proc/%d/root%s" % (self.child_pid, m["mountPath"]))
                used += (st.f_blocks - st.f_bfree) * st.f_frsize
            except (OSError, TypeError):
                pass
        try:
            used += os.stat(os.path.join(self.dir, "log")).st_size
        except OSError:
            pass
        return used

    def cleanup(self):
        if self.relay:
            self.relay.close()
        if self.proc and self.proc.poll() is None:
            self.signal(signal.SIGKILL)
            self.proc.wait()
        for d in self.cgroups.values():
            if cgroup_remove(d, 5.0):
                reaper_tell("-", d)
            else:
                sys.stderr.write("kube-api-server: cannot remove the cgroup %s\n" % d)
        try:
            with open(os.path.join(self.dir, "log"), "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 65536))
                text = f.read()
            with LOCK:
                STATE["logs"][self.uid] = text
        except OSError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
        with LOCK:
            RUNS.pop(self.uid, None)


def kubelet_start(ns, name, uid, pod):
    run = PodRun(ns, name, uid, copy.deepcopy(pod))
    with LOCK:
        RUNS[uid] = run
    threading.Thread(target=run.run, daemon=True).start()


def kubelet_delete(ns, name, uid, grace):
    """A DELETE with grace seconds (already scaled): the pod's process is
    sent SIGTERM, then SIGKILL after grace; the pod goes once it is gone."""
    with LOCK:
        run = RUNS.get(uid)
    if run:
        run.grace = grace
        run.stop.set()
        run.done.wait(grace + 10)
    with LOCK:
        pod = STATE["pods"].get((ns, name))
        if pod and pod["metadata"]["uid"] == uid:
            del STATE["pods"][(ns, name)]
            bump("DELETED", pod)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-api-server"

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        self.connection.settimeout(15)
        # As the real API server (Go sets TCP_NODELAY on every TCP
        # connection): else the body, written after the headers, waits
        # for the client's delayed ACK, 40 ms a request on loopback.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
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
        if path == "/openapi/v2" and method == "GET":
            # An empty protobuf Document (no definitions): what kubectl
            # reads for its client-side validation of a List's items, which
            # then checks nothing (the schemas are kube-spec.test's).
            self.rec["status"] = 200
            self.log_rec()
            self.send_response(200)
            self.send_header("Content-Type",
                             "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        doc = (discovery(path) or openapi_v3(path)) if method == "GET" else None
        if doc is not None:
            self.send_json(200, doc)
            return
        m = OBJ_PATH.match(path)
        if m and m.group(3) in RESOURCES and m.group(3) not in ("pods", "tokenreviews"):
            return self.objects(method, m, body, user)
        m = re.match(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$", path)
        if m and method == "GET":
            return self.pod_log(m.group(1), m.group(2))
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

    def objects(self, method, m, body, user):
        group, ns, res, name = m.groups()
        gv, kind, nsd = RESOURCES[res][:3]
        qual = res + ("." + gv.split("/")[0] if "/" in gv else "")
        if (group or "v1") != gv or (ns is not None and not nsd) or (
                ns is None and nsd and (name or method != "GET")):
            self.send_status(404, "the server could not find the requested resource")
            return
        forbid = ARGS.forbid_namespace
        if forbid and (ns == forbid or (res == "namespaces" and name == forbid)):
            verb = {"POST": "create", "DELETE": "delete"}.get(method, "get" if name else "list")
            self.send_status(403, '%s%s is forbidden: User "%s" cannot %s resource "%s" in API '
                             'group "%s" in the namespace "%s"' % (
                                 qual, ' "%s"' % name if name else "", user, verb, res,
                                 gv.split("/")[0] if "/" in gv else "", ns or name))
            return
        details = {"name": name, "kind": res}
        if "/" in gv:
            details["group"] = gv.split("/")[0]
        if method == "GET" and name:
            with LOCK:
                o = copy.deepcopy(STATE["objects"].get((res, ns or "", name)))
            if o:
                self.send_json(200, o)
            else:
                self.send_status(404, '%s "%s" not found' % (qual, name), details=details)
            return
        if method == "GET":
            with LOCK:
                items = [copy.deepcopy(o) for (r, n, _), o in sorted(STATE["objects"].items())
                         if r == res and (ns is None or n == ns) and selector_match(
                             self.q.get("labelSelector", ""),
                             o["metadata"].get("labels") or {})]
                rv = str(STATE["rv"])
            for o in items:
                o.pop("kind", None)
                o.pop("apiVersion", None)
            self.send_json(200, {"kind": kind + "List", "apiVersion": gv,
                                 "metadata": {"resourceVersion": rv}, "items": items})
            return
        if method == "DELETE" and name:
            return self.object_delete(res, ns or "", name, qual, details)
        if method != "POST" or name:
            self.send_status(405, "the server does not allow this method on the requested "
                             "resource", "MethodNotAllowed")
            return
        if not isinstance(body, dict) or body.get("kind") != kind:
            self.send_status(400, "the body of the request was in an unknown format - accepted "
                             "media types include: application/json, application/yaml")
            return
        meta = body.get("metadata") or {}
        name = meta.get("name", "")
        if nsd and meta.get("namespace") and meta["namespace"] != ns:
            self.send_status(400, "the namespace of the provided object does not match the "
                             "namespace sent on the request")
            return
        if not name or len(name) > 253 or not NAME_RE.match(name):
            causes = [{"reason": "FieldValueInvalid", "field": "metadata.name", "message":
                       "Invalid value: %s: a lowercase RFC 1123 subdomain must consist of lower "
                       "case alphanumeric characters, '-' or '.'" % json.dumps(name)}]
            self.send_status(422, '%s "%s" is invalid: metadata.name: %s' % (
                kind, name, causes[0]["message"]), details={"name": name, "kind": kind,
                                                            "causes": causes})
            return
        with LOCK:
            if nsd and ("namespaces", "", ns) not in STATE["objects"]:
                self.send_status(404, 'namespaces "%s" not found' % ns,
                                 details={"name": ns, "kind": "namespaces"})
                return
            if (res, ns or "", name) in STATE["objects"]:
                details["name"] = name
                self.send_status(409, '%s "%s" already exists' % (qual, name), "AlreadyExists",
                                 details=details)
                return
            o = dict(body)
            if nsd:
                o["metadata"] = dict(meta, namespace=ns)
            if self.q.get("dryRun") == "All":
                saved = STATE["objects"].copy(), STATE["rv"]
                out = object_put(o)
                STATE["objects"], STATE["rv"] = saved
            else:
                out = object_put(o)
        self.send_json(201, out)

    def object_delete(self, res, ns, name, qual, details):
        """DELETE of an admin object: gone at once (no finalizers run).  The
        API answers a Status for these kinds, and a Namespace with its
        phase Terminating."""
        with LOCK:
            o = STATE["objects"].pop((res, ns, name), None)
            if o is not None:
                STATE["rv"] += 1
        if o is None:
            self.send_status(404, '%s "%s" not found' % (qual, name), details=details)
            return
        if res == "namespaces":
            o["metadata"]["deletionTimestamp"] = now_iso()
            o["status"] = {"phase": "Terminating"}
            self.send_json(200, o)
            return
        self.send_json(200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                             "status": "Success",
                             "details": dict(details, uid=o["metadata"]["uid"])})

    def pod_log(self, ns, name):
        with LOCK:
            pod = STATE["pods"].get((ns, name))
            uid = pod and pod["metadata"]["uid"]
            run = RUNS.get(uid)
            text = STATE["logs"].get(uid)
        if not pod:
            self.send_status(404, 'pods "%s" not found' % name,
                             details={"name": name, "kind": "pods"})
            return
        if text is None and run:
            try:
                with open(os.path.join(run.dir, "log"), "rb") as f:
                    text = f.read()[-65536:]
            except OSError:
                pass
        if text is None:
            c = pod["spec"]["containers"][0]["name"]
            self.send_status(400, 'container "%s" in pod "%s" is waiting to start: '
                             'ContainerCreating' % (c, name), "BadRequest")
            return
        self.rec["status"] = 200
        self.log_rec()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

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
        if ARGS.kubelet:
            kubelet_start(ns, name, md["uid"], out)
        else:
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
            run = RUNS.get(pod["metadata"]["uid"]) if ARGS.kubelet else None
            if grace == 0:
                del STATE["pods"][(ns, name)]
                pod["metadata"]["deletionTimestamp"] = now_iso()
                pod["metadata"]["deletionGracePeriodSeconds"] = 0
                bump("DELETED", pod)
                if run:
                    run.grace = 0
                    run.stop.set()
            elif "deletionTimestamp" not in pod["metadata"]:
                pod["metadata"]["deletionTimestamp"] = now_iso()
                pod["metadata"]["deletionGracePeriodSeconds"] = grace
                bump("MODIFIED", pod)
                threading.Thread(target=kubelet_delete if run else finish_delete, daemon=True,
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
    if sys.argv[1:] == ["--reap-cgroups"]:
        return reap_cgroups()
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
    ap.add_argument("--kubelet", action="store_true")
    ap.add_argument("--kubelet-state")
    ap.add_argument("--kubelet-log")
    ap.add_argument("--kubelet-housekeeping", type=float)
    ap.add_argument("--door-connections")
    ap.add_argument("--bwrap", default="bwrap")
    ap.add_argument("--bridge")
    ap.add_argument("--objects")
    ARGS = ap.parse_args()
    ARGS.port = 0
    if ARGS.objects:
        objects_load(ARGS.objects)
    if ARGS.kubelet and not (ARGS.kubelet_state and ARGS.bridge):
        ap.error("--kubelet needs --kubelet-state and --bridge")
    RNG.seed(ARGS.seed)
    if ARGS.kubelet:
        cgroup_setup()
    LOGF = open(ARGS.log, "a")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    if ARGS.client_ca:
        ctx.load_verify_locations(ARGS.client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
    srv = Server(("127.0.0.1", 0), Handler)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    ARGS.port = srv.server_address[1]
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
