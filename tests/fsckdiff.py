#!/usr/bin/env python3
# fsckdiff.py: the cases of test-fsckdiff, and git's verdict on each.
#
# Usage: fsckdiff.py REPO BASE XCHECK OUTDIR SEED
#
# REPO is a repository holding BASE (a commit whose tree has a.txt, and
# evil-mods.txt and long-attrs.txt, blobs a .gitmodules or .gitattributes
# check refuses); XCHECK a bare repository whose objects/info/alternates
# names the mirror's objects.  Writes OUTDIR/N.bundle for each case (a v2
# bundle: prerequisite BASE, one ref refs/heads/paddock/x naming its tip,
# a pack written here, byte by byte) and prints one line per case:
# "N<TAB>git's verdict (0 accepts, 1 refuses)<TAB>tags<TAB>case name<TAB>
# git's message", tags naming what the case holds that paddock refuses on
# purpose ("-": nothing).  git's verdict is `git index-pack --stdin
# --fix-thin --strict` in XCHECK-0 or XCHECK-1 (two at a time; each
# borrows XCHECK's alternates and is emptied after each case).  The
# cases: hand-picked tables (tree entry names in the spellings
# filesystems take for .git, .gitmodules and .gitattributes; modes; entry
# order and duplicates; one id as two types; commit headers and
# identities; .gitmodules and .gitattributes texts; deep and wide trees;
# thin packs of deltas; a bad commit under a good tip; broken packs), then
# random mutations of valid trees, commits and .gitmodules from SEED.
# Every case's commits descend from BASE and its pack holds only what its
# tip reaches, so that paddock's own rules (a tip that descends from the
# base, nothing unreachable) decide none of them.
import hashlib
import os
import random
import subprocess
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor

REPO, BASE, XCHECK, OUTDIR, SEED = sys.argv[1:6]
rng = random.Random(int(SEED))
REF = b'refs/heads/paddock/x'


def git(*args, inp=None):
    return subprocess.run(('git', '-C', REPO) + args, input=inp, check=True,
                          stdout=subprocess.PIPE).stdout


def rev(spec):
    return bytes.fromhex(git('rev-parse', spec).decode().strip())


BASE_ID = bytes.fromhex(BASE)
BASE_TREE = rev(BASE + '^{tree}')
BLOB = rev(BASE + ':a.txt')                  # a blob the mirror has
EVIL_MODS = rev(BASE + ':evil-mods.txt')     # .gitmodules text git refuses
LONG_ATTRS = rev(BASE + ':long-attrs.txt')   # .gitattributes text git refuses
BASE_ENTRIES = git('cat-file', 'tree', BASE + '^{tree}')
NULL = bytes(20)
TYPES = {'commit': 1, 'tree': 2, 'blob': 3, 'tag': 4}


def oid(kind, data):
    return hashlib.sha1(b'%s %d\0' % (kind.encode(), len(data)) + data).digest()


class Case:
    """The new objects of one bundle, in the order they are packed."""

    def __init__(self):
        self.objs = []

    def add(self, kind, data):
        i = oid(kind, data)
        if all(o[2] != i for o in self.objs):
            self.objs.append((kind, data, i))
        return i

    def blob(self, data):
        return self.add('blob', data)

    def tree(self, entries):
        """entries: (mode bytes, name bytes, id), written as given."""
        return self.add('tree', b''.join(m + b' ' + n + b'\0' + i for m, n, i in entries))

    def commit(self, tree, extra=b'', msg=b'fsckdiff\n'):
        return self.add('commit', commit_text(tree, extra, msg))


IDENT = b'A U Thor <a@example.invalid> 1700000000 +0000'


def commit_text(tree, extra=b'', msg=b'fsckdiff\n', author=IDENT, committer=IDENT):
    return (b'tree ' + tree.hex().encode() + b'\nparent ' + BASE.encode() + b'\nauthor ' +
            author + b'\ncommitter ' + committer + b'\n' + extra + b'\n' + msg)


def with_base(c, name, mode, i):
    """A root tree: the base's entries and one more (sorted as git does)."""
    ents = parse_tree(BASE_ENTRIES) + [(mode, name, i)]
    ents.sort(key=lambda e: e[1] + (b'/' if e[0] in (b'40000', b'040000') else b''))
    return c.tree(ents)


def parse_tree(data):
    out, p = [], 0
    while p < len(data):
        sp = data.index(b' ', p)
        nul = data.index(b'\0', sp)
        out.append((data[p:sp], data[sp + 1:nul], data[nul + 1:nul + 21]))
        p = nul + 21
    return out


def sub_commit(c, entries):
    """A commit whose tree is the base's and sub/, sub the raw entries."""
    return c.commit(with_base(c, b'sub', b'40000', c.tree(entries)))


def varint(n):
    b = bytearray([n & 0x7f])
    n >>= 7
    while n:
        b[-1] |= 0x80
        b.append(n & 0x7f)
        n >>= 7
    return bytes(b)


