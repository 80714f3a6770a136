"""Stat-family and access calls name files by absolute path, as opens do. A Python program stats "f.txt" 30
times in DIR/a and 20 times in DIR/b (after os.chdir), 5 times as "a/f.txt" relative to a descriptor of DIR
(dir_fd), and checks access("f.txt") 7 times in DIR/b; then lists DIR/a through a relative path. Each f.txt is
its own row with exactly its own stats, and no row keeps a relative name. Before, the stat rows were "f.txt"
(50 stats and 7 accesses) and "a/f.txt" joined to DIR only when its descriptor's open was seen."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

PROGRAM = r"""
import os, sys
top = sys.argv[1]
os.chdir(os.path.join(top, "a"))
for _ in range(30):
    os.stat("f.txt")
os.chdir("../b")
for _ in range(20):
    os.stat("f.txt")
for _ in range(7):
    os.access("f.txt", os.R_OK)
fd = os.open(top, os.O_RDONLY)
for _ in range(5):
    os.stat("a/f.txt", dir_fd=fd)
os.close(fd)
print(len(os.listdir("../a")))
"""


def test():
    d = tmpdir("stat-")
    for sub, text in (("a", "x\n"), ("b", "yy\n")):
        os.mkdir(os.path.join(d, sub))
        with open(os.path.join(d, sub, "f.txt"), "w") as f:
            f.write(text)
    prog = os.path.join(d, "stats.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    r, rep = profile([sys.executable, "-I", "-S", prog, d], "OUT")
    check_eq(r.out, "1\n", "the program's output")
    a, b = os.path.join(d, "a", "f.txt"), os.path.join(d, "b", "f.txt")
    check_eq(need_file(rep, a)["stats"], 35, "stats of DIR/a/f.txt (30 after chdir, 5 relative to a dir_fd)")
    check_eq(need_file(rep, b)["stats"], 27, "stats of DIR/b/f.txt (20 stats and 7 accesses after chdir)")
    check_eq(need_file(rep, os.path.join(d, "a"))["opens"], 1, "opens of DIR/a (listed as ../a)")
    relative = [f["path"] for f in rep["files"] if not f["path"].startswith(("/", "pipe:", "socket:", "anon_inode:"))]
    check_eq(relative, [], "Files rows not named by an absolute path")


if __name__ == "__main__":
    main(test)
