#!/usr/bin/env python3
"""github-api-server: a loopback stand-in for GitHub's REST API, for
tests/push.test, tests/approve.test, tests/approval.test and tests/github.test.

Usage: github-api-server.py PORT_FILE LOG_FILE

Binds 127.0.0.1 on a free port and writes the port to PORT_FILE once it
listens.  LOG_FILE gets each API request: its request line, headers, body
(for POST and PATCH), "contract: ..." when it broke the contract, and
"-> STATUS".

Environment:
  GITHUB_TEST_TOKEN     the one token it accepts (Authorization: Bearer TOKEN)
  GITHUB_TEST_LOGIN     the login that token belongs to (default paddock-bot):
                        the author of what the API creates
  GITHUB_TEST_GIT_DIR   a bare repository standing for acme/widgets' git side
                        (optional): pull request heads are read from it
  GITHUB_TEST_PER_PAGE  the most items a page holds (default 100, as GitHub)

THE API.  The repositories are acme/widgets, acme/limited (every request on
it answers 403 with an exhausted rate limit resetting in 10 minutes, without
touching the rate limit of the others) and any added by POST /_fake/repos;
others are 404.  It answers the calls paddock makes (docs.github.com/rest):

   1 GET    /repos/{o}/{r}/issues                 state labels sort direction
                                                  since creator (milestone,
                                                  assignee, mentioned and type
                                                  are accepted, not filtered)
   2 GET    /search/issues?q=...                  repo: is: type: state: label:
                                                  author: qualifiers, other
                                                  words in title or body
   3 POST   /repos/{o}/{r}/issues/{n}/comments    {"body"}
   4 PATCH  /repos/{o}/{r}/issues/comments/{id}   {"body"}
   5 POST   /repos/{o}/{r}/pulls                  {"title","head","base",...}
   6 GET    /repos/{o}/{r}/pulls/{n}
   7 GET    /repos/{o}/{r}/commits/{ref}/check-runs
   8 GET    /repos/{o}/{r}/pulls/{n}/reviews
   9 GET    /repos/{o}/{r}/pulls/{n}/reviews/{id}/comments
  10 GET    /repos/{o}/{r}/pulls/{n}/comments
  11 GET    /repos/{o}/{r}/issues/{n}/comments
  12 POST   /repos/{o}/{r}/pulls/{n}/comments/{id}/replies   {"body"}
  13 GET    /orgs/{org}/teams/{slug}/memberships/{username}
  14 DELETE /repos/{o}/{r}/git/refs/heads/{branch}

THE CONTRACT.  Every API request is checked, in this order:
  - the method and path are one of the calls above, its parts well formed
    (else 404 and a violation);
  - Authorization: Bearer $GITHUB_TEST_TOKEN (else 401 "Bad credentials",
    not a violation: a test may send a wrong token on purpose);
  - Accept: application/vnd.github+json, X-GitHub-Api-Version: 2022-11-28,
    a User-Agent, only the documented query parameters (each once, with
    valid values), and for POST and PATCH Content-Type: application/json
    and a JSON object with the documented fields, of the documented types,
    and no other (GET and DELETE have no body);
  - the rate limits: a request sent after a 403 for the primary limit and
    before its x-ratelimit-reset, or sooner than the Retry-After of a
    secondary limit's 403, is a violation ("ignored the rate limit",
    "ignored Retry-After") and answered 403 again;
  - a reply to a reply (GitHub supports replies to top-level comments only),
    editing a comment that is not the token user's, and deleting the
    default branch are violations; so is a request the fake failed on (500).
A request that breaks the contract in its shape is answered 400 with a
message starting "contract:".  Every violation is kept (GET /_fake/state).

THE ANSWERS are shaped as GitHub's: issues (number, title, body, state,
labels [{name}], user {login}, html_url; the issue list holds pull requests
too, with a "pull_request" key), pulls (number, state, merged, merged_at,
head {ref, sha}, base {ref}, html_url), reviews, review comments (id, path,
line, original_line, side, body, diff_hunk, commit_id, user,
pull_request_review_id; in_reply_to_id on replies only), check runs
{total_count, check_runs [{name, status, conclusion}]}, team memberships
{state, role} or 404, DELETE of a ref 204 or 422 "Reference does not exist";
401 Bad credentials, 404 Not Found, 422 Validation Failed with "errors".
Every answer has x-ratelimit-limit/remaining/reset/used/resource (core:
5000 an hour; search: 30 a minute); a 304 is not counted.  Every GET has a
strong ETag, and If-None-Match with it answers 304 without a body.  Lists
are paginated: per_page (default 30) is capped at $GITHUB_TEST_PER_PAGE,
with Link rel="next"/"last" (and "prev"/"first") as absolute URLs.
A reply to a review comment, or a single review comment, makes a review of
state COMMENTED of its own, as GitHub does.  Deleting the head branch of an
open pull request closes it.

THE GIT SIDE (when the repository has a git dir): a pull request's head sha
is `git rev-parse refs/heads/HEAD-REF` at each GET while it is open;
creating a pull request needs both branches and sets refs/pull/N/head (kept
up to date at each GET); merging moves the base branch to the head (a
fast-forward, else a merge commit with the head's tree); deleting a ref
deletes the branch; diff_hunk and position come from `git diff base...head`.

CONTROL ENDPOINTS for tests, under /_fake/ (no auth, JSON in and out, not in
the request log; a bad control request is 400 and is the test's fault):
  POST /_fake/repos {"full_name", "git_dir"?}            add a repository
  POST /_fake/repos/O/R/issues {"title", "body"?, "labels"?, "user"?} -> {"number"}
  POST /_fake/repos/O/R/issues/N/labels {"labels": [...]}  add labels (PRs too)
  POST /_fake/repos/O/R/issues/N/comments {"user", "body"} -> {"id"}  (PRs too)
  POST /_fake/repos/O/R/issues/N/close {}
  POST /_fake/repos/O/R/pulls/N/reviews {"user", "state": CHANGES_REQUESTED|
       APPROVED|COMMENTED, "body"?, "comments"?: [{"path", "line", "side"?,
       "body"}]} -> {"id", "comment_ids"}
  POST /_fake/repos/O/R/pulls/N/comments {"user", "body", "path", "line",
       "side"?} or {"user", "body", "in_reply_to"} -> {"id", "review_id"}
  POST /_fake/repos/O/R/pulls/N/merge {"user"?} -> {"sha"}   (closes the
       issues its body says it closes: "Closes #3")
  POST /_fake/repos/O/R/pulls/N/close {}
  POST /_fake/repos/O/R/pulls/N/reopen {}
  POST /_fake/repos/O/R/check-runs {"sha", "name", "status"?, "conclusion"?}
  POST /_fake/teams {"org", "slug", "members": [login] or {login: role},
       "pending"?: [login]}
  POST /_fake/rate-limit {"remaining", "reset_in", "resource"?: core|search}
  POST /_fake/secondary {"count", "retry_after"}: the next COUNT API requests
       get a secondary limit's 403 with Retry-After
  POST /_fake/fail {"statuses": [500, 403, ...]}: the next API requests that
       keep the contract get these answers, one each in order, instead of
       theirs: 500 "Server Error", 403 "Resource not accessible by
       integration" (a refusal, not a rate limit); not violations
  GET  /_fake/webhook?event=E&repo=O/R&...  the payload GitHub would deliver:
       ping; issues (number, action, label); issue_comment (comment);
       pull_request_review (review); pull_request_review_comment (comment);
       pull_request (number, action); sender= sets the sender
  POST /_fake/deliver {"url", "secret"?, "event", "params"?: {...},
       "signature"?: "bad"|"none", "delivery"?}  sends that payload to URL
       (loopback only) as GitHub does, signed with X-Hub-Signature-256;
       -> {"status", "body", "delivery"}
  GET  /_fake/state   everything: issues, comments (with "history", every
       body it had: one POST and later PATCHes), pulls, reviews, review
       comments (replies too), check runs, teams, deleted refs, rate limits,
       the requests [{seq, time, method, path, status, if_none_match}] and
       the violations [{seq, method, path, message}]."""