def pack_bytes(objs, deltas=None):
    """A pack of objs; deltas maps an object's kind to the id of an object
    of that kind (the mirror's: a thin pack) and its size, to write each
    such object as a REF_DELTA of it, all inserts."""
    p = bytearray(b'PACK' + (2).to_bytes(4, 'big') + len(objs).to_bytes(4, 'big'))
    for kind, data, _ in objs:
        base = (deltas or {}).get(kind)
        if base:
            body = varint(base[1]) + varint(len(data))
            for k in range(0, len(data), 127):
                body += bytes([len(data[k:k + 127])]) + data[k:k + 127]
            t, data, extra = 7, body, base[0]
        else:
            t, extra = TYPES[kind], b''
        n = len(data)
        h = bytearray([(t << 4) | (n & 15)])
        n >>= 4
        while n:
            h[-1] |= 0x80
            h.append(n & 0x7f)
            n >>= 7
        p += h + extra + zlib.compress(data)
    return bytes(p + hashlib.sha1(p).digest())


cases = []  # (name, tip, pack)
case_objs = []  # each case's objects


def emit(name, c, tip, pack=None):
    cases.append((name, tip, pack if pack is not None else pack_bytes(c.objs)))
    case_objs.append(c.objs)


def tree_case(name, entries, root=False):
    c = Case()
    tip = c.commit(c.tree(entries)) if root else sub_commit(c, entries)
    emit(name, c, tip)


# ---- tree entry names ----

HFS_IGNORED = ([0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e] +
               list(range(0x206a, 0x2070)) + [0xfeff])


def u(cp):
    return chr(cp).encode()


DOTGIT = [b'.git', b'.GIT', b'.Git', b'.gIT', b'git~1', b'GIT~1', b'Git~1', b'git~2', b'git~11',
          b'.git.', b'.git..', b'.git ', b'.git  ', b'.git. .', b'.git .', b'.git\\', b'.git\\x',
          b'x\\.git', b'x\\.GIT.', b'x\\git~1', b'a\\b\\.git', b'.git::$INDEX_ALLOCATION',
          b'.git:$DATA', b'.git:x', b'git~1:$DATA', b'git~1.', b'git~1 ', b'.gitx', b'.gi', b'git',
          b'..git', b'.git~1', b'.git/', b'.git:', b'x.git', b' .git', b'.git\t', b'GIT~1~1',
          b'.g\xc0\xaeit', b'.git\xff', b'.git\xe2\x80', b'.git\xed\xa0\x80', b'\xef\xbb\xbf',
          b'.g\xe2\x80\x8bit', b'.g\xe2\x80\xa8it', b'.gi\xef\xbf\xbet', b'.GI' + u(0x200c) + b'T',
          b'.git' + u(0x200c) + b'.', b'.git' + u(0xfeff) + b' ']
for cp in HFS_IGNORED:
    DOTGIT += [b'.g' + u(cp) + b'it', b'.git' + u(cp)]
DOTGIT += [u(0x200c) + b'.git', b'.' + u(0xfeff) + b'GiT', b'.' + u(0x206f) + b'GIT']

GITMODULES = [b'.gitmodules', b'.GITMODULES', b'.GitModules', b'GITMOD~1', b'gitmod~1',
              b'gitmod~4', b'gitmod~5', b'gitmod~9', b'gi7eba~1', b'GI7EBA~1', b'gi7eba~9',
              b'gi7eba~10', b'gi7eb~1', b'gi7eba~0', b'gi7ebA~1', b'.gitmodules ', b'.gitmodules.',
              b'.gitmodules. .', b'.gitmodules:$DATA', b'.gitmodules::$INDEX_ALLOCATION',
              b'.gitmodule', b'.gitmodulesx', b'gitmodules', b'x\\.gitmodules', b'x\\GITMOD~1',
              b'x\\gi7eba~1', b'GITMOD~1 ', b'GITMOD~1:x', b'gitmo~12', b'gitmo~123', b'gi~1',
              b'.gitmodules/', b'.gitmodules\xff', b'.g' + u(0x200c) + b'itmodules',
              b'.gitmodules' + u(0x200d), b'.GIT' + u(0xfeff) + b'MODULES',
              b'.gitmodules' + u(0x200b)]
GITATTRS = [b'.gitattributes', b'.GITATTRIBUTES', b'GITATT~1', b'gitatt~2', b'gi7d29~1',
            b'GI7D29~3', b'.gitattributes.', b'.gitattributes:$DATA',
            b'.g' + u(0x200e) + b'itattributes', b'x\\.gitattributes', b'.gitattribute']

for n in DOTGIT:
    tree_case('name %r as a file' % n, [(b'100644', n, BLOB)])
for n in DOTGIT[:16]:
    tree_case('name %r as a folder' % n, [(b'40000', n, BASE_TREE)])
for n in DOTGIT[:8]:
    tree_case('name %r as a symlink' % n, [(b'120000', n, BLOB)])
    tree_case('name %r as a gitlink' % n, [(b'160000', n, b'\x12' * 20)])
    tree_case('name %r at the root' % n, [(b'100644', b'a.txt', BLOB), (b'40000', n, BASE_TREE)],
              root=True)

