"""find on a tree of known shape: `find TREE -printf '%s'` stats every entry (fstatat relative to the directory
it reads) and lists every directory (fdopendir, readdir). Names are unique in the tree, so each one's row is
known however the path is written: every file is stat'ed once, every directory read to its end (its entries,
"." and "..", then the end of the listing), and the calls add up to at least one stat per entry."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

DIRS, FILES, SUBDIRS = 4, 25, 2


def make_tree(root):
    """Returns {file name: size}, {directory name: number of entries}."""
    files, dirs = {}, {os.path.basename(root): DIRS}
    os.mkdir(root)
    for d in range(DIRS):
        top = os.path.join(root, "dir-%d" % d)
        os.mkdir(top)
        dirs["dir-%d" % d] = FILES + SUBDIRS
        for i in range(FILES):
            name = "file-%d-%d" % (d, i)
            files[name] = os.path.getsize(write_file(os.path.join(top, name), d * 100 + i))
        for s in range(SUBDIRS):
            sub = os.path.join(top, "sub-%d-%d" % (d, s))
            os.mkdir(sub)
            dirs["sub-%d-%d" % (d, s)] = 1
            name = "leaf-%d-%d" % (d, s)
            files[name] = os.path.getsize(write_file(os.path.join(sub, name), 7))
    return files, dirs


def rows_named(rep, name):
    return [f for f in rep["files"] if f["path"] == name or f["path"].endswith("/" + name)]


def test():
    root = os.path.join(tmpdir("find-"), "tree-root")
    files, dirs = make_tree(root)
    r, rep = profile(["find", root, "-printf", "%s\\n"], "OUT")
    check_eq(len(r.out.splitlines()), len(files) + len(dirs), "entries find printed")

    for name in files:
        rows = rows_named(rep, name)
        check_eq(len(rows), 1, "rows for %s" % name)
        check_eq(rows[0]["stats"], 1, "stats of %s" % name)
    for name, entries in dirs.items():
        listed = [f for f in rows_named(rep, name) if f["dir_reads"]]
        check_eq(len(listed), 1, "listed rows for directory %s: %r" % (name, rows_named(rep, name)))
        check_eq(listed[0]["dir_reads"], entries + 3, "readdir calls on directory %s" % name)

    stats = sum(count(rep, "meta", n) for n in ("stat", "lstat", "fstat", "fstatat", "statx"))
    check(stats >= len(files) + len(dirs), "stat-family calls %d for %d entries\n%s", stats, len(files) + len(dirs),
          describe_calls(rep))
    check_eq(count(rep, "meta", "readdir"), sum(e + 3 for e in dirs.values()), "meta.readdir calls")
    check_eq(rep["dropped_events"], 0, "dropped_events")


main(test)
