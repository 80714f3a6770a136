"""Real programs run the same under profwrap as without it (issue 8): coreutils, find/xargs, tar, gzip, xz,
bzip2, zstd, zip, diff/patch, awk, perl, python3, sqlite3, make, git and sh pipelines, each case (one or
more program runs in one directory) run twice from the same input tree in two directories, once plain and
once as `profwrap -q -o OUT -- ARGV`, with one fixed environment. Compared: the
exit status, stdout and stderr byte for byte (the run directory's path replaced by @ROOT@), and the tree the
programs leave: its paths, file types, modes, sizes and content hashes (contents with the directory's path
replaced, as git writes it into a clone's config); modification times only where the program sets them from
its input (tar -x, cp -a, gzip/xz/gunzip). A few runs' reports are checked to be real: the processes named,
one known file's read or write bytes equal to its size.

Files left out of the content comparison (present, of the same type and mode on both sides, content and size
not compared):
  */.git/index   git's index holds each file's ctime, mtime, inode and device.

A program missing here skips its cases (with a note); the test fails when fewer than 80 % of the cases ran.
Before the cases, controls run the same machinery with one side changed on purpose (another argument, exit
status, mode, file, mtime) and must be flagged: the comparison can fail.

Known differences (KNOWN_DIFFERENCES: the preload's descriptors visible in /proc/self/fd) are run too and
noted with a KNOWN DIFFERENCE line; they do not fail the test.

Environment for maintainers: REAL_PROGRAMS_CASES=name,name runs only those cases; REAL_PROGRAMS_PLAIN=1 runs
the second side without profwrap too, to see that a new case is deterministic on its own."""
import fnmatch
import functools
import hashlib
import io
import os
import shutil
import stat
import sys
import tarfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

EPOCH = 1700000000          # every input file's and directory's mtime (2023-11-14 22:13:20 UTC)
SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
MIN_SHARE_RUN = 0.8
PLACEHOLDER = b"@ROOT@"
BIG = 4 * 1048576           # big.bin
MAX_SHOWN = 8               # differences shown per case


def fixed_env(root, extra=None):
    """The whole environment of both runs of a case (nothing inherited): deterministic and inside root."""
    env = {
        "PATH": SEARCH_PATH,
        "LC_ALL": "C",
        "LANG": "C",
        "TZ": "UTC",
        "HOME": os.path.join(root, "home"),
        "TMPDIR": os.path.join(root, "tmp"),
        "USER": "tester",
        "LOGNAME": "tester",
        "SHELL": "/bin/sh",
        "SOURCE_DATE_EPOCH": str(EPOCH),
        "PYTHONHASHSEED": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Ada Tester",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada Tester",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": "%d +0000" % EPOCH,
        "GIT_COMMITTER_DATE": "%d +0000" % EPOCH,
    }
    if extra:
        env.update(extra)
    return env


# ---- input trees (written by Python, the same bytes in both directories) ----

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def lcg(seed):
    x = seed & 0xFFFFFFFF
    while True:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        yield x


@functools.lru_cache(maxsize=None)
def word_lines(n, seed=1):
    """n lines "word number word", with repeats (for sort, uniq, grep)."""
    g = lcg(seed)
    out = []
    for _ in range(n):
        out.append("%s %d %s\n" % (WORDS[next(g) % 26], next(g) % 1000, WORDS[next(g) % 7]))
    return "".join(out).encode()


@functools.lru_cache(maxsize=None)
def noise(size, seed=0):
    """size bytes that compress a little (a hash stream with runs), for gzip and xz."""
    out = bytearray()
    i = 0
    while len(out) < size:
        h = hashlib.sha256(b"%d:%d" % (seed, i)).digest()
        out += h if i % 4 else h[:8] * 8
        i += 1
    return bytes(out[:size])


def put(root, rel, data, mode=0o644):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(path, mode)
    return path


def src_tree(root, top="src"):
    """A small tree: 40 files of varied sizes in nested directories, an empty file, an empty directory, an
    executable, a private file and a symbolic link."""
    for i in range(40):
        sub = ("", "lib/", "lib/deep/", "doc/")[i % 4]
        ext = (".txt", ".c", ".dat", ".md")[i % 4]
        data = word_lines(3 + i * 11, seed=i) if ext != ".dat" else noise(500 + i * 977, seed=i)
        put(root, "%s/%sfile%02d%s" % (top, sub, i, ext), data)
    put(root, top + "/empty.txt", b"")
    os.makedirs(os.path.join(root, top, "emptydir"), exist_ok=True)
    put(root, top + "/run.sh", "#!/bin/sh\necho run\n", 0o755)
    put(root, top + "/secret.txt", "private\n", 0o600)
    os.symlink("lib/file01.c", os.path.join(root, top, "link.c"))


def basic(root):
    """words.txt (5,000 lines), big.bin (4 MiB), the src tree."""
    put(root, "words.txt", word_lines(5000))
    put(root, "big.bin", noise(BIG, seed=7))
    src_tree(root)