MODS_OK = b'[submodule "x"]\n\tpath = x\n\turl = https://example.invalid/x.git\n'
MODS_BAD = b'[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch${IFS}pwned\n'
for k, n in enumerate(GITMODULES + GITATTRS):
    tree_case('name %r as a symlink' % n, [(b'120000', n, BLOB)])
    if n in GITMODULES:
        texts = [('a hostile .gitmodules', MODS_BAD), ('the mirror\'s hostile .gitmodules',
                                                       EVIL_MODS)]
    else:
        texts = [('the mirror\'s long .gitattributes', LONG_ATTRS)]
    for what, text in texts + ([('a fine .gitmodules', MODS_OK)] if k % 4 == 0 else []):
        c = Case()
        i = text if len(text) == 20 else c.blob(text)
        emit('name %r as a file, %s' % (n, what), c, sub_commit(c, [(b'100644', n, i)]))
    if k % 4 == 0:
        tree_case('name %r as a folder' % n, [(b'40000', n, BASE_TREE)])
    if k % 2 == 0 or n in GITATTRS:
        tree_case('name %r as a gitlink' % n, [(b'160000', n, b'\x34' * 20)])
    if k % 2 == 0:
        tree_case('name %r as a gitlink to a blob' % n, [(b'160000', n, EVIL_MODS)])

for n in [b'.gitignore', b'.mailmap', b'.GITIGNORE', b'GITIGN~1']:
    tree_case('name %r as a symlink' % n, [(b'120000', n, BLOB)])

for n, why in [(b'..', 'dotdot'), (b'.', 'dot'), (b'', 'empty'), (b'a/b', 'slash'),
               (b'/a', 'leading slash'), (b'a/', 'trailing slash'), (b'...', 'three dots'),
               (b'.. ', 'dotdot space'), (b'\x01', 'control'), (b'a\nb', 'newline'),
               (b'x' * 4000, 'long name')]:
    tree_case('name %s %r' % (why, n[:20]), [(b'100644', n, BLOB)])
    tree_case('folder %s %r' % (why, n[:20]), [(b'40000', n, BASE_TREE)])

# ---- modes ----

MODES = [b'100644', b'100755', b'100664', b'100666', b'100600', b'100000', b'120000', b'40000',
         b'040000', b'160000', b'0160000', b'0100644', b'00100644', b'0120000', b'644', b'0',
         b'1', b'170000', b'140000', b'20000', b'60000', b'177777', b'7777777', b'1000644',
         b'40755', b'40644', b'', b'100644 ', b'1x0644', b'+100644', b'100648', b'300644',
         b'10100644', b'240000', b'220000', b'200644', b'0000000100644']
TARGETS = [('a blob', BLOB), ('a tree', BASE_TREE), ('a commit', BASE_ID),
           ('nothing', b'\x56' * 20), ('the null id', NULL)]
for k, m in enumerate(MODES):
    for what, i in TARGETS[:5 if k < 10 else 4]:
        tree_case('mode %r to %s' % (m, what), [(m, b'f', i)])

# ---- order and duplicates ----

ORDER_POOL = [(b'100644', b'a', BLOB), (b'40000', b'a', BASE_TREE), (b'100644', b'a.b', BLOB),
              (b'40000', b'a.b', BASE_TREE), (b'100644', b'a-', BLOB), (b'100644', b'a0', BLOB),
              (b'40000', b'a0', BASE_TREE), (b'100644', b'a\x01', BLOB), (b'100644', b'b', BLOB),
              (b'120000', b'a', BLOB), (b'160000', b'a', b'\x78' * 20),
              (b'100644', b'a/', BLOB), (b'40000', b'a.', BASE_TREE), (b'100644', b'a.', BLOB),
              (b'100644', b'ab', BLOB), (b'40000', b'A', BASE_TREE), (b'100644', b'\xc3\xa9', BLOB)]
order = set()
for k in range(2, 5):
    for _ in range(20):
        order.add(tuple(rng.choice(range(len(ORDER_POOL))) for _ in range(k)))
for seq in sorted(order):
    tree_case('order %s' % ', '.join('%s %s' % (ORDER_POOL[i][0].decode(), ORDER_POOL[i][1])
                                      for i in seq), [ORDER_POOL[i] for i in seq])

# One id taken for two types: git's object table has one type to an id.
c = Case()
nb, nt = c.blob(b'new\n'), c.tree([(b'100644', b'f', BLOB)])
for what, ents in [
        ('a new blob as a file and a folder', [(b'100644', b'a', nb), (b'40000', b'b', nb)]),
        ('a new blob as a folder and a file', [(b'40000', b'a', nb), (b'100644', b'b', nb)]),
        ('a new tree as a folder and a file', [(b'40000', b'a', nt), (b'100644', b'b', nt)]),
        ('a new tree as a file and a folder', [(b'100644', b'a', nt), (b'40000', b'b', nt)]),
        ('a new tree as a symlink and a folder', [(b'120000', b'a', nt), (b'40000', b'b', nt)]),
        ('the mirror\'s blob as a file and a folder', [(b'100644', b'a', BLOB),
                                                      (b'40000', b'b', BLOB)]),
        ('the mirror\'s tree as a folder and a file', [(b'40000', b'a', BASE_TREE),
                                                      (b'100644', b'b', BASE_TREE)]),
        ('a new tree as a gitlink and a folder', [(b'160000', b'a', nt), (b'40000', b'b', nt)]),
        ('a new blob as a gitlink and a file', [(b'160000', b'a', nb), (b'100644', b'b', nb)]),
        ('a new blob as a file and in mode 644', [(b'100644', b'a', nb), (b'644', b'b', nb)])]:
    c = Case()
    for m, n, i in ents:
        if i == nb:
            c.blob(b'new\n')
        elif i == nt:
            c.tree([(b'100644', b'f', BLOB)])
    emit('one id, two types: ' + what, c, sub_commit(c, ents))