import datetime
import hashlib
import hmac
import http.client
import http.server
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

PORT_FILE, LOG_FILE = sys.argv[1:3]
TOKEN = os.environ["GITHUB_TEST_TOKEN"]
LOGIN = os.environ.get("GITHUB_TEST_LOGIN", "paddock-bot")
PER_PAGE_CAP = min(100, int(os.environ.get("GITHUB_TEST_PER_PAGE", "100")))
API_VERSION = "2022-11-28"
WEB = "https://github.example"
DOCS = "https://docs.github.com/rest"
LOCK = threading.RLock()


def now_iso(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


def log(lines):
    with open(LOG_FILE, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n\n")


class Answer(Exception):
    """An answer decided on the way: raise Answer(status, obj, headers)."""

    def __init__(self, status, obj=None, headers=()):
        super().__init__(status)
        self.status, self.obj, self.headers = status, obj, list(headers)


def not_found(doc=""):
    return Answer(404, {"message": "Not Found", "documentation_url": DOCS + doc, "status": "404"})


def invalid(doc, errors, message="Validation Failed"):
    return Answer(422, {"message": message, "errors": errors,
                        "documentation_url": DOCS + doc, "status": "422"})


# ---- the state ----------------------------------------------------------

class Bucket:
    """One rate limit (x-ratelimit-resource): LIMIT requests per WINDOW s."""

    def __init__(self, name, limit, window):
        self.name, self.limit, self.window = name, limit, window
        self.remaining, self.reset = limit, int(time.time()) + window
        self.refused = False    # a 403 was answered; nothing before reset

    def roll(self, t):
        if t >= self.reset:
            self.remaining, self.reset, self.refused = self.limit, int(t) + self.window, False

    def headers(self):
        return [("x-ratelimit-limit", str(self.limit)),
                ("x-ratelimit-remaining", str(self.remaining)),
                ("x-ratelimit-reset", str(self.reset)),
                ("x-ratelimit-used", str(self.limit - self.remaining)),
                ("x-ratelimit-resource", self.name)]

    def dump(self):
        return {"limit": self.limit, "remaining": self.remaining, "reset": self.reset,
                "refused": self.refused}


class Repo:
    def __init__(self, full_name, git_dir=None):
        self.owner, self.name = full_name.split("/")
        self.full_name, self.git_dir = full_name, git_dir
        self.items = {}          # number -> issue or pull request (dict)
        self.next_number = 1
        self.check_runs = []     # dicts with head_sha

    def git(self, *args, check=True):
        r = subprocess.run(["git", "--git-dir", self.git_dir, *args], capture_output=True,
                           text=True, check=False)
        if check and r.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {r.stderr.strip()}")
        return r

    def rev(self, ref):
        if not self.git_dir:
            return None
        r = self.git("rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
        return r.stdout.strip() if r.returncode == 0 else None

    @property
    def default_branch(self):
        if self.git_dir:
            r = self.git("symbolic-ref", "-q", "--short", "HEAD", check=False)
            if r.returncode == 0 and r.stdout.strip():
                return r.stdout.strip()
        return "main"


class State:
    def __init__(self):
        self.repos = {"acme/widgets": Repo("acme/widgets", os.environ.get("GITHUB_TEST_GIT_DIR") or None),
                      "acme/limited": Repo("acme/limited")}
        self.next_id = 100       # one counter for every id: a mix-up shows
        self.comments = {}       # id -> issue comment
        self.reviews = {}        # id -> review
        self.review_comments = {}
        self.teams = {}          # (org, slug) -> {login: (role, state)}
        self.deleted_refs = []
        self.requests = []
        self.violations = []
        self.buckets = {"core": Bucket("core", 5000, 3600), "search": Bucket("search", 30, 60)}
        self.secondary_left, self.secondary_after, self.secondary_until = 0, 0, 0.0
        self.faults = []         # statuses the next API requests get (/_fake/fail)

    def new_id(self):
        self.next_id += 1
        return self.next_id


S = State()


# ---- GitHub's objects ---------------------------------------------------

def user_obj(login):
    uid = int(hashlib.sha256(login.encode()).hexdigest()[:6], 16)
    return {"login": login, "id": uid, "node_id": f"U_{uid}", "type": "User",
            "site_admin": False, "html_url": f"{WEB}/{login}",
            "avatar_url": f"https://avatars.github.example/u/{uid}"}


def association(login):
    if any(login in members for members in S.teams.values()):
        return "MEMBER"
    return "OWNER" if login == LOGIN else "NONE"


def label_obj(name):
    lid = int(hashlib.sha256(name.encode()).hexdigest()[:6], 16)
    return {"id": lid, "node_id": f"LA_{lid}", "name": name, "color": "ededed",
            "default": False, "description": None}


def repo_obj(repo):
    return {"id": int(hashlib.sha256(repo.full_name.encode()).hexdigest()[:6], 16),
            "name": repo.name, "full_name": repo.full_name, "private": False,
            "owner": user_obj(repo.owner), "html_url": f"{WEB}/{repo.full_name}",
            "default_branch": repo.default_branch}


def issue_obj(api, repo, it):
    kind = "pull" if it.get("pull") else "issues"
    o = {"url": f"{api}/repos/{repo.full_name}/issues/{it['number']}",
         "repository_url": f"{api}/repos/{repo.full_name}",
         "comments_url": f"{api}/repos/{repo.full_name}/issues/{it['number']}/comments",
         "html_url": f"{WEB}/{repo.full_name}/{kind}/{it['number']}",
         "id": it["id"], "node_id": f"I_{it['id']}", "number": it["number"],
         "title": it["title"], "body": it["body"], "user": user_obj(it["user"]),
         "labels": [label_obj(n) for n in it["labels"]], "state": it["state"],
         "state_reason": it.get("state_reason"), "locked": False, "assignee": None,
         "assignees": [], "milestone": None, "comments": len(it["comments"]),
         "created_at": now_iso(it["created"]), "updated_at": now_iso(it["updated"]),
         "closed_at": now_iso(it["closed"]) if it.get("closed") else None,
         "author_association": association(it["user"])}
    if it.get("pull"):
        p = it["pull"]
        o["draft"] = p["draft"]
        o["pull_request"] = {"url": f"{api}/repos/{repo.full_name}/pulls/{it['number']}",
                             "html_url": o["html_url"], "diff_url": o["html_url"] + ".diff",
                             "patch_url": o["html_url"] + ".patch",
                             "merged_at": now_iso(p["merged_at"]) if p["merged_at"] else None}
    return o


def pull_head(repo, it):
    """The head's sha, read from the git dir while the pull request is open."""
    p = it["pull"]
    if it["state"] == "open" and repo.git_dir:
        sha = repo.rev("refs/heads/" + p["head"])
        if sha and sha != p["sha"]:
            p["sha"] = sha
            repo.git("update-ref", f"refs/pull/{it['number']}/head", sha)
    return p["sha"]


def pull_obj(api, repo, it):
    p = it["pull"]
    sha = pull_head(repo, it)
    o = issue_obj(api, repo, it)
    for k in ("pull_request", "repository_url", "comments_url", "state_reason", "comments"):
        o.pop(k, None)
    o.update({
        "url": f"{api}/repos/{repo.full_name}/pulls/{it['number']}",
        "html_url": f"{WEB}/{repo.full_name}/pull/{it['number']}",
        "issue_url": f"{api}/repos/{repo.full_name}/issues/{it['number']}",
        "head": {"label": f"{repo.owner}:{p['head']}", "ref": p["head"], "sha": sha,
                 "user": user_obj(repo.owner), "repo": repo_obj(repo)},
        "base": {"label": f"{repo.owner}:{p['base']}", "ref": p["base"],
                 "sha": repo.rev("refs/heads/" + p["base"]) or p["base_sha"],
                 "user": user_obj(repo.owner), "repo": repo_obj(repo)},
        "draft": p["draft"], "merged": p["merged_at"] is not None,
        "merged_at": now_iso(p["merged_at"]) if p["merged_at"] else None,
        "merge_commit_sha": p["merge_commit_sha"],
        "merged_by": user_obj(p["merged_by"]) if p["merged_by"] else None,
        "mergeable": True if it["state"] == "open" else None,
        "mergeable_state": "clean" if it["state"] == "open" else "unknown",
        "requested_reviewers": [], "requested_teams": [], "auto_merge": None,
        "maintainer_can_modify": p["maintainer_can_modify"],
        "comments": len(it["comments"]), "review_comments": len(p["review_comments"]),
    })
    return o


def comment_obj(api, c):
    repo = S.repos[c["repo"]]
    it = repo.items[c["number"]]
    kind = "pull" if it.get("pull") else "issues"
    return {"id": c["id"], "node_id": f"IC_{c['id']}",
            "url": f"{api}/repos/{repo.full_name}/issues/comments/{c['id']}",
            "html_url": f"{WEB}/{repo.full_name}/{kind}/{c['number']}#issuecomment-{c['id']}",
            "issue_url": f"{api}/repos/{repo.full_name}/issues/{c['number']}",
            "body": c["history"][-1], "user": user_obj(c["user"]),
            "created_at": now_iso(c["created"]), "updated_at": now_iso(c["updated"]),
            "author_association": association(c["user"])}


def review_obj(api, r):
    base = f"{api}/repos/{r['repo']}/pulls/{r['number']}"
    html = f"{WEB}/{r['repo']}/pull/{r['number']}#pullrequestreview-{r['id']}"
    return {"id": r["id"], "node_id": f"PRR_{r['id']}", "user": user_obj(r["user"]),
            "body": r["body"], "state": r["state"], "html_url": html,
            "pull_request_url": base, "commit_id": r["commit_id"],
            "submitted_at": now_iso(r["created"]), "author_association": association(r["user"]),
            "_links": {"html": {"href": html}, "pull_request": {"href": base}}}


def review_comment_obj(api, c):
    base = f"{api}/repos/{c['repo']}/pulls"
    html = f"{WEB}/{c['repo']}/pull/{c['number']}#discussion_r{c['id']}"
    o = {"url": f"{base}/comments/{c['id']}", "id": c["id"], "node_id": f"PRRC_{c['id']}",
         "pull_request_review_id": c["review_id"], "diff_hunk": c["diff_hunk"],
         "path": c["path"], "position": c["position"], "original_position": c["position"],
         "commit_id": c["commit_id"], "original_commit_id": c["commit_id"],
         "user": user_obj(c["user"]), "body": c["body"],
         "created_at": now_iso(c["created"]), "updated_at": now_iso(c["created"]),
         "html_url": html, "pull_request_url": f"{base}/{c['number']}",
         "author_association": association(c["user"]),
         "_links": {"self": {"href": f"{base}/comments/{c['id']}"}, "html": {"href": html},
                    "pull_request": {"href": f"{base}/{c['number']}"}},
         "start_line": None, "original_start_line": None, "start_side": None,
         "line": c["line"], "original_line": c["line"], "side": c["side"],
         "subject_type": "line"}
    if c["in_reply_to"] is not None:
        o["in_reply_to_id"] = c["in_reply_to"]
    return o


def check_run_obj(api, repo, c):
    return {"id": c["id"], "node_id": f"CR_{c['id']}", "head_sha": c["head_sha"],
            "name": c["name"], "status": c["status"], "conclusion": c["conclusion"],
            "url": f"{api}/repos/{repo.full_name}/check-runs/{c['id']}",
            "html_url": f"{WEB}/{repo.full_name}/runs/{c['id']}",
            "started_at": now_iso(c["created"]),
            "completed_at": now_iso(c["created"]) if c["status"] == "completed" else None,
            "app": {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"}}


# ---- the diff side of a review comment ----------------------------------

def locate(repo, base, head, path, line, side):
    """(diff_hunk, position) of LINE on SIDE in `git diff base...head -- path`,
    as GitHub computes them; None when the line is not in the diff."""
    if not repo.git_dir:
        return f"@@ -{line},1 +{line},1 @@", 1
    out = repo.git("diff", "--no-color", "-U3", f"{base}...{head}", "--", path).stdout
    lines = out.split("\n")
    while lines and not lines[0].startswith("@@"):
        lines.pop(0)
    position, old, new, hunk = 0, 0, 0, []
    for i, text in enumerate(lines):
        m = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", text)
        if m:
            old, new = int(m.group(1)), int(m.group(2))
            hunk = [text]
            if i:
                position += 1
            continue
        if not text or text.startswith("\\"):
            continue
        position += 1
        hunk.append(text)
        kind = text[0]
        if side == "RIGHT" and kind in " +" and new == line:
            return "\n".join(hunk), position
        if side == "LEFT" and kind in " -" and old == line:
            return "\n".join(hunk), position
        if kind in " -":
            old += 1
        if kind in " +":
            new += 1
    return None


# ---- pagination and ETags -----------------------------------------------

def paginate(h, items):
    """This page of ITEMS and the Link header, from per_page and page."""
    per_page = min(int(h.query.get("per_page", "30")), PER_PAGE_CAP)
    page = int(h.query.get("page", "1"))
    last = max(1, math.ceil(len(items) / per_page))
    links = []

    def url(p):
        q = [(k, v) for k, v in h.query_list if k != "page"] + [("page", str(p))]
        return f"<{h.api}{h.route_path}?{urllib.parse.urlencode(q)}>"
    if page < last:
        links += [f'{url(page + 1)}; rel="next"', f'{url(last)}; rel="last"']
    if page > 1:
        links += [f'{url(page - 1)}; rel="prev"', f'{url(1)}; rel="first"']
    headers = [("Link", ", ".join(links))] if links else []
    return items[(page - 1) * per_page:page * per_page], headers


def etag_of(body):
    return '"' + hashlib.sha256(body).hexdigest()[:40] + '"'


def etag_matches(header, etag):
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or any(t.removeprefix("W/") == etag for t in tags)


# ---- the contract of each call ------------------------------------------

def is_int(v):
    return re.fullmatch(r"[1-9][0-9]*", v) is not None


def one_of(*values):
    return lambda v: v in values


def is_time(v):
    return re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", v) is not None


def since(h):
    """The query's since (ISO 8601) as a Unix time, or None."""
    v = h.query.get("since")
    return datetime.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp() if v else None


def is_any(v):
    return True


PAGES = {"per_page": is_int, "page": is_int}
NAME = r"[A-Za-z0-9._-]+"
NUMBER = r"[1-9][0-9]*"
O_R = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
BODY = {"body": (str, True)}


class Route:
    def __init__(self, method, path, handler, doc, query=None, body=None, resource="core"):
        self.method, self.path, self.handler, self.doc = method, re.compile(path), handler, doc
        self.query = dict(PAGES if method == "GET" and query is not None else {}, **(query or {}))
        self.body, self.resource = body, resource


def the_repo(h):
    repo = S.repos.get(f"{h.args['owner']}/{h.args['repo']}")
    if repo is None:
        raise not_found(h.route.doc)
    return repo


def the_item(h, repo, pull=False):
    it = repo.items.get(int(h.args["number"]))
    if it is None or (pull and not it.get("pull")):
        raise not_found(h.route.doc)
    return it


def list_issues(h):
    repo = the_repo(h)
    q = h.query
    items = list(repo.items.values())
    state = q.get("state", "open")
    if state != "all":
        items = [i for i in items if i["state"] == state]
    if q.get("labels"):
        want = {l.strip().lower() for l in q["labels"].split(",") if l.strip()}
        items = [i for i in items if want <= {l.lower() for l in i["labels"]}]
    if q.get("creator"):
        items = [i for i in items if i["user"] == q["creator"]]
    if since(h) is not None:
        items = [i for i in items if i["updated"] >= since(h)]
    key = {"created": "created", "updated": "updated", "comments": "comments"}[q.get("sort", "created")]
    items.sort(key=lambda i: (len(i["comments"]) if key == "comments" else i[key], i["number"]),
               reverse=q.get("direction", "desc") == "desc")
    page, headers = paginate(h, items)
    return 200, [issue_obj(h.api, repo, i) for i in page], headers


def search_terms(q):
    return re.findall(r'(?:[^\s"]+:)?"[^"]*"|\S+', q)


def search_issues(h):
    q = h.query.get("q", "")
    if not q.strip():
        raise invalid("/search/search#search-issues-and-pull-requests",
                      [{"resource": "Search", "field": "q", "code": "missing"}])
    tests, words = [], []
    for term in search_terms(q):
        k, _, v = term.partition(":")
        v = v.strip('"')
        if not _ or k not in ("repo", "is", "type", "state", "label", "author", "in"):
            words.append(term.strip('"').lower())
        elif k == "repo":
            tests.append(lambda r, i, v=v: r.full_name.lower() == v.lower())
        elif (k, v) in (("is", "issue"), ("type", "issue")):
            tests.append(lambda r, i: not i.get("pull"))
        elif (k, v) in (("is", "pr"), ("type", "pr")):
            tests.append(lambda r, i: bool(i.get("pull")))
        elif k in ("is", "state") and v in ("open", "closed"):
            tests.append(lambda r, i, v=v: i["state"] == v)
        elif k == "label":
            tests.append(lambda r, i, v=v: v.lower() in {l.lower() for l in i["labels"]})
        elif k == "author":
            tests.append(lambda r, i, v=v: i["user"] == v)
    found = []
    for repo in S.repos.values():
        for it in repo.items.values():
            text = (it["title"] + "\n" + (it["body"] or "")).lower()
            if all(t(repo, it) for t in tests) and all(w in text for w in words):
                found.append((repo, it))
    found.sort(key=lambda ri: ri[1]["created"], reverse=True)
    page, headers = paginate(h, found)
    items = [dict(issue_obj(h.api, r, i), score=1.0) for r, i in page]
    return 200, {"total_count": len(found), "incomplete_results": False, "items": items}, headers


def create_issue_comment(h):
    repo = the_repo(h)
    it = the_item(h, repo)
    if not h.json["body"].strip():
        raise invalid(h.route.doc, [{"resource": "IssueComment", "field": "body", "code": "missing_field"}])
    c = add_issue_comment(repo, it, LOGIN, h.json["body"])
    return 201, comment_obj(h.api, c), [("Location", comment_obj(h.api, c)["url"])]


def add_issue_comment(repo, it, user, body):
    t = time.time()
    c = {"id": S.new_id(), "repo": repo.full_name, "number": it["number"], "user": user,
         "history": [body], "created": t, "updated": t}
    S.comments[c["id"]] = c
    it["comments"].append(c["id"])
    it["updated"] = t
    return c


def update_issue_comment(h):
    repo = the_repo(h)
    c = S.comments.get(int(h.args["comment_id"]))
    if c is None or c["repo"] != repo.full_name:
        raise not_found(h.route.doc)
    if c["user"] != LOGIN:
        h.violation(f"edited a comment by {c['user']}, not one of its own")
    c["history"].append(h.json["body"])
    c["updated"] = time.time()
    return 200, comment_obj(h.api, c), []


def create_pull(h):
    repo = the_repo(h)
    b = h.json
    if "title" not in b and "issue" not in b:
        h.contract("title is missing (and no issue)")
    head, base = b["head"].split(":")[-1], b["base"]
    errs = []
    if repo.git_dir:
        if not repo.rev("refs/heads/" + head):
            errs.append({"resource": "PullRequest", "field": "head", "code": "invalid"})
        if not repo.rev("refs/heads/" + base):
            errs.append({"resource": "PullRequest", "field": "base", "code": "invalid"})
    elif base != repo.default_branch:
        errs.append({"resource": "PullRequest", "field": "base", "code": "invalid"})
    if errs:
        raise invalid(h.route.doc, errs)
    for it in repo.items.values():
        p = it.get("pull")
        if p and it["state"] == "open" and p["head"] == head and p["base"] == base:
            raise invalid(h.route.doc, [{"resource": "PullRequest", "code": "custom",
                                         "message": f"A pull request already exists for {repo.owner}:{head}."}])
    sha = repo.rev("refs/heads/" + head)
    if repo.git_dir and repo.git("merge-base", "--is-ancestor", sha, "refs/heads/" + base,
                                 check=False).returncode == 0:
        raise invalid(h.route.doc, [{"resource": "PullRequest", "code": "custom",
                                     "message": f"No commits between {base} and {head}"}])
    t = time.time()
    it = {"id": S.new_id(), "number": repo.next_number, "title": b.get("title", ""),
          "body": b.get("body"), "user": LOGIN, "labels": [], "state": "open",
          "created": t, "updated": t, "closed": None, "comments": [],
          "pull": {"head": head, "base": base, "sha": sha, "base_sha": repo.rev("refs/heads/" + base),
                   "draft": b.get("draft", False), "merged_at": None, "merge_commit_sha": None,
                   "merged_by": None, "maintainer_can_modify": b.get("maintainer_can_modify", True),
                   "reviews": [], "review_comments": []}}
    repo.next_number += 1
    repo.items[it["number"]] = it
    if sha:
        repo.git("update-ref", f"refs/pull/{it['number']}/head", sha)
    o = pull_obj(h.api, repo, it)
    return 201, o, [("Location", o["url"])]


def get_pull(h):
    repo = the_repo(h)
    return 200, pull_obj(h.api, repo, the_item(h, repo, pull=True)), []


def list_check_runs(h):
    repo = the_repo(h)
    ref = urllib.parse.unquote(h.args["ref"])
    sha = ref if re.fullmatch(r"[0-9a-f]{40}", ref) else repo.rev(ref)
    if repo.git_dir and (not sha or not repo.rev(sha)):
        raise Answer(422, {"message": f"No commit found for SHA: {ref}",
                           "documentation_url": DOCS + h.route.doc, "status": "422"})
    runs = [c for c in repo.check_runs if c["head_sha"] == sha]
    for k in ("check_name", "status"):
        if k in h.query:
            runs = [c for c in runs if c[k.replace("check_", "")] == h.query[k]]
    if h.query.get("filter", "latest") == "latest":
        latest = {}
        for c in runs:
            latest[c["name"]] = c
        runs = list(latest.values())
    page, headers = paginate(h, runs)
    return 200, {"total_count": len(runs),
                 "check_runs": [check_run_obj(h.api, repo, c) for c in page]}, headers


def list_reviews(h):
    repo = the_repo(h)
    it = the_item(h, repo, pull=True)
    page, headers = paginate(h, [S.reviews[i] for i in it["pull"]["reviews"]])
    return 200, [review_obj(h.api, r) for r in page], headers


def list_review_comments_of_review(h):
    repo = the_repo(h)
    it = the_item(h, repo, pull=True)
    r = S.reviews.get(int(h.args["review_id"]))
    if r is None or r["repo"] != repo.full_name or r["number"] != it["number"]:
        raise not_found(h.route.doc)
    page, headers = paginate(h, [S.review_comments[i] for i in r["comments"]])
    return 200, [review_comment_obj(h.api, c) for c in page], headers


def list_review_comments(h):
    repo = the_repo(h)
    it = the_item(h, repo, pull=True)
    cs = [S.review_comments[i] for i in it["pull"]["review_comments"]]
    if since(h) is not None:
        cs = [c for c in cs if c["created"] >= since(h)]
    cs.sort(key=lambda c: c["id"], reverse=h.query.get("direction", "asc") == "desc")
    page, headers = paginate(h, cs)
    return 200, [review_comment_obj(h.api, c) for c in page], headers


def list_issue_comments(h):
    repo = the_repo(h)
    it = the_item(h, repo)
    cs = [S.comments[i] for i in it["comments"]]
    if since(h) is not None:
        cs = [c for c in cs if c["updated"] >= since(h)]
    page, headers = paginate(h, cs)
    return 200, [comment_obj(h.api, c) for c in page], headers


def create_reply(h):
    repo = the_repo(h)
    it = the_item(h, repo, pull=True)
    root = S.review_comments.get(int(h.args["comment_id"]))
    if root is None or root["repo"] != repo.full_name or root["number"] != it["number"]:
        raise not_found(h.route.doc)
    if root["in_reply_to"] is not None:
        h.contract(f"comment {root['id']} is a reply; replies to replies are not supported")
    c = add_review_comment(repo, it, LOGIN, h.json["body"], reply_to=root)
    o = review_comment_obj(h.api, c)
    return 201, o, [("Location", o["url"])]


def add_review(repo, it, user, state, body, commit_id=None):
    t = time.time()
    r = {"id": S.new_id(), "repo": repo.full_name, "number": it["number"], "user": user,
         "state": state, "body": body, "commit_id": commit_id or pull_head(repo, it),
         "created": t, "comments": []}
    S.reviews[r["id"]] = r
    it["pull"]["reviews"].append(r["id"])
    return r


def add_review_comment(repo, it, user, body, path=None, line=None, side="RIGHT",
                       review=None, reply_to=None):
    """A review comment; without REVIEW, a COMMENTED review of its own."""
    if reply_to is not None:
        path, line, side = reply_to["path"], reply_to["line"], reply_to["side"]
        hunk, position, commit_id = reply_to["diff_hunk"], reply_to["position"], reply_to["commit_id"]
    else:
        commit_id = pull_head(repo, it)
        where = locate(repo, it["pull"]["base"], commit_id, path, line, side)
        if where is None:
            raise Answer(400, {"message": f"control: {path} line {line} ({side}) is not in the diff"})
        hunk, position = where
    if review is None:
        review = add_review(repo, it, user, "COMMENTED", "", commit_id)
    c = {"id": S.new_id(), "repo": repo.full_name, "number": it["number"], "user": user,
         "body": body, "path": path, "line": line, "side": side, "diff_hunk": hunk,
         "position": position, "commit_id": commit_id, "review_id": review["id"],
         "in_reply_to": reply_to["id"] if reply_to else None, "created": time.time()}
    S.review_comments[c["id"]] = c
    review["comments"].append(c["id"])
    it["pull"]["review_comments"].append(c["id"])
    it["updated"] = c["created"]
    return c


def get_membership(h):
    members = S.teams.get((h.args["org"].lower(), h.args["team_slug"].lower()))
    m = members.get(h.args["username"]) if members is not None else None
    if m is None:
        raise not_found(h.route.doc)
    role, state = m
    return 200, {"url": f"{h.api}{h.route_path}", "role": role, "state": state}, []


def delete_ref(h):
    repo = the_repo(h)
    ref = urllib.parse.unquote(h.args["ref"])
    branch = ref[len("heads/"):]
    if branch == repo.default_branch:
        h.violation(f"tried to delete the default branch {branch}")
        raise invalid(h.route.doc, [], "Cannot delete the default branch")
    if repo.git_dir:
        exists = repo.rev("refs/heads/" + branch) is not None
    else:   # without a git dir, the heads of its pull requests exist till deleted
        exists = (any(it.get("pull") and it["pull"]["head"] == branch for it in repo.items.values())
                  and {"repo": repo.full_name, "ref": "refs/" + ref} not in S.deleted_refs)
    if not exists:
        raise Answer(422, {"message": "Reference does not exist",
                           "documentation_url": DOCS + h.route.doc, "status": "422"})
    if repo.git_dir:
        repo.git("update-ref", "-d", "refs/heads/" + branch)
    S.deleted_refs.append({"repo": repo.full_name, "ref": "refs/" + ref})
    for it in repo.items.values():
        if it.get("pull") and it["state"] == "open" and it["pull"]["head"] == branch:
            it["state"], it["closed"] = "closed", time.time()
    return 204, None, []


ROUTES = [
    Route("GET", O_R + r"/issues", list_issues, "/issues/issues#list-repository-issues",
          query={"milestone": is_any, "state": one_of("open", "closed", "all"), "assignee": is_any,
                 "type": is_any, "creator": is_any, "mentioned": is_any, "labels": is_any,
                 "sort": one_of("created", "updated", "comments"),
                 "direction": one_of("asc", "desc"), "since": is_time}),
    Route("GET", r"/search/issues", search_issues,
          "/search/search#search-issues-and-pull-requests", resource="search",
          query={"q": is_any, "sort": one_of("comments", "reactions", "reactions-+1",
                                             "reactions--1", "reactions-smile",
                                             "reactions-thinking_face", "reactions-heart",
                                             "reactions-tada", "interactions", "created",
                                             "updated"),
                 "order": one_of("asc", "desc"), "advanced_search": one_of("true", "false")}),
    Route("POST", O_R + r"/issues/(?P<number>[^/]+)/comments", create_issue_comment,
          "/issues/comments#create-an-issue-comment", body=BODY),
    Route("PATCH", O_R + r"/issues/comments/(?P<comment_id>[^/]+)", update_issue_comment,
          "/issues/comments#update-an-issue-comment", body=BODY),
    Route("POST", O_R + r"/pulls", create_pull, "/pulls/pulls#create-a-pull-request",
          body={"title": (str, False), "head": (str, True), "head_repo": (str, False),
                "base": (str, True), "body": (str, False), "maintainer_can_modify": (bool, False),
                "draft": (bool, False), "issue": (int, False)}),
    Route("GET", O_R + r"/pulls/(?P<number>[^/]+)", get_pull, "/pulls/pulls#get-a-pull-request",
          query={}),
    Route("GET", O_R + r"/commits/(?P<ref>[^/]+)/check-runs", list_check_runs,
          "/checks/runs#list-check-runs-for-a-git-reference",
          query={"check_name": is_any, "status": one_of("queued", "in_progress", "completed"),
                 "filter": one_of("latest", "all"), "app_id": is_int}),
    Route("GET", O_R + r"/pulls/(?P<number>[^/]+)/reviews", list_reviews,
          "/pulls/reviews#list-reviews-for-a-pull-request", query={}),
    Route("GET", O_R + r"/pulls/(?P<number>[^/]+)/reviews/(?P<review_id>[^/]+)/comments",
          list_review_comments_of_review, "/pulls/reviews#list-comments-for-a-pull-request-review",
          query={}),
    Route("GET", O_R + r"/pulls/(?P<number>[^/]+)/comments", list_review_comments,
          "/pulls/comments#list-review-comments-on-a-pull-request",
          query={"sort": one_of("created", "updated"), "direction": one_of("asc", "desc"),
                 "since": is_time}),
    Route("GET", O_R + r"/issues/(?P<number>[^/]+)/comments", list_issue_comments,
          "/issues/comments#list-issue-comments", query={"since": is_time}),
    Route("POST", O_R + r"/pulls/(?P<number>[^/]+)/comments/(?P<comment_id>[^/]+)/replies",
          create_reply, "/pulls/comments#create-a-reply-for-a-review-comment", body=BODY),
    Route("GET", r"/orgs/(?P<org>[^/]+)/teams/(?P<team_slug>[^/]+)/memberships/(?P<username>[^/]+)",
          get_membership, "/teams/members#get-team-membership-for-a-user", query={}),
    Route("DELETE", O_R + r"/git/refs/(?P<ref>heads/.+)", delete_ref,
          "/git/refs#delete-a-reference"),
]
SHAPES = {"owner": NAME, "repo": NAME, "org": NAME, "team_slug": NAME, "username": NAME,
          "number": NUMBER, "comment_id": NUMBER, "review_id": NUMBER}


# ---- control endpoints --------------------------------------------------

def ctl_repo_item(m, pull=False):
    repo = S.repos.get(m["repo"])
    it = repo.items.get(int(m["number"])) if repo else None
    if it is None or (pull and not it.get("pull")):
        raise Answer(400, {"message": f"control: no {'pull request' if pull else 'issue'} {m['repo']}#{m['number']}"})
    return repo, it


def ctl_repos(m, b):
    S.repos[b["full_name"]] = Repo(b["full_name"], b.get("git_dir"))
    return {"full_name": b["full_name"]}


def ctl_issue(m, b):
    repo = S.repos.get(m["repo"])
    if repo is None:
        raise Answer(400, {"message": f"control: no repository {m['repo']}"})
    t = time.time()
    it = {"id": S.new_id(), "number": repo.next_number, "title": b["title"],
          "body": b.get("body"), "user": b.get("user", "octocat"),
          "labels": list(b.get("labels", [])), "state": "open", "created": t, "updated": t,
          "closed": None, "comments": []}
    repo.next_number += 1
    repo.items[it["number"]] = it
    return {"number": it["number"], "id": it["id"]}


def ctl_labels(m, b):
    _, it = ctl_repo_item(m)
    it["labels"] += [l for l in b["labels"] if l not in it["labels"]]
    it["updated"] = time.time()
    return {"labels": it["labels"]}


def ctl_issue_comment(m, b):
    repo, it = ctl_repo_item(m)
    return {"id": add_issue_comment(repo, it, b["user"], b["body"])["id"]}


def ctl_issue_close(m, b):
    _, it = ctl_repo_item(m)
    it["state"], it["closed"], it["state_reason"] = "closed", time.time(), "completed"
    it["updated"] = it["closed"]
    return {}


def ctl_review(m, b):
    repo, it = ctl_repo_item(m, pull=True)
    if b["state"] not in ("CHANGES_REQUESTED", "APPROVED", "COMMENTED"):
        raise Answer(400, {"message": "control: state is CHANGES_REQUESTED, APPROVED or COMMENTED"})
    r = add_review(repo, it, b["user"], b["state"], b.get("body", ""))
    ids = [add_review_comment(repo, it, b["user"], c["body"], c["path"], c["line"],
                              c.get("side", "RIGHT"), review=r)["id"] for c in b.get("comments", [])]
    it["updated"] = time.time()
    return {"id": r["id"], "comment_ids": ids}


def ctl_review_comment(m, b):
    repo, it = ctl_repo_item(m, pull=True)
    if b.get("in_reply_to") is not None:
        root = S.review_comments[int(b["in_reply_to"])]
        c = add_review_comment(repo, it, b["user"], b["body"], reply_to=root)
    else:
        c = add_review_comment(repo, it, b["user"], b["body"], b["path"], b["line"],
                               b.get("side", "RIGHT"))
    return {"id": c["id"], "review_id": c["review_id"]}


def ctl_merge(m, b):
    repo, it = ctl_repo_item(m, pull=True)
    p = it["pull"]
    if it["state"] != "open":
        raise Answer(400, {"message": "control: the pull request is not open"})
    head = pull_head(repo, it)
    merged = head
    if repo.git_dir:
        base_ref = "refs/heads/" + p["base"]
        if repo.git("merge-base", "--is-ancestor", base_ref, head, check=False).returncode != 0:
            merged = repo.git("commit-tree", head + "^{tree}", "-p", base_ref, "-p", head, "-m",
                              f"Merge pull request #{it['number']}").stdout.strip()
        repo.git("update-ref", base_ref, merged)
    t = time.time()
    p.update(merged_at=t, merge_commit_sha=merged, merged_by=b.get("user", repo.owner))
    it.update(state="closed", closed=t, updated=t)
    for n in re.findall(r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?) #(\d+)", it["body"] or ""):
        closed = repo.items.get(int(n))
        if closed and not closed.get("pull") and closed["state"] == "open":
            closed.update(state="closed", closed=t, updated=t, state_reason="completed")
    return {"sha": merged}


def ctl_close_pull(m, b):
    _, it = ctl_repo_item(m, pull=True)
    it.update(state="closed", closed=time.time(), updated=time.time())
    return {}


def ctl_reopen_pull(m, b):
    _, it = ctl_repo_item(m, pull=True)
    if it.get("merged"):
        raise ValueError("a merged pull request cannot be reopened")
    it.update(state="open", closed=None, updated=time.time())
    return {}


def ctl_check_run(m, b):
    repo = S.repos[m["repo"]]
    c = {"id": S.new_id(), "head_sha": b["sha"], "name": b["name"],
         "status": b.get("status", "completed"), "created": time.time(),
         "conclusion": b.get("conclusion", "success" if b.get("status", "completed") == "completed" else None)}
    repo.check_runs.append(c)
    return {"id": c["id"]}


def ctl_team(m, b):
    members = b.get("members", [])
    if isinstance(members, list):
        members = {login: "member" for login in members}
    team = {login: (role, "active") for login, role in members.items()}
    team.update({login: ("member", "pending") for login in b.get("pending", [])})
    S.teams[(b["org"].lower(), b["slug"].lower())] = team
    return {}


def ctl_rate_limit(m, b):
    bucket = S.buckets[b.get("resource", "core")]
    bucket.remaining = b["remaining"]
    bucket.reset = math.ceil(time.time() + b["reset_in"])
    bucket.refused = False
    return bucket.dump()


def ctl_fail(m, b):
    S.faults = [int(x) for x in b["statuses"]]
    return {}


def ctl_secondary(m, b):
    S.secondary_left, S.secondary_after = b["count"], b["retry_after"]
    return {}


def state_dump(api):
    def with_repo(repo, o):
        return dict(o, repo=repo.full_name)
    return {
        "issues": [with_repo(r, issue_obj(api, r, i)) for r in S.repos.values()
                   for i in r.items.values()],
        "pulls": [with_repo(r, pull_obj(api, r, i)) for r in S.repos.values()
                  for i in r.items.values() if i.get("pull")],
        "comments": [dict(comment_obj(api, c), repo=c["repo"], number=c["number"],
                          history=c["history"]) for c in S.comments.values()],
        "reviews": [dict(review_obj(api, r), repo=r["repo"], number=r["number"])
                    for r in S.reviews.values()],
        "review_comments": [dict(review_comment_obj(api, c), repo=c["repo"], number=c["number"])
                            for c in S.review_comments.values()],
        "check_runs": {r.full_name: [check_run_obj(api, r, c) for c in r.check_runs]
                       for r in S.repos.values()},
        "teams": [{"org": o, "slug": s, "members": {k: list(v) for k, v in t.items()}}
                  for (o, s), t in S.teams.items()],
        "deleted_refs": S.deleted_refs,
        "rate_limit": {k: v.dump() for k, v in S.buckets.items()},
        "requests": S.requests,
        "violations": S.violations,
    }


def webhook_payload(q, api):
    """The body GitHub would deliver for the event Q["event"]; the sender is
    the author of the comment or review, else Q["sender"] (default octocat)."""
    event = q["event"]
    if event == "ping":
        return {"zen": "Keep it logically awesome.", "hook_id": 1,
                "hook": {"type": "Repository", "id": 1, "active": True, "events": ["*"],
                         "config": {"content_type": "json", "insecure_ssl": "0"}},
                "sender": user_obj(q.get("sender", "octocat"))}
    repo = S.repos[q["repo"]]
    out = {"repository": repo_obj(repo)}
    author = q.get("sender", "octocat")
    if event == "issues":
        it = repo.items[int(q["number"])]
        out.update(action=q.get("action", "opened"), issue=issue_obj(api, repo, it))
        if "label" in q:
            out["label"] = label_obj(q["label"])
    elif event == "issue_comment":
        c = S.comments[int(q["comment"])]
        out.update(action=q.get("action", "created"), comment=comment_obj(api, c),
                   issue=issue_obj(api, repo, repo.items[c["number"]]))
        author = c["user"]
    elif event == "pull_request_review":
        r = S.reviews[int(q["review"])]
        out.update(action=q.get("action", "submitted"), review=review_obj(api, r),
                   pull_request=pull_obj(api, repo, repo.items[r["number"]]))
        author = r["user"]
    elif event == "pull_request_review_comment":
        c = S.review_comments[int(q["comment"])]
        out.update(action=q.get("action", "created"), comment=review_comment_obj(api, c),
                   pull_request=pull_obj(api, repo, repo.items[c["number"]]))
        author = c["user"]
    elif event == "pull_request":
        it = repo.items[int(q["number"])]
        out.update(action=q.get("action", "opened"), number=it["number"],
                   pull_request=pull_obj(api, repo, it))
    else:
        raise Answer(400, {"message": f"control: no payload for the event {event}"})
    out["sender"] = user_obj(q.get("sender", author))
    return out


def ctl_deliver(b, api):
    """Sends a payload as GitHub does; called without LOCK (the receiver may
    call the API before it answers)."""
    url = urllib.parse.urlsplit(b["url"])
    if url.scheme != "http" or url.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise Answer(400, {"message": "control: deliveries go to loopback http only"})
    with LOCK:
        payload = webhook_payload(dict(b.get("params", {}), event=b["event"]), api)
    raw = json.dumps(payload, separators=(",", ":")).encode()
    delivery = b.get("delivery") or str(uuid.uuid4())
    headers = {"Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/fake",
               "X-GitHub-Event": b["event"], "X-GitHub-Delivery": delivery,
               "X-GitHub-Hook-ID": "1"}
    if b.get("signature") != "none":
        secret = b.get("secret", "") if b.get("signature") != "bad" else "not-the-secret"
        headers["X-Hub-Signature-256"] = "sha256=" + hmac.new(
            secret.encode(), raw, hashlib.sha256).hexdigest()
    conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=30)
    try:
        conn.request("POST", url.path or "/", raw, headers)
        r = conn.getresponse()
        return {"status": r.status, "body": r.read().decode("utf-8", "replace"),
                "delivery": delivery}
    finally:
        conn.close()


CONTROL = [
    ("POST", r"/_fake/repos", ctl_repos),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/issues", ctl_issue),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<number>\d+)/labels", ctl_labels),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<number>\d+)/comments", ctl_issue_comment),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<number>\d+)/close", ctl_issue_close),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<number>\d+)/reviews", ctl_review),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<number>\d+)/comments", ctl_review_comment),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<number>\d+)/merge", ctl_merge),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<number>\d+)/close", ctl_close_pull),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<number>\d+)/reopen", ctl_reopen_pull),
    ("POST", r"/_fake/repos/(?P<repo>[^/]+/[^/]+)/check-runs", ctl_check_run),
    ("POST", r"/_fake/teams", ctl_team),
    ("POST", r"/_fake/rate-limit", ctl_rate_limit),
    ("POST", r"/_fake/secondary", ctl_secondary),
    ("POST", r"/_fake/fail", ctl_fail),
]


