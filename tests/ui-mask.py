#!/usr/bin/env python3
"""ui-mask: makes a dashboard screen dump comparable with a golden file.

Task ids become ID1, ID2, ... in order of appearance (the same id the same
name, padded to the id's width so columns stay put), commit ids become
SHA, clock times and dates become placeholders, the data directory
(UI_MASK_DATA) <data directory>.  Reads stdin, writes
stdout."""
import os
import re
import sys

whole = sys.stdin.read()
# The role spans after "--" are positions, not times: kept as they are.
text, sep, roles = whole.partition("\n--\n")
# First (before ids and commit ids are looked for in it), the data directory (UI_MASK_DATA) as the API shows it to a client, which
# is told nothing of the server's file system: the same golden for the
# local and the remote dashboard.
data = os.environ.get("UI_MASK_DATA")
if data:
    text = re.sub(re.escape(data.rstrip("/")) + r"(?![\w.-])", "<data directory>", text)
ids = {}


def task_id(m):
    s = m.group(0)
    if s not in ids:
        ids[s] = "ID%d" % (len(ids) + 1)
    return ids[s].ljust(len(s))


# Ids: 10 characters of paddock's base32 alphabet with at least one digit
# and one letter, standing alone.
text = re.sub(r"(?<![0-9a-z])(?=[0-9a-hjkmnp-tv-z]{10}(?![0-9a-z]))(?=[^\s]*[0-9])(?=[^\s]*[a-z])[0-9a-hjkmnp-tv-z]{10}",
              task_id, text)
text = re.sub(r"\b[0-9a-f]{12}\.\.[0-9a-f]{12}\b", "SHA12..SHA12" + " " * 14, text)
# Commit ids, whole or cut at the screen's edge (12 hex digits or more).
text = re.sub(r"\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b",
              lambda m: ("SHA".ljust(len(m.group(0))) if len(m.group(0)) >= 12 else m.group(0)),
              text)
text = re.sub(r"in \d+\.\d+s", "in N.NNNs", text)
text = re.sub(r"\b\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?\b", lambda m: "DATE".ljust(len(m.group(0))), text)
text = re.sub(r"(?<![\d:])\d{1,2}:\d\d(:\d\d)?(?![\d:])", lambda m: "T".ljust(len(m.group(0))), text)
# The task list's short durations ("3m ago", "(11m left)", "queued 2m"),
# whole, padded to the original's length: what follows stays put.
text = re.sub(r"\b\d+[smhd] ago\b", lambda m: "N ago".ljust(len(m.group(0))), text)
text = re.sub(r"\(\d+[smhd] left\)", lambda m: "(N left)".ljust(len(m.group(0))), text)
text = re.sub(r"\bqueued \d+[smhd]\b", lambda m: "queued N".ljust(len(m.group(0))), text)
# The same in German ("vor 3m", "(noch 11m)", "wartet 2m"; a day is "T").
text = re.sub(r"\bvor \d+[smhT]\b", lambda m: "vor N".ljust(len(m.group(0))), text)
text = re.sub(r"\(noch \d+[smhT]\)", lambda m: "(noch N)".ljust(len(m.group(0))), text)
text = re.sub(r"\bwartet \d+[smhT]\b", lambda m: "wartet N".ljust(len(m.group(0))), text)
# Fixed width (%6.2f): the masked marker keeps the line's length.
text = re.sub(r"\[paddock +\d+\.\d\ds\]", lambda m: "[paddock " + "N.NNs]".rjust(len(m.group(0)) - 9), text)
text = re.sub(r"/tmp/paddock-test\.[A-Za-z0-9]+", "$T", text)
# Decisions name who made them; the goldens were made as root.
user = os.environ.get("UI_MASK_USER")
if user and user != "root":
    text = re.sub(r"\bby %s\b" % re.escape(user), "by root", text)
sys.stdout.write(text + sep + roles)