c = Case()
nt = c.tree([(b'100644', b'f', BLOB)])
emit('one id, two types: a tree in a folder and the commit\'s tree as a file', c,
     c.commit(c.tree(parse_tree(BASE_ENTRIES) + [(b'100644', b'z', nt), (b'40000', b'zz', nt)])))

# ---- commits ----


def commit_case(name, text, extra_objs=()):
    c = Case()
    for kind, data in extra_objs:
        c.add(kind, data)
    emit(name, c, c.add('commit', text))


TREE_HEX = BASE_TREE.hex().encode()
P = b'parent ' + BASE.encode() + b'\n'
T = b'tree ' + TREE_HEX + b'\n'
A = b'author ' + IDENT + b'\n'
C = b'committer ' + IDENT + b'\n'
HEADERS = [
    ('a plain commit', T + P + A + C + b'\nm\n'),
    ('no tree', P + A + C + b'\nm\n'),
    ('tree twice', T + T + P + A + C + b'\nm\n'),
    ('tree after the parent', P + T + A + C + b'\nm\n'),
    ('tree in capitals', b'tree ' + TREE_HEX.upper() + b'\n' + P + A + C + b'\nm\n'),
    ('tree of 39 digits', b'tree ' + TREE_HEX[:39] + b'\n' + P + A + C + b'\nm\n'),
    ('tree of 41 digits', b'tree ' + TREE_HEX + b'0\n' + P + A + C + b'\nm\n'),
    ('tree with two spaces', b'tree  ' + TREE_HEX + b'\n' + P + A + C + b'\nm\n'),
    ('tree with a trailing space', b'tree ' + TREE_HEX + b' \n' + P + A + C + b'\nm\n'),
    ('tree naming a blob', b'tree ' + BLOB.hex().encode() + b'\n' + P + A + C + b'\nm\n'),
    ('tree naming a commit', b'tree ' + BASE.encode() + b'\n' + P + A + C + b'\nm\n'),
    ('tree naming nothing', b'tree ' + b'ab' * 20 + b'\n' + P + A + C + b'\nm\n'),
    ('parent twice', T + P + P + A + C + b'\nm\n'),
    ('parent in capitals', T + b'parent ' + BASE.upper().encode() + b'\n' + A + C + b'\nm\n'),
    ('parent of 39 digits', T + b'parent ' + BASE[:39].encode() + b'\n' + A + C + b'\nm\n'),
    ('parent with a space after', T + b'parent ' + BASE.encode() + b' \n' + A + C + b'\nm\n'),
    ('parent after the author', T + A + P + C + b'\nm\n'),
    ('a second parent naming nothing', T + P + b'parent ' + b'cd' * 20 + b'\n' + A + C + b'\nm\n'),
    ('a second parent naming a tree', T + P + b'parent ' + TREE_HEX + b'\n' + A + C + b'\nm\n'),
    ('a parent line with no id', T + P + b'parent \n' + A + C + b'\nm\n'),
    ('no author', T + P + C + b'\nm\n'),
    ('two authors', T + P + A + A + C + b'\nm\n'),
    ('no committer', T + P + A + b'\nm\n'),
    ('two committers', T + P + A + C + C + b'\nm\n'),
    ('committer before the author', T + P + C + A + b'\nm\n'),
    ('an encoding', T + P + A + C + b'encoding ISO-8859-1\n\nm\n'),
    ('an empty encoding', T + P + A + C + b'encoding\n\nm\n'),
    ('an encoding before the author', T + P + b'encoding x\n' + A + C + b'\nm\n'),
    ('a gpgsig', T + P + A + C + b'gpgsig -----BEGIN PGP SIGNATURE-----\n \n x\n '
     b'-----END PGP SIGNATURE-----\n\nm\n'),
    ('a mergetag', T + P + A + C + b'mergetag object ' + BASE.encode() + b'\n type commit\n'
     b' tag v1\n\nm\n'),
    ('an unknown header', T + P + A + C + b'x-foo bar\n\nm\n'),
    ('a header line with NUL', T + P + A + C + b'x-foo b\0r\n\nm\n'),
    ('a NUL in the message', T + P + A + C + b'\nm\0x\n'),
    ('a NUL after the message', T + P + A + C + b'\nm\n\0'),
    ('a NUL in the author', T + P + b'author A U\0Thor <a@example.invalid> 1 +0000\n' + C +
     b'\nm\n'),
    ('no message', T + P + A + C),
    ('no blank line, a message', T + P + A + C + b'm\n'),
    ('no newline at the end', T + P + A + C[:-1]),
    ('an empty message', T + P + A + C + b'\n'),
    ('CRLF lines', (T + P + A + C).replace(b'\n', b'\r\n') + b'\r\nm\r\n'),
    ('a CR after the committer', T + P + A + C[:-1] + b'\r\n\nm\n'),
    ('a header before the tree', b'x-foo bar\n' + T + P + A + C + b'\nm\n'),
    ('a blank line before the tree', b'\n' + T + P + A + C + b'\nm\n'),
    ('empty', b''),
    ('only a tree', T),
    ('a tree line with no newline', T[:-1]),
]
for name, text in HEADERS:
    commit_case('commit: ' + name, text)