def tar_input(root):
    """in.tar and in.tgz made by Python's tarfile (fixed mtimes, modes, owners), for tar -t and tar -x."""
    members = [("pkg", None, 0o755), ("pkg/README", word_lines(40, 3), 0o644),
               ("pkg/bin", None, 0o750), ("pkg/bin/tool", b"#!/bin/sh\necho tool\n", 0o755),
               ("pkg/data.bin", noise(150000, 5), 0o640), ("pkg/old.txt", b"old\n", 0o444)]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for i, (name, data, mode) in enumerate(members):
            ti = tarfile.TarInfo(name)
            ti.mode = mode
            ti.mtime = EPOCH - 86400 * (i + 1)
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = "root"
            if data is None:
                ti.type = tarfile.DIRTYPE
                tf.addfile(ti)
            else:
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
        ti = tarfile.TarInfo("pkg/latest")
        ti.type = tarfile.SYMTYPE
        ti.linkname = "README"
        ti.mtime = EPOCH - 99
        ti.uname = ti.gname = "root"
        tf.addfile(ti)
    put(root, "in.tar", buf.getvalue())
    import gzip
    put(root, "in.tgz", gzip.compress(buf.getvalue(), mtime=EPOCH))
    os.makedirs(os.path.join(root, "out"), exist_ok=True)


PY_HELPER = '''
def checksum(data):
    import hashlib
    return hashlib.sha256(data).hexdigest()[:16]
'''

PY_SCRIPT = r'''
import json, os, subprocess, sys, threading
import helper

words = open("words.txt").read().split()
os.makedirs("py/out", exist_ok=True)
with open("py/out/tmp.txt", "w") as f:
    for w in reversed(words):
        f.write(w + "\n")
os.replace("py/out/tmp.txt", "py/out/reversed.txt")
with open("py/out/data.bin", "wb") as f:
    for i in range(256):
        f.write(bytes([i]) * 1024)
print("data", os.path.getsize("py/out/data.bin"), helper.checksum(open("py/out/data.bin", "rb").read()))

r = subprocess.run(["sort", "-u"], input="\n".join(words[:3000]).encode() + b"\n", capture_output=True, check=True)
open("py/out/sorted.txt", "wb").write(r.stdout)
print("sort -u", len(r.stdout.splitlines()))
with open("py/out/data.gz", "wb") as out:
    p = subprocess.Popen(["gzip", "-n", "-c"], stdin=subprocess.PIPE, stdout=out)
    p.communicate(open("py/out/data.bin", "rb").read())
print("gzip exit", p.returncode)
print("shell", subprocess.check_output("ls py/out | wc -l", shell=True).decode().strip())
print("false", subprocess.call(["false"]))
sys.stdout.flush()

results = [None] * 4
def work(i):
    path = "py/out/thread%d.txt" % i
    with open(path, "w") as f:
        for j in range(3000):
            f.write("%d %d %s\n" % (i, j, words[(i * 7 + j) % len(words)]))
    with open(path, "rb") as f:
        results[i] = helper.checksum(f.read())
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(results))
sys.stdout.flush()
sys.stderr.write("about to fail\n")

def deep(n):
    if n == 0:
        raise ValueError("deliberate failure, %d words" % len(words))
    deep(n - 1)
deep(3)
'''

PY_POOL = r'''
import hashlib, multiprocessing, os

def digest(path):
    with open(path, "rb") as f:
        return path, hashlib.md5(f.read()).hexdigest()

if __name__ == "__main__":
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk("src") for f in fs)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        rows = pool.map(digest, files, chunksize=4)
    with open("manifest.txt", "w") as f:
        for path, h in rows:
            f.write("%s  %s\n" % (h, path))
    print(len(rows), "files")
'''

PY_STDIN = ("import sys, zlib\n"
            "d = sys.stdin.buffer.read()\n"
            "open('copy.bin', 'wb').write(d)\n"
            "print(len(d), '%08x' % zlib.crc32(d))\n"
            "sys.stderr.write('lines %d\\n' % d.count(b'\\n'))\n")


def python_tree(root):
    basic(root)
    put(root, "helper.py", PY_HELPER)
    put(root, "script.py", PY_SCRIPT)
    put(root, "pool.py", PY_POOL)


def sqlite_tree(root):
    sql = ["CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL);",
           "CREATE INDEX item_name ON item(name);"]
    g = lcg(11)
    n = 0
    for _ in range(5):
        sql.append("BEGIN;")
        for _ in range(1000):
            n += 1
            sql.append("INSERT INTO item(name, qty, price) VALUES('%s-%d', %d, %d.%02d);" % (
                WORDS[next(g) % 26], next(g) % 50, next(g) % 500, next(g) % 100, next(g) % 100))
        sql.append("COMMIT;")
    sql.append("BEGIN; UPDATE item SET qty = qty + 1 WHERE id % 7 = 0; DELETE FROM item WHERE id % 13 = 0; COMMIT;")
    sql.append("SELECT count(*), sum(qty), printf('%.2f', sum(price)) FROM item;")
    put(root, "load.sql", "\n".join(sql) + "\n")
    put(root, "wal.sql", "PRAGMA journal_mode=WAL;\nCREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);\n"
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)\n"
        "INSERT INTO t SELECT x, zeroblob(100 + x % 200) FROM c;\n"
        "PRAGMA wal_checkpoint(TRUNCATE);\nPRAGMA integrity_check;\nSELECT count(*), sum(length(v)) FROM t;\n")


