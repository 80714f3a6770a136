"""sh -c with a builtin, a subshell, a nested sh and an external command: every process and every exec'd
image appears, joined by pid, each with its own exit code; profwrap exits with the shell's status."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SCRIPT = 'true; (exit 3); sh -c "exit 5"; ls / >/dev/null; exit 7'


def test():
    ls = shutil.which("ls")
    if not shutil.which("sh") or not ls:
        skip("sh or ls not found")
    r, rep = profile(["sh", "-c", SCRIPT], "OUT", expect_rc=7)
    procs = processes(rep)
    ctx = "\nprocesses:\n" + describe_processes(rep)

    tops = [p for p in procs if p["argv"] == "sh -c " + SCRIPT and p["image"] == 0 and p["ppid"] == procs[0]["ppid"]]
    check_eq(len(tops), 1, "top shell processes" + ctx)
    top = tops[0]
    check_eq((top["how"], top["exit_code"], top["signal"]), ("exited", 7, 0), "top shell (how, exit_code, signal)" + ctx)

    # Children of the top shell, one entry per pid: its images in order.
    kids = {}
    for p in procs:
        if p["pid"] != top["pid"]:
            check_eq(p["ppid"], top["pid"], "ppid of pid %d" % p["pid"] + ctx)
            kids.setdefault(p["pid"], []).append(p)
    for images in kids.values():
        images.sort(key=lambda p: p["image"])
        check_eq([p["image"] for p in images], list(range(len(images))), "image numbers of a pid" + ctx)
        for p in images[:-1]:
            check_eq(p["how"], "exec", "how a replaced image ended" + ctx)
            check_eq(p["exit_code"], None, "exit_code of a replaced image" + ctx)
            check(p["exec_path"], "replaced image of pid %d has no exec_path%s", p["pid"], ctx)

    # The subshell (a fork running the shell's own code), the nested sh (vfork + exec of sh: recorded from the
    # exec) and ls (vfork + exec of ls): what each pid ended as.
    ends = sorted((images[-1]["argv"], images[-1]["how"], images[-1]["exit_code"], images[-1]["signal"],
                   [os.path.basename(p["exec_path"]) for p in images[:-1]]) for images in kids.values())
    expected = sorted([
        ("sh -c " + SCRIPT, "exited", 3, 0, []),
        ("sh -c exit 5", "exited", 5, 0, []),
        ("ls /", "exited", 0, 0, []),
    ])
    check_eq(ends, expected, "children: (argv of the last image, how, exit_code, signal, exec'd names)" + ctx)

    ls_img = [images[-1] for images in kids.values() if images[-1]["argv"] == "ls /"][0]
    check_eq(os.path.realpath(ls_img["exe"]), os.path.realpath(ls), "exe of the ls image")
    check_eq(len(procs), 1 + sum(len(i) for i in kids.values()), "processes[] entries" + ctx)
    check_eq(len(procs), 4, "processes[] entries (top, subshell, sh, ls)" + ctx)
    # Every fork the shells made is one of the children.
    forks = count(rep, "process", "fork") + count(rep, "process", "vfork") + count(rep, "process", "posix_spawn") + \
        count(rep, "process", "posix_spawnp")
    check_eq(forks, len(kids), "fork/vfork/posix_spawn calls vs child pids\n" + describe_calls(rep))


main(test)