IDENTS = [b'A U Thor <a@example.invalid> 1700000000 +0000', b'A <a@x> 0 +0000',
          b'A <a@x> 1 -1200', b'A <a@x> 1 +9999', b'<a@x> 1 +0000', b' <a@x> 1 +0000',
          b'A<a@x> 1 +0000', b'A  <a@x> 1 +0000', b'A a@x> 1 +0000', b'A <a@x 1 +0000',
          b'A <a@x>1 +0000', b'A <a@x>  1 +0000', b'A <a@x> 01 +0000', b'A <a@x> 00 +0000',
          b'A <a@x> 18446744073709551615 +0000', b'A <a@x> 18446744073709551616 +0000',
          b'A <a@x> 99999999999999999999999 +0000', b'A <a@x> 9223372036854775807 +0000',
          b'A <a@x> 9223372036854775808 +0000', b'A <a@x> 253402300799 +0000',
          b'A <a@x> 253402300800 +0000', b'A <a@x> -1 +0000', b'A <a@x> +1 +0000',
          b'A <a@x> 1 0000', b'A <a@x> 1 +000', b'A <a@x> 1 +00000', b'A <a@x> 1 +0a00',
          b'A <a@x> 1 -0000', b'A <a@x> 1 +0000 x', b'A <a@x> 1 +0000 ', b'A <a@x> 1  +0000',
          b'A <a@x> 1', b'A <a@x> 1 ', b'A <a@x>', b'A <a@x> ', b'A <a@x> +0000',
          b'A <a<b@x> 1 +0000', b'A <a@x>> 1 +0000', b'A >a@x< 1 +0000', b'A > <a@x> 1 +0000',
          b'', b'A', b'A <> 1 +0000', b'<> 1 +0000', b'A\t<a@x> 1 +0000', b'A <a@x>\t1 +0000',
          b'A <a@x> 1\t+0000', b'A <a@x> 0x10 +0000', b'A <a@x> 1e3 +0000', b'A <a@x> 1 +0000\r',
          b'A <a\x00@x> 1 +0000', b'A <a@x> 1 Z', b'A <a@x> 1 +00:00', b'A <a@x> 1 UTC',
          b'\xff <a@x> 1 +0000', b'A <a@x> 1 +0000 +0000', b'A <a@x> 1 2 +0000',
          b'A <a@x> \xd9\xa1 +0000', b'A <a@x> 1 +\xd9\xa1000']
for i, ident in enumerate(IDENTS):
    commit_case('commit: author %r' % ident,
                commit_text(BASE_TREE, author=ident))
    if i % 3 == 0:
        commit_case('commit: committer %r' % ident,
                    commit_text(BASE_TREE, committer=ident))

# ---- .gitmodules and .gitattributes texts ----