MAKEFILE = """\
PARTS := a b c d

all: combined.txt

%.up: %.in
\ttr a-z A-Z < $< > $@

combined.txt: $(PARTS:=.up)
\tcat $^ > $@
\t@echo built $@ from $(words $^) parts

check: combined.txt
\t@echo checking combined.txt >&2
\tgrep -q NOT-THERE combined.txt

recursive: combined.txt
\t+$(MAKE) -C sub

clean:
\trm -f *.up combined.txt sub/*.sum

.PHONY: all check clean recursive
"""

SUB_MAKEFILE = """\
all: a.sum b.sum c.sum

%.sum: ../%.up
\tsum $< > $@
"""


def make_tree(root):
    put(root, "Makefile", MAKEFILE)
    for i, p in enumerate("abcd"):
        put(root, p + ".in", word_lines(2000 + 500 * i, seed=20 + i))
    put(root, "sub/Makefile", SUB_MAKEFILE)


def diff_tree(root):
    basic(root)
    old = word_lines(400, 5).decode().splitlines(True)
    new = list(old)
    new[10:13] = ["inserted line\n"]
    new[200] = "changed line\n"
    del new[300:305]
    put(root, "old.txt", "".join(old))
    put(root, "new.txt", "".join(new))


PERL_SCRIPT = r'''
use strict; use warnings;
my %count; my %sum;
open(my $in, "<", "words.txt") or die "words.txt: $!";
while (<$in>) { my ($w, $n) = split; $count{$w}++; $sum{$w} += $n; }
close($in);
open(my $out, ">", "perl-out.txt") or die;
printf $out "%-10s %5d %8d\n", $_, $count{$_}, $sum{$_} for sort keys %count;
close($out);
print scalar(keys %count), " words\n";
my $pid = open(my $p, "-|", "sort", "-r", "perl-out.txt") or die;
my @lines = <$p>; close($p);
print $lines[0];
warn "done with ", scalar(@lines), " lines\n";
exit 4;
'''


def perl_tree(root):
    basic(root)
    put(root, "count.pl", PERL_SCRIPT)


def pkg_tree(root):
    basic(root)
    for i in range(6):
        put(root, "pkg/mod%d.py" % i, "VALUE = %d\n\ndef f(x):\n    return x * VALUE + %d\n" % (i, i * i))
    put(root, "pkg/__init__.py", "from . import mod0, mod1\n")


def git_tree(root):
    for i in range(12):
        put(root, "repo/src/mod%02d.c" % i, "/* module %d */\n%s" % (i, word_lines(30 + i, seed=40 + i).decode()))
    put(root, "repo/README", "A repository for the test.\nalpha line\n")
    put(root, "repo/data.bin", noise(60000, 9))
    put(root, "repo/tool.sh", "#!/bin/sh\necho tool\n", 0o755)
    put(root, "extra.txt", word_lines(25, 99))


def set_times(root):
    """Every entry's mtime and atime to EPOCH, deepest first (a directory's time after its children's)."""
    for d, dirs, files in os.walk(root, topdown=False):
        for name in files + dirs:
            os.utime(os.path.join(d, name), (EPOCH, EPOCH), follow_symlinks=False)
    os.utime(root, (EPOCH, EPOCH))


# ---- cases ----

class Step:
    def __init__(self, argv, rc=0, stdin=None, env=None, check=None):
        self.argv = list(argv)
        self.rc = rc            # the exit status the plain run must have (the case is what it says)
        self.stdin = stdin      # bytes fed to both runs, else /dev/null
        self.env = env          # more variables for this step
        self.check = check      # check(rep, ctx) -> [problems] on the profwrap run's rank0.json


class Case:
    def __init__(self, name, steps, setup=basic, needs=(), mtimes=(), exclude=(), cwd="", known=None):
        self.name = name
        self.known = known               # (key, words, why): a known difference, see KNOWN_DIFFERENCES
        self.steps = [s if isinstance(s, Step) else Step(s) for s in steps]
        self.setup = setup
        self.needs = tuple(needs) or tuple(sorted({s.argv[0] for s in self.steps}))
        self.mtimes = tuple(mtimes)      # fnmatch patterns of paths whose mtime the program sets from its input
        self.exclude = tuple(exclude)    # fnmatch patterns of paths whose content is not compared
        self.cwd = cwd


def sh(script, **kw):
    return Step(["sh", "-c", script], **kw)


# Checks of the profwrap run's report.

def file_bytes(rep, ctx, rel, key):
    """read_bytes or write_bytes of the file rel (under the root) summed over its files[] entries, whatever
    form the program named it by (relative to its cwd, or absolute)."""
    want = os.path.join(ctx["root"], rel)
    total = 0
    for f in rep.get("files", []):
        p = f.get("path") or ""
        if not p.startswith("/"):
            p = os.path.join(ctx["cwd"], p)
        if os.path.normpath(p) == want:
            total += f[key]
    return total


def bytes_equal_size(rel, key, times=1):
    """The report's key (read_bytes or write_bytes) of rel is times the file's size."""
    def chk(rep, ctx):
        size = os.path.getsize(os.path.join(ctx["root"], rel))
        got = file_bytes(rep, ctx, rel, key)
        return [] if got == times * size else ["%s of %s: %d, expected %d x its %d bytes" % (key, rel, got, times, size)]
    return chk


def has_process(image):
    def chk(rep, ctx):
        names = [os.path.basename((p.get("argv") or "").split(" ")[0]) for p in rep.get("processes", [])]
        return [] if image in names else ["no process %r in the report: %r" % (image, names)]
    return chk