# ---- the server ---------------------------------------------------------

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = lambda self: self.handle_one()

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

    def send(self, status, obj, headers=(), etag=False):
        body = b"" if obj is None else json.dumps(obj, indent=1).encode()
        self.send_response(status)
        if obj is not None:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        for k, v in headers:
            self.send_header(k, v)
        if obj is not None:
            self.send_header("Content-Length", str(len(body)))
        elif status not in (204, 304):
            self.send_header("Content-Length", "0")
        self.end_headers()
        if obj is not None:
            self.wfile.write(body)

    def handle_one(self):
        raw = self.read_body()
        split = urllib.parse.urlsplit(self.path)
        host = self.headers.get("Host") or f"127.0.0.1:{self.server.server_address[1]}"
        self.api = f"http://{host}"
        if split.path.startswith("/_fake/"):
            return self.control(split, raw)
        with LOCK:
            self.problems, self.violations = [], []
            try:
                status, obj, headers = self.api_request(split, raw)
            except Exception as e:  # the fake's own fault: a violation, so that a test sees it
                self.violation(f"the fake failed: {e!r}")
                status, obj, headers = 500, {"message": f"fake: {e!r}"}, []
            self.finish_api(status, obj, headers, raw)

    # -- control --
    def control(self, split, raw):
        try:
            b = json.loads(raw) if raw else {}
            q = dict(urllib.parse.parse_qsl(split.query))
            if split.path == "/_fake/deliver":
                return self.send(200, ctl_deliver(b, self.api))
            with LOCK:
                if split.path == "/_fake/state":
                    return self.send(200, state_dump(self.api))
                if split.path == "/_fake/webhook":
                    return self.send(200, webhook_payload(q, self.api))
                for method, path, fn in CONTROL:
                    m = re.fullmatch(path, split.path)
                    if m and method == self.command:
                        return self.send(200, fn(m.groupdict(), b))
            return self.send(404, {"message": f"control: no {self.command} {split.path}"})
        except Answer as a:
            return self.send(a.status, a.obj, a.headers)
        except (KeyError, ValueError, TypeError, RuntimeError) as e:
            return self.send(400, {"message": f"control: bad request: {e!r}"})

    # -- the API --
    def contract(self, message):
        self.problems.append(message)

    def violation(self, message):
        self.violations.append(message)

    def api_request(self, split, raw):
        """(status, obj, headers) for one API request, checked as documented."""
        routes = [(r, r.path.fullmatch(split.path)) for r in ROUTES]
        routes = [(r, m) for r, m in routes if m]
        match = [(r, m) for r, m in routes if r.method == self.command]
        self.bucket = S.buckets["core"]
        if not match:
            why = (f"{self.command} is not a method of {split.path} (it has "
                   f"{', '.join(sorted({r.method for r, _ in routes}))})" if routes
                   else f"{self.command} {split.path} is not a call this fake knows")
            self.violation(why)
            return 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, []
        self.route, m = match[0]
        self.route_path = split.path
        self.args = m.groupdict()
        self.bucket = S.buckets[self.route.resource]
        for k, v in self.args.items():
            if k in SHAPES and not re.fullmatch(SHAPES[k], v):
                self.contract(f"{k} {v!r} is not well formed")
        if self.headers.get("Authorization", "") != f"Bearer {TOKEN}":
            return 401, {"message": "Bad credentials", "documentation_url": DOCS,
                         "status": "401"}, []
        self.check_headers(split, raw)
        if self.problems:
            return 400, {"message": "contract: " + "; ".join(self.problems),
                         "documentation_url": DOCS + self.route.doc}, []
        limited = self.rate_limits()
        if limited:
            return limited
        if S.faults:
            st = S.faults.pop(0)
            msg = {500: "Server Error", 403: "Resource not accessible by integration"}
            return st, {"message": msg.get(st, "Fault"), "documentation_url": DOCS,
                        "status": str(st)}, []
        if self.args.get("owner") == "acme" and self.args.get("repo") == "limited":
            return 403, {"message": "API rate limit exceeded for user ID 1.",
                         "documentation_url": DOCS + "/overview/rate-limits-for-the-rest-api"}, [
                ("x-ratelimit-limit", "5000"), ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", str(int(time.time()) + 600)),
                ("x-ratelimit-used", "5000"), ("x-ratelimit-resource", "core")]
        try:
            status, obj, headers = self.route.handler(self)
        except Answer as a:
            return a.status, a.obj, a.headers
        if self.problems:   # found by the handler (a reply to a reply ...)
            return 400, {"message": "contract: " + "; ".join(self.problems),
                         "documentation_url": DOCS + self.route.doc}, []
        return status, obj, headers

    def check_headers(self, split, raw):
        h = self.headers
        if h.get("Accept") != "application/vnd.github+json":
            self.contract(f"Accept is {h.get('Accept')!r}, not application/vnd.github+json")
        if h.get("X-GitHub-Api-Version") != API_VERSION:
            self.contract(f"X-GitHub-Api-Version is {h.get('X-GitHub-Api-Version')!r}, not {API_VERSION}")
        if not h.get("User-Agent"):
            self.contract("no User-Agent")
        self.query_list = urllib.parse.parse_qsl(split.query, keep_blank_values=True)
        self.query = {}
        for k, v in self.query_list:
            if k not in self.route.query:
                self.contract(f"unknown query parameter {k}")
            elif k in self.query:
                self.contract(f"query parameter {k} given twice")
            elif not self.route.query[k](v):
                self.contract(f"query parameter {k}={v!r} is not valid")
            self.query[k] = v
        if self.route.body is None:
            if raw:
                self.contract(f"a {self.command} has no body")
            return
        if not h.get("Content-Type", "").startswith("application/json"):
            self.contract(f"Content-Type is {h.get('Content-Type')!r}, not application/json")
        try:
            self.json = json.loads(raw)
        except ValueError:
            self.json = None
        if not isinstance(self.json, dict):
            self.contract("the body is not a JSON object")
            self.json = {}
        for k, (t, required) in self.route.body.items():
            if k not in self.json:
                if required:
                    self.contract(f"{k} is missing")
            elif type(self.json[k]) is not t:
                self.contract(f"{k} is not a {t.__name__}")
        for k in self.json:
            if k not in self.route.body:
                self.contract(f"unknown field {k}")

    def rate_limits(self):
        """The 403 of a primary or secondary rate limit, or None."""
        t = time.time()
        b = self.bucket
        b.roll(t)
        if t < S.secondary_until:
            self.violation(f"ignored Retry-After: sent {S.secondary_until - t:.1f}s too early")
        elif S.secondary_left > 0:
            S.secondary_left -= 1
            S.secondary_until = t + S.secondary_after
        else:
            if b.remaining > 0:
                return None
            if b.refused:
                self.violation(f"ignored the rate limit: sent {b.reset - t:.1f}s before "
                               f"x-ratelimit-reset")
            b.refused = True
            return 403, {"message": "API rate limit exceeded for user ID 1. If you reach out to "
                         "GitHub Support for help, please include the request ID "
                         "0000:FAKE:0001.",
                         "documentation_url": DOCS + "/overview/rate-limits-for-the-rest-api"}, []
        wait = max(1, math.ceil(S.secondary_until - t))
        return 403, {"message": "You have exceeded a secondary rate limit. Please wait a few "
                     "minutes before you try again. If you reach out to GitHub Support for "
                     "help, please include the request ID 0000:FAKE:0002.",
                     "documentation_url": DOCS + "/overview/rate-limits-for-the-rest-api"
                     "#about-secondary-rate-limits"}, [("Retry-After", str(wait))]

    def finish_api(self, status, obj, headers, raw):
        inm = self.headers.get("If-None-Match")
        body = None if obj is None else json.dumps(obj, indent=1).encode()
        if self.command == "GET" and status == 200:
            etag = etag_of(body)
            headers = headers + [("ETag", etag), ("Cache-Control", "private, max-age=60, s-maxage=60"),
                                 ("Vary", "Accept, Authorization, Cookie, X-GitHub-OTP")]
            if inm and etag_matches(inm, etag):
                status, obj = 304, None
        # acme/limited's answers carry their own limit, and count against none.
        counted = status not in (304, 401) and not any(k == "x-ratelimit-remaining" for k, _ in headers)
        if counted and self.bucket.remaining > 0:
            self.bucket.remaining -= 1
        if not any(k == "x-ratelimit-remaining" for k, _ in headers):
            headers = headers + self.bucket.headers()
        headers += [("X-GitHub-Api-Version-Selected", API_VERSION),
                    ("X-GitHub-Media-Type", "github.v3; format=json"),
                    ("X-GitHub-Request-Id", f"FAKE:{len(S.requests) + 1}")]
        seq = len(S.requests) + 1
        S.requests.append({"seq": seq, "time": time.time(), "method": self.command,
                           "path": self.path, "status": status, "if_none_match": inm})
        problems = self.problems + self.violations
        for v in problems:
            S.violations.append({"seq": seq, "method": self.command, "path": self.path,
                                 "message": v})
        lines = [f"{self.command} {self.path}"] + [f"{k}: {v}" for k, v in self.headers.items()]
        if self.command in ("POST", "PATCH", "PUT"):
            lines.append("body: " + raw.decode("utf-8", "replace"))
        if problems:
            lines.append("contract: " + "; ".join(problems))
        log(lines + [f"-> {status}"])
        self.send(status, obj, headers)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = PORT_FILE + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(tmp, PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