GM = [
    b'[submodule "../x"]\n\tpath = x\n\turl = ./x\n', b'[submodule "x/../y"]\n\turl = ./x\n',
    b'[submodule "x/.."]\n\turl = ./x\n', b'[submodule ".."]\n\turl = ./x\n',
    b'[submodule "..x"]\n\turl = ./x\n', b'[submodule "x.."]\n\turl = ./x\n',
    b'[submodule "x\\\\..\\\\y"]\n\turl = ./x\n', b'[submodule "..\\\\x"]\n\turl = ./x\n',
    b'[submodule "."]\n\turl = ./x\n', b'[submodule ""]\n\turl = ./x\n',
    b'[submodule "/../x"]\n\turl = ./x\n', b'[submodule "x/../"]\n\turl = ./x\n',
    b'[submodule "x"]\n\turl = -x\n', b'[submodule "x"]\n\turl =  -x\n',
    b'[submodule "x"]\n\turl = "-x"\n', b'[submodule "x"]\n\turl = " -x"\n',
    b'[submodule "x"]\n\turl = ./-x\n', b'[submodule "x"]\n\turl = ../-x\n',
    b'[submodule "x"]\n\turl = ../../x\n', b'[submodule "x"]\n\turl = ../../:x\n',
    b'[submodule "x"]\n\turl = .././../:x\n', b'[submodule "x"]\n\turl = ../..//x\n',
    b'[submodule "x"]\n\turl = ./../../x\n', b'[submodule "x"]\n\turl = ../\n',
    b'[submodule "x"]\n\turl = ..\\\\..\\\\:x\n', b'[submodule "x"]\n\turl = ./%0a\n',
    b'[submodule "x"]\n\turl = ../x%0Ay\n', b'[submodule "x"]\n\turl = git://a/%0a\n',
    b'[submodule "x"]\n\turl = git://a/%0d\n', b'[submodule "x"]\n\turl = "./x\\ny"\n',
    b'[submodule "x"]\n\turl = http://a%0a/\n', b'[submodule "x"]\n\turl = https://u%0a@host/x\n',
    b'[submodule "x"]\n\turl = https://u:p%0a@host/x\n',
    b'[submodule "x"]\n\turl = https://u:p@host/x%0a\n',
    b'[submodule "x"]\n\turl = https://host:%0a/x\n', b'[submodule "x"]\n\turl = https::\n',
    b'[submodule "x"]\n\turl = http::https://%0a\n', b'[submodule "x"]\n\turl = http::\n',
    b'[submodule "x"]\n\turl = ftp:///x\n', b'[submodule "x"]\n\turl = ftps://h/\n',
    b'[submodule "x"]\n\turl = https://@/x\n', b'[submodule "x"]\n\turl = https://?x\n',
    b'[submodule "x"]\n\turl = https://#x\n', b'[submodule "x"]\n\turl = HTTPS:///x\n',
    b'[submodule "x"]\n\turl = file:///x\n', b'[submodule "x"]\n\turl = ssh://-oProxyCommand=x/\n',
    b'[submodule "x"]\n\turl = git@host:x\n', b'[submodule "x"]\n\turl = %0a\n',
    b'[submodule "x"]\n\turl = http%0a://h/\n', b'[submodule "x"]\n\turl = https://h/%0\n',
    b'[submodule "x"]\n\turl\n', b'[submodule "x"]\n\turl =\n',
    b'[submodule "x"]\n\tpath = -x\n', b'[submodule "x"]\n\tpath =  -x\n',
    b'[submodule "x"]\n\tpath = "-x"\n', b'[submodule "x"]\n\tpath = x-\n',
    b'[submodule "x"]\n\tpath\n', b'[submodule "x"]\n\tupdate = !cmd\n',
    b'[submodule "x"]\n\tupdate = rebase\n', b'[submodule "x"]\n\tupdate =  !cmd\n',
    b'[submodule "x"]\n\tupdate = "!cmd"\n', b'[submodule "x"]\n\tupdate = \\!cmd\n',
    b'[submodule "x"]\n\tbranch = -x\n', b'[submodule "x"]\n\tURL = -x\n',
    b'[Submodule "x"]\n\turl = -x\n', b'[SUBMODULE "x"]\n\tpath = -x\n',
    b'[submodule]\n\turl = -x\n', b'[submodule.x]\n\turl = -x\n', b'[submodule.X]\n\tpath = -x\n',
    b'[submodule "a\\"b"]\n\turl = -x\n', b'[submodule "x"]\n\turl = ./x\n\turl = -y\n',
    b'[submodule "x"]\n\turl = ./x \\\n-y\n', b'[submodule "x"]\n\turl = \\\n-y\n',
    b'[submodule "x"]\r\n\turl = -x\r\n', b'\xef\xbb\xbf[submodule "x"]\n\turl = -x\n',
    b'# c\n; c\n[submodule "x"] # c\n\turl = -x ; c\n', b'[submodule "x"]\n\turl = ./x # -y\n',
    b'[submodule "x"]\n\tnot valid\n\turl = -x\n', b'[submodule "x"\n\turl = -x\n',
    b'x = 1\n[submodule "x"]\n\turl = -x\n', b'[submodule "x"]\n\turl = "unclosed\n\turl = -x\n',
    b'[submodule "x"]\n\turl = ./x\\q\n\tpath = -x\n', b'[submodule "x"]\n\t1url = -x\n',
    b'[submodule "x"]\n\turl = -x\n[', b'[submodule "x"]\n\turl = -x', b'[submodule "x"]\0\n',
    b'[submodule "x"]\n\turl = a\0b\n\tpath = -x\n', b'[submodule "x"]path = -x\n',
    b'[submodule "x"] path = -x\n', b'[submodule  "x"]\n\tpath = -x\n',
    b'[submodule\t"x"]\n\tpath = -x\n', b'[ submodule "x"]\n\tpath = -x\n',
    b'[submodule "x"] ]\n\tpath = -x\n', b'[sub.module "x"]\n\tpath = -x\n',
    b'[submodule "x" "y"]\n\tpath = -x\n', b'[submodule "x\\\n"]\n\tpath = -x\n',
    b'[submodule "x"]\n\tpath=-x\n', b'[submodule "x"]\n\tpath\t=\t-x\n',
    b'[submodule "x"]\n\tpa-th = -x\n', b'[submodule "x"]\n\tpath.x = -x\n',
    b'[submodule "x"]\n\tpath = \\t-x\n', b'[submodule "x"]\n\tpath = "" -x\n',
    b'[include]\n\tpath = -x\n', b'[submodule "x"]\n\tpath = -x\n' * 3, b'', b'\n\n',
    MODS_OK, b'[core]\n\tbare = true\n',
]
for i, text in enumerate(GM):
    c = Case()
    m = c.blob(text)
    emit('.gitmodules %r' % text[:70], c, sub_commit(c, [(b'100644', b'.gitmodules', m)]))