def all_of(*checks):
    def chk(rep, ctx):
        return [m for c in checks for m in c(rep, ctx)]
    return chk


SRC_FILES = ["src/%sfile%02d%s" % (("", "lib/", "lib/deep/", "doc/")[i % 4], i, (".txt", ".c", ".dat", ".md")[i % 4])
             for i in range(40)]


def commit(msg, offset, *opts):
    """git commit in repo at EPOCH + offset seconds (author and committer)."""
    when = "%d +0000" % (EPOCH + offset)
    return Step(["git", "-C", "repo", "commit"] + list(opts) + ["-m", msg],
                env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


CASES = [
    # coreutils
    Case("cp_r", [["cp", "-r", "src", "copy"]]),
    Case("cp_a", [["cp", "-a", "src", "copy"]], mtimes=["copy", "copy/*"]),
    Case("sort_file", [["sort", "-k2,2n", "-k1,1", "-s", "words.txt", "-o", "sorted.txt"]]),
    Case("sort_stdin", [Step(["sort", "-u", "-r"], stdin=word_lines(5000))]),
    Case("uniq_c", [sh("sort words.txt > s.txt"), ["uniq", "-c", "s.txt", "counts.txt"],
                    ["uniq", "-d", "-f", "1", "s.txt"]]),
    Case("wc_many", [["wc"] + SRC_FILES + ["big.bin"]]),
    Case("md5sum_many", [Step(["md5sum"] + SRC_FILES + ["big.bin"], check=bytes_equal_size("big.bin", "read_bytes"))]),
    Case("sha256sum_check", [sh("sha256sum src/*.txt src/lib/*.c big.bin > sums.txt"),
                             ["sha256sum", "-c", "sums.txt"],
                             sh("printf x >> big.bin"),
                             Step(["sha256sum", "-c", "--quiet", "sums.txt"], rc=1)]),
    Case("split", [["split", "-l", "700", "-d", "-a", "3", "words.txt", "part-"],
                   ["split", "-b", "300k", "big.bin", "chunk."], sh("cat chunk.* | cmp - big.bin")]),
    Case("cat_big_pipe", [Step(["sh", "-c", "cat big.bin | sha256sum; cat big.bin words.txt | wc -c"],
                               check=all_of(bytes_equal_size("big.bin", "read_bytes", 2), has_process("cat")))]),
    Case("cat_stdout", [["cat", "big.bin", "words.txt"]]),
    Case("dd_counts", [Step(["dd", "if=big.bin", "of=part.bin", "bs=4096", "skip=7", "count=100", "status=noxfer"],
                            check=bytes_equal_size("part.bin", "write_bytes")),
                       ["dd", "if=/dev/zero", "of=zeros.bin", "bs=64k", "count=16", "status=noxfer"],
                       ["dd", "if=words.txt", "of=upper.txt", "bs=1000", "count=5", "conv=ucase", "status=noxfer"]]),
    Case("head_tail", [["head", "-n", "15", "words.txt"], ["head", "-c", "4096", "big.bin"],
                       ["tail", "-n", "25", "words.txt"], ["tail", "-n", "+4990", "words.txt"],
                       ["tail", "-c", "100", "big.bin"]]),
    Case("ls_tree", [["ls", "-lRa", "--time-style=long-iso", "src"], ["ls", "-1sS", "src/lib"]]),
    Case("cat_missing", [Step(["cat", "words.txt", "missing.txt"], rc=1)]),
    Case("false", [Step(["false"], rc=1)]),
    Case("ls_missing", [Step(["ls", "-l", "src/run.sh", "nothing-here"], rc=2)]),
    Case("text_tools", [sh("cut -d' ' -f1 words.txt | tr a-z A-Z | sort | uniq -c | sort -k1,1nr -k2 | head -5"),
                        ["paste", "-d,", "src/file00.txt", "src/file04.txt"],
                        ["grep", "-c", "alpha", "words.txt"], Step(["grep", "zzz", "words.txt"], rc=1),
                        ["sed", "-i", "s/alpha/ALPHA/g", "words.txt"]]),
    # find, xargs
    Case("find_xargs", [sh("find src -type f | sort | xargs -n 7 sha1sum"),
                        ["find", "src", "-name", "*.c", "-size", "+1k", "-newer", "src/empty.txt"],
                        sh("find src -name '*.md' -print0 | sort -z | xargs -0 -P2 -n3 gzip -k")],
         needs=["find", "xargs", "gzip"], mtimes=["src/*.md.gz"]),
    # tar
    Case("tar_create", [["tar", "cf", "src.tar", "src"], ["tar", "tvf", "src.tar"]]),
    Case("tar_gzip", [Step(["tar", "czf", "src.tgz", "src"],
                           check=all_of(has_process("gzip"), bytes_equal_size("src.tgz", "write_bytes"))),
                      ["tar", "tzf", "src.tgz"]],
         needs=["tar", "gzip"]),
    Case("tar_xz", [["tar", "cJf", "src.txz", "src"], ["tar", "tJvf", "src.txz"]], needs=["tar", "xz"]),
    Case("tar_extract", [["tar", "tvf", "in.tar"], ["tar", "xzf", "in.tgz", "-C", "out"],
                         ["tar", "xvf", "in.tar", "--no-same-owner", "-C", "out", "--transform", "s/^pkg/pkg2/"]],
         setup=tar_input, needs=["tar", "gzip"], mtimes=["out/*"]),
    # gzip, xz
    Case("gzip", [["gzip", "-9", "-k", "words.txt"], ["gzip", "-l", "words.txt.gz"], ["gzip", "-t", "words.txt.gz"],
                  ["gzip", "-k", "big.bin"], sh("mv words.txt.gz w.gz && gunzip w.gz && cmp w words.txt"),
                  Step(["gunzip", "nothing.gz"], rc=1)],
         mtimes=["*.gz", "w"]),
    Case("gzip_stdin", [Step(["gzip", "-c", "-n"], stdin=word_lines(20000, 4)),
                        sh("gzip -c big.bin | gunzip | cmp - big.bin && echo same")]),
    Case("xz", [["xz", "-k", "-6", "words.txt"], ["xz", "-l", "words.txt.xz"], ["xz", "-dc", "words.txt.xz"],
                sh("head -c 1000000 big.bin | xz -1 | xz -d | sha256sum")],
         mtimes=["*.xz"]),
    # python3
    Case("python_script", [Step(["python3", "script.py"], rc=1, check=all_of(
        has_process("gzip"), has_process("sort"), bytes_equal_size("py/out/data.bin", "write_bytes")))],
         setup=python_tree),
    Case("python_pool", [["python3", "pool.py"]], setup=python_tree),
    Case("python_stdin", [Step(["python3", "-c", PY_STDIN], stdin=noise(300000, 3))]),
    # sqlite3
    Case("sqlite", [Step(["sqlite3", "db.sqlite"], stdin=b".read load.sql\n",
                         check=bytes_equal_size("load.sql", "read_bytes")),
                    ["sqlite3", "-header", "-column", "db.sqlite",
                     "SELECT name, count(*) AS n, sum(qty) FROM item GROUP BY substr(name, 1, 1) ORDER BY 2 DESC LIMIT 8"],
                    ["sqlite3", "db.sqlite", ".dump"],
                    Step(["sqlite3", "db.sqlite", "SELECT * FROM nosuch"], rc=1)],
         setup=sqlite_tree),
    Case("sqlite_wal", [["sqlite3", "wal.db", ".read wal.sql"], ["sqlite3", "wal.db", "PRAGMA journal_mode"]],
         setup=sqlite_tree),
    # make
    Case("make", [Step(["make", "-j2"], check=has_process("tr")), Step(["make", "-j2", "check"], rc=2),
                  Step(["make", "-q"]), Step(["make", "nosuchtarget"], rc=2), ["make", "-n", "clean"],
                  ["make", "clean"], ["make", "-j2", "-s"], ["make", "-j2", "recursive"]],
         setup=make_tree),
    # git
    Case("git", [["git", "-c", "init.defaultBranch=main", "init", "repo"],
                 ["git", "-C", "repo", "symbolic-ref", "HEAD", "refs/heads/main"],
                 ["git", "-C", "repo", "config", "pack.threads", "1"],
                 ["git", "-C", "repo", "add", "."],
                 commit("initial", 0),
                 ["sed", "-i", "s/alpha/ALPHA/", "repo/README", "repo/src/mod03.c"],
                 ["git", "-C", "repo", "diff"],
                 commit("second", 60, "-a"),
                 ["git", "-C", "repo", "checkout", "-b", "feature"],
                 ["cp", "extra.txt", "repo/src/extra.txt"],
                 ["git", "-C", "repo", "add", "src/extra.txt"],
                 commit("feature work", 120),
                 ["git", "-C", "repo", "checkout", "main"],
                 ["sed", "-i", "1s/.*/changed on main/", "repo/src/mod07.c"],
                 commit("main work", 180, "-a"),
                 Step(["git", "-C", "repo", "merge", "--no-edit", "feature"],
                      env={"GIT_COMMITTER_DATE": "%d +0000" % (EPOCH + 240)}),
                 ["git", "-C", "repo", "tag", "-a", "v1", "-m", "release one"],
                 ["git", "-C", "repo", "log", "--graph", "--oneline", "--decorate", "--all"],
                 ["git", "-C", "repo", "log", "-p", "--stat", "-3"],
                 ["git", "-C", "repo", "diff", "--stat", "HEAD~2", "HEAD"],
                 ["git", "-C", "repo", "show", "v1"],
                 ["git", "-C", "repo", "gc", "--prune=now"],
                 ["git", "-C", "repo", "count-objects", "-v"],
                 ["git", "-C", "repo", "fsck", "--no-progress"],
                 ["git", "clone", "-q", "repo", "clone"],
                 ["git", "-C", "clone", "log", "--format=%H %an %ad %s", "--date=iso"],
                 ["git", "-C", "clone", "status", "--porcelain=v1", "--branch"],
                 Step(["git", "-C", "repo", "checkout", "nosuch"], rc=1)],
         setup=git_tree, needs=["git", "sed", "cp"], exclude=["*/.git/index"]),
    # more coreutils: file operations, parallel sort with temporary files, tee
    Case("fs_ops", [["mkdir", "-p", "a/b/c", "d"], ["install", "-m", "640", "words.txt", "a/b/w.txt"],
                    ["ln", "-s", "../words.txt", "a/link"], ["ln", "big.bin", "d/hard.bin"],
                    ["mv", "src/lib", "a/b/c/lib"], ["rm", "-r", "src/doc"], ["chmod", "-R", "go-rwx", "a/b"],
                    ["touch", "-d", "@1600000000", "a/b/w.txt"], ["truncate", "-s", "12345", "d/sparse"],
                    ["mkfifo", "-m", "600", "d/fifo"], ["cp", "-p", "src/run.sh", "d/run.sh"],
                    Step(["rmdir", "a"], rc=1), Step(["mkdir", "d"], rc=1)],
         needs=["mkdir", "install", "ln", "mv", "rm", "chmod", "touch", "truncate", "mkfifo", "cp", "rmdir"],
         mtimes=["a/b/w.txt", "d/run.sh"]),
    Case("sort_parallel", [Step(["sort", "--parallel=2", "-S", "200K", "-k3,3", "-k2,2n", "-k1,1"],
                                stdin=word_lines(60000, 6))]),
    Case("tee", [sh("seq 1 20000 | tee seq.txt | tee -a seq2.txt | wc -l; tee t1 t2 < words.txt | md5sum")],
         needs=["sh", "seq", "tee", "wc", "md5sum"]),
    Case("diff_patch", [Step(["diff", "-u", "old.txt", "new.txt"], rc=1), sh("diff -u old.txt new.txt > p.diff", rc=1),
                        ["patch", "-b", "old.txt", "p.diff"], ["cmp", "old.txt", "new.txt"],
                        Step(["cmp", "old.txt.orig", "new.txt"], rc=1)],
         setup=diff_tree, needs=["diff", "patch", "cmp", "sh"]),
    Case("awk", [["awk", "-F", " ", "{ n[$1]++; s[$1] += $2 } END { for (k in n) printf \"%s %d %d\\n\", k, n[k], s[k] "
                  "| \"sort\" }", "words.txt"],
                 ["awk", "NR % 1000 == 0 { print NR \": \" $0 > \"every1000.txt\" } END { print NR }", "words.txt"]]),
    Case("perl", [Step(["perl", "count.pl"], rc=4, check=has_process("sort"))], setup=perl_tree,
         needs=["perl", "sort"]),
    Case("bzip2_zstd", [["bzip2", "-k", "-9", "words.txt"], ["bzip2", "-t", "words.txt.bz2"],
                        sh("bzip2 -dc words.txt.bz2 | cmp - words.txt && echo same"),
                        ["zstd", "-q", "-k", "-3", "big.bin"], ["zstd", "-q", "-d", "-c", "big.bin.zst", "-o", "big2.bin"],
                        ["zstd", "-l", "big.bin.zst"]],
         needs=["bzip2", "zstd", "sh", "cmp"], mtimes=["*.bz2", "*.zst", "big2.bin"]),
    Case("zip", [["zip", "-X", "-r", "-q", "src.zip", "src"], ["unzip", "-l", "src.zip"],
                 ["unzip", "-q", "-o", "src.zip", "-d", "unz"], Step(["unzip", "-q", "missing.zip"], rc=9)],
         needs=["zip", "unzip"], mtimes=["unz/src/*"]),
    Case("python_compileall", [["python3", "-m", "compileall", "-q", "pkg"],
                               ["python3", "-c", "import pkg.mod3, pkg.mod5; print(pkg.mod3.f(7), pkg.mod5.f(2))"]],
         setup=pkg_tree),
    # sh pipelines
    Case("pipeline_seq_sort_head", [sh("seq 1 100000 | sort -r | head")], needs=["sh", "seq", "sort", "head"]),
    Case("pipeline_exit", [sh("for i in 1 2 3; do seq $i > f$i; done; cat f* | wc -l; ls f* >&2; exit 3", rc=3)],
         needs=["sh", "seq", "cat", "wc", "ls"]),
    Case("pipeline_background", [sh("gzip -c words.txt > w1.gz & bzip=$!; sort -r words.txt > r.txt & wait $bzip;"
                                     " wait; gzip -dc w1.gz | cmp - words.txt && wc -l < r.txt")],
         needs=["sh", "gzip", "sort", "cmp", "wc"]),
    # programs reading stdin
    Case("stdin_read", [sh("read a; read b; echo \"$b $a\"; cat -n | tail -3", stdin=b"first\nsecond\n" + word_lines(300)),
                        Step(["sha256sum", "-"], stdin=noise(1 << 20, 8)),
                        Step(["wc"], stdin=word_lines(7000, 2))],
         needs=["sh", "cat", "tail", "sha256sum", "wc"]),
    # SIGUSR2 is profwrap's (start|stop) only when it comes from profwrap: any other has its default action.
    Case("sigusr2_default", [sh("kill -USR2 $$; echo survived", rc=-12),
                             sh("sleep 5 & kill -USR2 $!; wait $!; echo $?")], needs=["sh", "sleep"]),
]


# Known differences: these cases show what profwrap changes on purpose or has not fixed. A difference each of
# whose lines names one of the words is noted (KNOWN DIFFERENCE) and does not fail the test; any other
# difference fails it; when the difference is gone the note says so (then drop the mark).
KNOWN_DIFFERENCES = [
    Case("known_fds", [["ls", "/proc/self/fd"]],
         known=("preload-fds-visible", ("stdout",),
                "the preload keeps descriptors open in every process (a pipe pair, the collector's socket, the "
                "shared-memory segment, moved high: 928, 929, 960, 961 here): a program that lists or counts its "
                "descriptors sees them")),
]


# Controls: side A plain, side B under profwrap with one thing changed; the comparison must name the
# difference (the word given), so it can fail on each kind of difference.
CONTROLS = [
    ("exit status", Case("ctl_exit", [sh("exit 0")], needs=["sh"]), [sh("exit 3", rc=3)]),
    ("stdout", Case("ctl_stdout", [["sort", "words.txt"]]), [["sort", "-r", "words.txt"]]),
    ("stderr", Case("ctl_stderr", [Step(["cat", "missing1"], rc=1)]), [Step(["cat", "missing2"], rc=1)]),
    ("content", Case("ctl_content", [sh("tr a-y b-z < words.txt > t.txt")], needs=["sh"]),
     [sh("tr a-y c-z < words.txt > t.txt")]),
    ("size", Case("ctl_size", [["dd", "if=big.bin", "of=p.bin", "count=2", "status=none"]]),
     [["dd", "if=big.bin", "of=p.bin", "count=3", "status=none"]]),
    ("mode", Case("ctl_mode", [["chmod", "600", "words.txt"]]), [["chmod", "640", "words.txt"]]),
    ("only in", Case("ctl_extra", [["true"]]), [["touch", "new.txt"]]),
    ("type", Case("ctl_type", [["mkdir", "x"]]), [["touch", "x"]]),
    ("mtime", Case("ctl_mtime", [["touch", "-d", "@100", "words.txt"]], mtimes=["words.txt"]),
     [["touch", "-d", "@200", "words.txt"]]),
]


# ---- running and comparing ----

def snapshot(root, case):
    """{relative path: (type, mode, size, sha256 of content with root replaced, mtime_ns or None)}."""
    rb = root.encode()
    entries = {}
    for d, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = os.path.join(d, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            excluded = any(fnmatch.fnmatch(rel, p) for p in case.exclude)
            kind, size, digest = "other", None, None
            if stat.S_ISREG(st.st_mode):
                kind = "file"
                if not excluded:
                    with open(path, "rb") as f:
                        data = f.read().replace(rb, PLACEHOLDER)
                    size, digest = len(data), hashlib.sha256(data).hexdigest()
            elif stat.S_ISDIR(st.st_mode):
                kind = "dir"
            elif stat.S_ISLNK(st.st_mode):
                kind = "symlink"
                digest = os.readlink(path).replace(root, PLACEHOLDER.decode())
            elif stat.S_ISFIFO(st.st_mode):
                kind = "fifo"
            elif stat.S_ISSOCK(st.st_mode):
                kind = "socket"
            mtime = st.st_mtime_ns if any(fnmatch.fnmatch(rel, p) for p in case.mtimes) else None
            entries[rel] = (kind, stat.S_IMODE(st.st_mode), size, digest, mtime)
    return entries


def first_difference(a, b):
    n = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    return "%d vs %d bytes, first difference at byte %d: plain %r, profwrap %r" % (
        len(a), len(b), n, a[max(0, n - 40):n + 80], b[max(0, n - 40):n + 80])


def compare_trees(ta, tb):
    diffs = []
    for rel in sorted(set(ta) | set(tb)):
        if rel not in tb:
            diffs.append("%s: only in the plain run's tree" % rel)
        elif rel not in ta:
            diffs.append("%s: only in the profwrap run's tree" % rel)
        else:
            for what, x, y in zip(("type", "mode", "size", "content", "mtime"), ta[rel], tb[rel]):
                if x != y:
                    if what == "mode":
                        x, y = oct(x), oct(y)
                    diffs.append("%s: %s differs: plain %s, profwrap %s" % (rel, what, x, y))
                    if what in ("type", "size"):
                        break
    return diffs


class Side:
    def __init__(self, base, label, case):
        self.root = os.path.realpath(os.path.join(base, label))
        os.makedirs(os.path.join(self.root, "home"))
        os.makedirs(os.path.join(self.root, "tmp"))
        case.setup(self.root)
        set_times(self.root)
        self.cwd = os.path.join(self.root, case.cwd)

    def run(self, step, prefix, stdin_path):
        env = fixed_env(self.root, step.env)
        with open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb") as stdin:
            r = run(prefix + step.argv, env=env, cwd=self.cwd, stdin=stdin, timeout=60)
        rb = self.root.encode()
        return r, r.out_bytes.replace(rb, PLACEHOLDER), r.err_bytes.replace(rb, PLACEHOLDER)


def run_case(case, base, steps_b=None, profiled=True):
    """Runs case's steps on side A plain and (steps_b or the same steps) on side B under profwrap; returns
    (differences, report problems, broken: the plain run did not exit as the case says)."""
    cdir = os.path.join(base, case.name)
    os.makedirs(cdir)
    a, b = Side(cdir, "A", case), Side(cdir, "B", case)
    diffs, problems, broken = [], [], []
    steps_b = [s if isinstance(s, Step) else Step(s) for s in steps_b] if steps_b else case.steps
    for i, (sa, sb) in enumerate(zip(case.steps, steps_b)):
        what = "step %d %s" % (i + 1, short(" ".join(sa.argv), 70))
        stdin_path = None
        if sa.stdin is not None:
            stdin_path = os.path.join(cdir, "stdin%d" % i)
            with open(stdin_path, "wb") as f:
                f.write(sa.stdin)
        ra, outa, erra = a.run(sa, [], stdin_path)
        out = os.path.join(cdir, "OUT%d" % i)
        rb, outb, errb = b.run(sb, [PROFWRAP, "-q", "-o", out, "--"] if profiled else [], stdin_path)
        for side, data in (("plain.out", outa), ("plain.err", erra), ("profwrap.out", outb), ("profwrap.err", errb)):
            with open(os.path.join(cdir, "step%02d.%s" % (i + 1, side)), "wb") as f:
                f.write(data)
        if ra.rc != sa.rc:
            broken.append("%s: the plain run exited %r, the case expects %r\n%s" % (what, ra.rc, sa.rc, ra.describe()))
        # profwrap exits 128+N for a target that a signal N that dumps core ended; subprocess says -N
        rb_rc = -(rb.rc - 128) if ra.rc < 0 and rb.rc > 128 else rb.rc
        if ra.rc != rb_rc:
            diffs.append("%s: exit status differs: plain %r, profwrap %r (stderr: %r)" % (what, ra.rc, rb.rc, errb[-300:]))
        if outa != outb:
            diffs.append("%s: stdout differs: %s" % (what, first_difference(outa, outb)))
        if erra != errb:
            diffs.append("%s: stderr differs: %s" % (what, first_difference(erra, errb)))
        if not profiled:
            continue
        rep_path = os.path.join(out, "rank0.json")
        if not os.path.exists(rep_path):
            problems.append("%s: no %s" % (what, rep_path))
            continue
        rep = load_report(out)
        if not rep.get("processes"):
            problems.append("%s: rank0.json names no process" % what)
        if sb.check:
            problems += ["%s: %s" % (what, m) for m in sb.check(rep, {"root": b.root, "cwd": b.cwd})]
    diffs += ["tree: " + d for d in compare_trees(snapshot(a.root, case), snapshot(b.root, case))]
    return diffs, problems, broken


def missing_programs(case):
    return [p for p in case.needs if not shutil.which(p, path=SEARCH_PATH)]


def test():
    base = os.path.realpath(tmpdir("real-"))
    plain_only = os.environ.get("REAL_PROGRAMS_PLAIN") == "1"
    only = [n for n in os.environ.get("REAL_PROGRAMS_CASES", "").split(",") if n]
    t0 = time.monotonic()

    failures = []
    if not only:
        for word, case, steps_b in CONTROLS:
            if missing_programs(case):
                continue
            diffs, _, broken = run_case(case, base, steps_b)
            if broken or not any(word in d for d in diffs):
                failures.append("control %s: expected a difference naming %r, got %r %r" % (case.name, word, diffs, broken))
            elif os.environ.get("PROFWRAP_KEEP") != "1":
                shutil.rmtree(os.path.join(base, case.name), ignore_errors=True)
        note("controls: %d, %.1f s" % (len(CONTROLS), time.monotonic() - t0))

    cases = [c for c in CASES + KNOWN_DIFFERENCES if not only or c.name in only]
    check(cases, "no case named %r", only)
    ran, skipped, steps = 0, [], 0
    for case in cases:
        missing = missing_programs(case)
        if missing:
            skipped.append(case.name)
            note("skip %s: %s not found in %s" % (case.name, ", ".join(missing), SEARCH_PATH))
            continue
        c0 = time.monotonic()
        diffs, problems, broken = run_case(case, base, profiled=not plain_only)
        ran += 1
        steps += len(case.steps)
        known = ""
        if case.known and not broken and not problems:
            key, words, why = case.known
            if diffs and all(any(w in d for w in words) for d in diffs):
                known = "KNOWN DIFFERENCE (%s): %s\n  seen: %s" % (key, why, "\n  seen: ".join(diffs))
                diffs = []
            elif not diffs:
                known = "known difference %s not seen: fixed? (then drop the mark of case %s)" % (key, case.name)
        found = broken + diffs + problems
        note("%-24s %2d steps %5.2f s  %s" % (case.name, len(case.steps), time.monotonic() - c0,
                                              "DIFFERENT" if found else "known" if known else "ok"))
        if known:
            note(known)
        failures += ["%s: %s" % (case.name, m) for m in found[:MAX_SHOWN]]
        if len(found) > MAX_SHOWN:
            failures.append("%s: ... and %d more" % (case.name, len(found) - MAX_SHOWN))
        if found:
            failures.append("%s: its trees, outputs (step*.plain.out, ...) and reports are in %s" % (
                case.name, os.path.join(base, case.name)))
        elif os.environ.get("PROFWRAP_KEEP") != "1":
            shutil.rmtree(os.path.join(base, case.name), ignore_errors=True)
    note("%d of %d cases ran (%d program runs each side), %d skipped, %.1f s" % (
        ran, len(cases), steps, len(skipped), time.monotonic() - t0))
    if failures:
        raise Fail("%d differences:\n  %s" % (len(failures), "\n  ".join(failures)))
    check(ran >= MIN_SHARE_RUN * len(cases), "only %d of %d cases could run (missing programs: %s); install them "
          "(scripts/install-deps.sh)", ran, len(cases), ", ".join(skipped))


main(test)