GA = [b'*.c text\n', b'x' * 2047 + b'\n', b'x' * 2048 + b'\n', b'x' * 2049, b'x' * 2048,
      b'a\n' + b'x' * 3000 + b'\n', b'a\0' + b'x' * 3000 + b'\n', b'x' * 2047 + b'\r\n',
      b'\n' * 5000]
for text in GA:
    c = Case()
    m = c.blob(text)
    emit('.gitattributes of %d bytes %r' % (len(text), text[:20]), c,
         sub_commit(c, [(b'100644', b'.gitattributes', m)]))

# ---- deep and wide ----

for depth, name in [(50, b'd'), (200, b'd'), (30, b'.git'), (30, b'.gitmodules')]:
    c = Case()
    if name == b'.gitmodules':
        t = c.tree([(b'100644', b'.gitmodules', c.blob(MODS_BAD))])
        name = b'd'
    elif name == b'.git':
        t = c.tree([(b'40000', b'.git', BASE_TREE)])
        name = b'd'
    else:
        t = BASE_TREE
    for _ in range(depth):
        t = c.tree([(b'40000', name, t)])
    emit('a chain of %d folders %r' % (depth, name), c,
         c.commit(with_base(c, b'deep', b'40000', t)))
for n, bad in [(3000, None), (3000, b'.git'), (3000, b'unsorted'), (3000, b'dup')]:
    names = sorted(b'f%05d' % k for k in range(n))
    if bad == b'unsorted':
        names[1000], names[1001] = names[1001], names[1000]
    elif bad == b'dup':
        names[2000] = names[1999]
    ents = [(b'100644', nm, BLOB) for nm in names]
    if bad == b'.git':
        ents.insert(0, (b'100644', b'.git', BLOB))
    tree_case('a tree of %d entries (%s)' % (n, bad), ents)

# ---- broken packs ----

c = Case()
good = sub_commit(c, [(b'100644', b'f', c.blob(b'new\n'))])
p = pack_bytes(c.objs)
emit('a well-formed pack', c, good, p)
emit('a truncated pack', c, good, p[:-30])
emit('a pack missing its trailer', c, good, p[:-20])
bad = bytearray(p)
bad[-21] ^= 1
emit('a pack with a damaged trailer', c, good, bytes(bad))
for k in range(12):
    q = bytearray(p[:-20])
    pos = rng.randrange(12, len(q))
    q[pos] ^= 1 << rng.randrange(8)
    emit('a pack with bit %d flipped' % pos, c, good, bytes(q + hashlib.sha1(q).digest()))
q = bytearray(p[:-20])
q[11] += 1
emit('a pack that counts one object more', c, good, bytes(q + hashlib.sha1(q).digest()))

# ---- thin packs: new trees and blobs as deltas of the mirror's ----

THIN = {'tree': (BASE_TREE, len(BASE_ENTRIES)),
        'blob': (EVIL_MODS, len(git('cat-file', 'blob', EVIL_MODS.hex())))}
for n in [b'.git', b'.GIT', b'git~1', b'.git.', b'.g' + u(0x200c) + b'it', b'x\\.git', b'.gitx',
          b'gitmod~5', b'a']:
    c = Case()
    tip = sub_commit(c, [(b'100644', n, BLOB)])
    emit('thin: name %r in a tree made of a delta' % n, c, tip, pack_bytes(c.objs, THIN))
for text in [MODS_BAD, MODS_OK, GM[0], GM[19], b'[submodule "x"]\n\tpath = -x\n']:
    c = Case()
    m = c.blob(text)
    tip = sub_commit(c, [(b'100644', b'.gitmodules', m)])
    emit('thin: .gitmodules %r made of a delta' % text[:40], c, tip, pack_bytes(c.objs, THIN))

# ---- history: a bad commit under a good tip, and a pack with an object twice ----

for name, text in HEADERS[1:12] + [('author %r' % IDENTS[k], commit_text(BASE_TREE,
                                                                          author=IDENTS[k]))
                                    for k in (4, 8, 14, 16, 23, 36)]:
    if b'\nparent ' + BASE.encode() + b'\n' not in text:
        continue
    c = Case()
    inner = c.add('commit', text)
    emit('history: under a good tip, a commit with ' + name, c,
         c.add('commit', b'tree ' + TREE_HEX + b'\nparent ' + inner.hex().encode() + b'\nauthor ' +
               IDENT + b'\ncommitter ' + IDENT + b'\n\ntip\n'))
c = Case()
tip = sub_commit(c, [(b'100644', b'f', c.blob(b'twice\n'))])
emit('a pack with a blob twice', c, tip, pack_bytes(c.objs + [c.objs[0]]))
c = Case()
tip = sub_commit(c, [(b'100644', b'.git', c.blob(b'twice\n'))])
emit('a pack with a blob twice, and a .git', c, tip, pack_bytes(c.objs + [c.objs[0]]))

# ---- mutations ----


def mutate(data):
    data = bytearray(data)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.randrange(5)
        if not data:
            data.append(rng.randrange(256))
            continue
        pos = rng.randrange(len(data))
        if op == 0:
            data[pos] ^= 1 << rng.randrange(8)
        elif op == 1:
            data[pos] = rng.choice(b'\0 \n./<>+-0123456789abcdefgit~\\:\x80\xff')
        elif op == 2:
            del data[pos]
        elif op == 3:
            data.insert(pos, rng.choice(b'\0 \n./<>+-09agit~\\:\xe2\x80\x8c'))
        else:
            del data[pos:]
    return bytes(data)


for k in range(30):
    ents = sorted(rng.sample(ORDER_POOL[:9], rng.randrange(1, 4)), key=lambda e: e[1])
    raw = b''.join(m + b' ' + n + b'\0' + i for m, n, i in
                   [(b'100644', b'.gitmodules', EVIL_MODS if k % 7 == 0 else BLOB)] + ents
                   if True)
    c = Case()
    s = c.add('tree', mutate(raw))
    emit('mutated tree %d' % k, c, c.commit(with_base(c, b'sub', b'40000', s)))
for k in range(45):
    text = mutate(commit_text(BASE_TREE, extra=rng.choice([b'', b'encoding x\n'])))
    if b'\nparent ' + BASE.encode() + b'\n' not in text:
        continue  # no longer a descendant of the base: paddock's own rule
    commit_case('mutated commit %d' % k, text)
for k in range(30):
    text = mutate(rng.choice(GM[:60] + [MODS_OK] * 10))
    c = Case()
    m = c.blob(text)
    emit('mutated .gitmodules %d %r' % (k, text[:60]), c,
         sub_commit(c, [(b'100644', b'.gitmodules', m)]))

# ---- write them, and git's verdict ----


def tags(pack_objs):
    """What paddock refuses on purpose where git accepts (test-fsckdiff.c
    says why): a mode over 16 bits, which libgit2 cannot parse; a mode of
    no file type, which git takes for a gitlink and libgit2 for a blob; a
    .gitmodules that starts with a byte-order mark."""
    out = set()
    for kind, data, _ in pack_objs:
        if kind == 'blob' and data.startswith(b'\xef\xbb\xbf'):
            out.add('bom')
        p = 0
        while kind == 'tree' and p < len(data):
            sp, nul = data.find(b' ', p), data.find(b'\0', p)
            if sp < 0 or nul < sp:
                break
            m = data[p:sp]
            if m and all(48 <= ch <= 55 for ch in m):
                v = int(m, 8)
                if v > 0o177777:
                    out.add('mode16')
                elif v & 0o170000 not in (0o100000, 0o120000, 0o040000, 0o160000):
                    out.add('modetype')
            p = nul + 21
    return ','.join(sorted(out)) or '-'


env = dict(os.environ, GIT_CONFIG_NOSYSTEM='1', GIT_CONFIG_GLOBAL='/dev/null')


def verdict(n):
    """git's on case n, in a scratch repository of its own (emptied)."""
    name, tip, pack = cases[n]
    xc = '%s-%d' % (XCHECK, n % 2)
    r = subprocess.run(['git', '-C', xc, 'index-pack', '--stdin', '--fix-thin', '--strict'],
                       input=pack, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    packdir = os.path.join(xc, 'objects', 'pack')
    for e in os.listdir(packdir):
        os.unlink(os.path.join(packdir, e))
    return r


for k in range(2):
    xc = '%s-%d' % (XCHECK, k)
    subprocess.run(['git', 'init', '-q', '--bare', xc], check=True, env=env)
    with open(os.path.join(xc, 'objects', 'info', 'alternates'), 'w') as f:
        f.write(open(os.path.join(XCHECK, 'objects', 'info', 'alternates')).read())
for n, (name, tip, pack) in enumerate(cases):
    with open(os.path.join(OUTDIR, '%d.bundle' % n), 'wb') as f:
        f.write(b'# v2 git bundle\n-' + BASE.encode() + b'\n' + tip.hex().encode() + b' ' +
                REF + b'\n\n' + pack)
# Two at a time, in the order of the cases: each of the two runs on cases
# of one parity only, in a repository of its own.
results = [None] * len(cases)
with ThreadPoolExecutor(2) as ex:
    for k, res in enumerate(ex.map(lambda k: [(n, verdict(n)) for n in range(k, len(cases), 2)],
                                  range(2))):
        for n, r in res:
            results[n] = r
out = sys.stdout
for n, (name, tip, pack) in enumerate(cases):
    r = results[n]
    msg = r.stderr.decode('utf-8', 'replace').strip().replace('\n', ' | ').replace('\t', ' ')
    name = name.replace('\t', ' ').replace('\n', ' ')
    objs = case_objs[n]
    out.write('%d\t%d\t%s\t%s\t%s\n' % (n, 1 if r.returncode else 0, tags(objs), name,
                                        msg[:300]))
