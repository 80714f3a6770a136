"""Another user on the machine can neither read a profile nor inject records, and links planted in the output
directory are never written through (run as root: it creates a second user, pwtest-other, and removes it).

- While a job runs: the session base and session directories are 0700, the socket and the live status 0600,
  the target's segment in /dev/shm 0600 and root's (its name stays there until the collector has its last
  records), and the names carry 16 hex digits of nonce. The other user can list none of the directories,
  connect to nothing, read no segment; after the run no segment of the target is left.
- Injection, with the session directories made traversable (0711, by the test) and then the socket
  writable by all (0666, by the test): the other user's own preloaded process (claiming its own pid), and
  relays that hand over a real segment full of records claiming the relay's pid and then the target's,
  are each refused with one line saying why; so is root's own relay claiming the target's pid. The report
  holds exactly the target's process and figures.
- The output directory profwrap creates is 0700, raw/ 0700, every file in both 0600; an existing output
  directory keeps its mode, but the other user can read none of its files nor list raw/.
- Links planted at the .tmp names, at rank0.txt and summary names (preload-only mode, where nothing is
  cleared first), at .profwrap-merge.lock and at raw/ point at files elsewhere: those stay unchanged; the
  .tmp and report names become regular files, the lock and raw/ links are refused with one line."""
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

USER = "pwtest-other"
DATA_SIZE = 12345
FORGED_SIZE = 54321

# Run as the other user: tries each (kind, path) and prints {path: "ok" or the errno name}.
PROBE = r"""
import errno, json, os, socket, sys
res = {}
for kind, path in json.loads(sys.argv[1]):
    try:
        if kind == "list":
            os.listdir(path)
        elif kind == "read":
            with open(path, "rb") as f:
                f.read(1)
        else:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.close()
        res[kind + " " + path] = "ok"
    except OSError as e:
        res[kind + " " + path] = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps(res))
"""

# A relay: lets a real preloaded `cat FORGED` make a segment full of records (its hello comes to the relay's
# own socket), waits for cat to end, writes the claimed pid into the segment's header, and hands the segment
# to the collector's socket with a hello claiming that pid. Prints {"connect": ..., "refused": ..., "pid": the
# pid claimed, "self": its own}: refused when the collector closed the connection at once.
RELAY = r"""
import errno, json, mmap, os, socket, struct, subprocess, sys
lib, target, claim, forged, rdir, pid_off = sys.argv[1:7]
pid_off = int(pid_off)
path = os.path.join(rdir, "sock")
ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ls.bind(path)
ls.listen(1)
ls.settimeout(20)
env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": lib, "PROFWRAP_SESSION_DIR": rdir}
cat = subprocess.Popen(["cat", forged], env=env, stdout=subprocess.DEVNULL)
conn, _ = ls.accept()
msg, fds, _, _ = socket.recv_fds(conn, 4096, 1)
cat.wait()
conn.close()
pid = os.getpid() if claim == "self" else int(claim)
with mmap.mmap(fds[0], 4096) as m:
    m[pid_off:pid_off + 4] = struct.pack("<i", pid)
hello = msg[:8] + struct.pack("<i", pid) + msg[12:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(target)
except OSError as e:
    print(json.dumps({"connect": errno.errorcode.get(e.errno), "pid": pid, "self": os.getpid()}))
    sys.exit(0)
socket.send_fds(s, [hello], fds)
s.settimeout(4)
try:
    refused = s.recv(1) == b""
except socket.timeout:
    refused = False
print(json.dumps({"connect": "ok", "refused": refused, "pid": pid, "self": os.getpid()}))
"""

# The target: waits for GO, reads DATA, exits 0.
TARGET = r"""
import os, sys, time
while not os.path.exists(sys.argv[1]):
    time.sleep(0.02)
with open(sys.argv[2], "rb") as f:
    n = len(f.read())
print(n)
"""


class Other:
    """The second user, created for the test and removed at its end."""

    def __init__(self):
        if subprocess.run(["id", USER], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            r = run(["useradd", "-M", "-r", "-s", "/usr/sbin/nologin", USER])
            check_eq(r.rc, 0, "useradd\n" + r.describe())
        pw = pwd.getpwnam(USER)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid

    def argv(self, args):
        return ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid, "--clear-groups", "--"] + list(args)

    def run(self, args, **kw):
        return run(self.argv(args), env={"PATH": "/usr/bin:/bin"}, **kw)

    def probe(self, attempts):
        r = self.run([PYTHON, "-c", PROBE, json.dumps(attempts)])
        check_eq(r.rc, 0, "the probe as %s\n%s" % (USER, r.describe()))
        return json.loads(r.out)

    def remove(self):
        # every process of the user was started by run(), which waits for it (or kills its group)
        r = run(["userdel", USER])
        if r.rc != 0:
            note("note: userdel %s failed (the next run takes the user as it is): %s" % (USER, r.err.strip()))


def mode(path):
    st = os.lstat(path)
    return stat.S_IMODE(st.st_mode), st.st_uid


def check_private_tree(out, what):
    """Every file in out and out/raw is 0600 and root's; raw/ is 0700."""
    check_eq(mode(os.path.join(out, "raw")), (0o700, 0), "mode and owner of %s/raw" % what)
    files = 0
    for d in (out, os.path.join(out, "raw")):
        for name in os.listdir(d):
            p = os.path.join(d, name)
            if os.path.isdir(p) and not os.path.islink(p):
                continue
            check(stat.S_ISREG(os.lstat(p).st_mode), "%s is not a regular file", p)
            check_eq(mode(p), (0o600, 0), "mode and owner of %s" % p)
            files += 1
    check(files >= 7, "%s holds %d files", what, files)


def denied(res):
    """The probe results that are not refusals."""
    return {k: v for k, v in res.items() if v not in ("EACCES", "EPERM")}


def pid_offset(work):
    """offsetof(struct pw_seg_header, pid), from the header itself."""
    source = ('#define _GNU_SOURCE\n#include <stddef.h>\n#include <stdio.h>\n#include "%s/common/pw_ring.h"\n'
              'int main(void) { printf("%%zu\\n", offsetof(struct pw_seg_header, pid)); return 0; }\n' % REPO)
    prog = build_c("pid_offset", source, cflags=["-std=c11"], directory=work)
    return int(subprocess.run([prog], stdout=subprocess.PIPE, check=True).stdout)


def wait_segment(tpid):
    """The path in /dev/shm of the target's mapped segment."""
    def find():
        try:
            with open("/proc/%d/maps" % tpid) as f:
                for line in f:
                    m = re.search(r" (/dev/shm/profwrap\.\S+)$", line.rstrip("\n"))
                    if m:
                        return m.group(1)
        except OSError:
            pass
        return None
    found = wait_for(find, 10)
    check(found, "the target %d never mapped a segment", tpid)
    return found


def test_live_job(other, work, lib, data, forged, off):
    xdg = os.path.join(work, "xdg")
    os.mkdir(xdg)
    os.chmod(xdg, 0o711)
    base = os.path.join(xdg, "profwrap")
    out = os.path.join(work, "out-new")
    go = os.path.join(work, "go")
    env = dict(os.environ, XDG_RUNTIME_DIR=xdg)
    p = subprocess.Popen([PROFWRAP, "-o", out, "--", PYTHON, "-c", TARGET, go, data], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        sdirs = wait_for(lambda: os.path.isdir(base) and [n for n in os.listdir(base) if n.startswith("s-")], 10)
        check(sdirs, "no session directory in %s", base)
        sdir = os.path.join(base, sdirs[0])
        sock = os.path.join(sdir, "sock")
        check(wait_for(lambda: os.path.exists(sock) and os.path.exists(os.path.join(sdir, "status")), 10),
              "no socket or live status in %s", sdir)
        kids = wait_for(lambda: children_of(p.pid) and [k for k in children_of(p.pid)
                                                        if os.path.basename(proc_exe(k)).startswith("python")], 10)
        check(kids, "the target did not start")
        tpid = kids[0]
        shm = wait_segment(tpid)

        # What is made, and how.
        check(re.fullmatch(r"s-%d-[0-9a-f]{16}" % p.pid, sdirs[0]), "session directory name %r", sdirs[0])
        check(re.fullmatch(r"/dev/shm/profwrap\.0\.%d\.[0-9a-f]{16}" % tpid, shm), "segment name %r", shm)
        check_eq(mode(base), (0o700, 0), "mode and owner of the session base")
        check_eq(mode(sdir), (0o700, 0), "mode and owner of the session directory")
        check(stat.S_ISSOCK(os.lstat(sock).st_mode), "%s is not a socket", sock)
        check_eq(mode(sock), (0o600, 0), "mode and owner of the socket")
        check_eq(mode(os.path.join(sdir, "status")), (0o600, 0), "mode and owner of the live status")
        check_eq(mode(shm), (0o600, 0), "mode and owner of the target's segment")

        res = other.probe([["list", base], ["list", sdir], ["connect", sock], ["read", shm],
                           ["list", out], ["list", out + "/raw"]])
        check_eq(denied(res), {}, "what %s could do while the job ran" % USER)

        # Injection: the directories traversable, the socket still 0600.
        os.chmod(base, 0o711)
        os.chmod(sdir, 0o711)
        res = other.probe([["list", sdir], ["connect", sock]])
        check_eq(denied(res), {}, "what %s could do with the session directories 0711" % USER)
        forger = ["env", "LD_PRELOAD=" + lib, "PROFWRAP_SESSION_DIR=" + sdir, "cat", forged]
        r = other.run(forger)
        check_eq((r.rc, len(r.out_bytes), r.err), (0, FORGED_SIZE, ""), "cat as %s, unable to connect" % USER)

        # The socket writable by all: now the hellos reach the collector, which must refuse them.
        os.chmod(sock, 0o666)
        r = other.run(forger)
        check_eq((r.rc, len(r.out_bytes), r.err), (0, FORGED_SIZE, ""), "cat as %s, connected" % USER)
        other_relay_dir = os.path.join(work, "other-relay")
        os.mkdir(other_relay_dir, 0o700)
        os.chown(other_relay_dir, other.uid, other.gid)
        relays = []
        for claim in ("self", str(tpid)):
            if os.path.exists(os.path.join(other_relay_dir, "sock")):
                os.unlink(os.path.join(other_relay_dir, "sock"))
            r = other.run([PYTHON, "-c", RELAY, lib, sock, claim, forged, other_relay_dir, str(off)])
            check_eq(r.rc, 0, "the relay as %s claiming %s\n%s" % (USER, claim, r.describe()))
            relays.append(("other", json.loads(r.out)))
        root_relay_dir = os.path.join(work, "root-relay")
        os.mkdir(root_relay_dir, 0o700)
        r = run([PYTHON, "-c", RELAY, lib, sock, str(tpid), forged, root_relay_dir, str(off)])
        check_eq(r.rc, 0, "the relay as root claiming the target's pid\n" + r.describe())
        relays.append(("root", json.loads(r.out)))
        for who, res in relays:
            check_eq((res["connect"], res["refused"]), ("ok", True),
                     "relay as %s claiming pid %d: connected, refused" % (who, res["pid"]))

        with open(go, "w"):
            pass
        out_b, err_b = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            kill_group(p.pid)
            p.wait()
    err = err_b.decode("utf-8", "replace")
    ctx = "\n--- profwrap's stderr ---\n" + err
    check_eq((p.returncode, out_b), (0, b"%d\n" % DATA_SIZE), "profwrap's exit status and the target's output" + ctx)
    refusals = [line for line in err.splitlines() if "refused" in line]
    want = [
        re.compile(r"profwrap-collector: refused pid (\d+): its connection is not from this user \(uid %d\)$"
                   % other.uid),
        re.compile(r"profwrap-collector: refused pid %d: its connection is not from this user \(uid %d\)$"
                   % (relays[0][1]["pid"], other.uid)),
        re.compile(r"profwrap-collector: refused pid %d: its connection is not from this user \(uid %d\)$"
                   % (tpid, other.uid)),
        re.compile(r"profwrap-collector: refused pid %d: its connection is from pid %d$"
                   % (tpid, relays[2][1]["self"])),
    ]
    check_eq(len(refusals), len(want), "refusals on stderr" + ctx)
    for line, pattern in zip(refusals, want):
        check(pattern.match(line), "refusal %r, expected %r%s", line, pattern.pattern, ctx)
    check_eq(len(err.splitlines()), len(want) + 1, "stderr lines (the refusals and where the reports are)" + ctx)

    rep = load_report(out)
    check_eq([(q["pid"], q["how"], q["exit_code"]) for q in rep["processes"]], [(tpid, "exited", 0)],
             "processes in the report (the target alone)\n" + describe_processes(rep))
    check_eq(need_file(rep, data)["read_bytes"], DATA_SIZE, "read_bytes of the target's data")
    check(file_entry(rep, forged) is None, "the forged file is in the report: %r", file_entry(rep, forged))
    check_eq(len([n for n in os.listdir(os.path.join(out, "raw")) if n.endswith(".pwt")]), 1, "raw traces")
    check_eq([n for n in os.listdir("/dev/shm") if n.startswith("profwrap.0.%d." % tpid)], [],
             "segments of the target left in /dev/shm")

    check_eq(mode(out), (0o700, 0), "mode and owner of the output directory profwrap made")
    check_private_tree(out, "out-new")
    res = other.probe([["list", out], ["read", os.path.join(out, "rank0.json")]])
    check_eq(denied(res), {}, "what %s could do with the output directory" % USER)
    check(not os.path.exists(sdir), "the session directory is left")


def test_squatted_base(other, work, data):
    """Another user took /tmp/profwrap-<uid> first (XDG_RUNTIME_DIR unset, as under cron or ssh without
    systemd): the sessions go to $HOME/.profwrap instead, and profwrap runs and reports; before, it refused
    to run. Here root takes the name of pwtest-other's directory, and pwtest-other runs profwrap."""
    squat = "/tmp/profwrap-%d" % other.uid
    shutil.rmtree(squat, ignore_errors=True)
    os.mkdir(squat)
    os.chmod(squat, 0o755)
    try:
        home, bin_dir, out = (os.path.join(work, d) for d in ("home-other", "bin-other", "out-other"))
        os.mkdir(bin_dir)
        for part in (PROFWRAP, LIB, os.path.join(BIN_DIR, "profwrap-collector")):
            shutil.copy(part, bin_dir)
        os.chmod(bin_dir, 0o755)
        os.mkdir(home)
        os.chown(home, other.uid, other.gid)
        os.mkdir(out)
        os.chown(out, other.uid, other.gid)
        r = run(other.argv([os.path.join(bin_dir, "profwrap"), "-q", "-o", out, "--", "cat", data]),
                env={"PATH": "/usr/bin:/bin", "HOME": home})
        check_eq((r.rc, len(r.out_bytes)), (0, DATA_SIZE), "profwrap as %s beside a squatted /tmp/profwrap-%d\n%s"
                 % (USER, other.uid, r.describe()))
        rep = load_report(out)
        check_eq(nbytes(rep, "io", "read") >= DATA_SIZE, True, "bytes cat read in the report")
        check_eq(mode(os.path.join(home, ".profwrap")), (0o700, other.uid), "mode and owner of $HOME/.profwrap")
        check_eq(os.listdir(squat), [], "what went into the squatted directory")
    finally:
        shutil.rmtree(squat, ignore_errors=True)


def test_existing_output(other, work, data):
    """An output directory that exists keeps its mode; its files are private anyway."""
    out = os.path.join(work, "out-old")
    os.mkdir(out)
    os.chmod(out, 0o755)
    profile(["cat", data], out)
    check_eq(mode(out), (0o755, 0), "mode of an existing output directory")
    check_private_tree(out, "out-old")
    names = sorted(os.listdir(out))
    attempts = [["read", os.path.join(out, n)] for n in names if n != "raw"] + [["list", os.path.join(out, "raw")]]
    res = other.probe(attempts + [["list", out]])
    check_eq(res.pop("list " + out), "ok", "listing the 0755 output directory")
    check_eq(denied(res), {}, "what %s could do with the files of a 0755 output directory" % USER)


def plant(out, links, victim_dir):
    """Links in out named as links says, each to a file of its own in victim_dir. Returns {victim: text}."""
    victims = {}
    for name in links:
        v = os.path.join(victim_dir, "victim-" + name.replace("/", "_").lstrip("."))
        with open(v, "w") as f:
            f.write("victim of %s\n" % name)
        os.symlink(v, os.path.join(out, name))
        victims[v] = "victim of %s\n" % name
    return victims


def check_victims(victims, what):
    for v, text in victims.items():
        check_eq(open(v).read(), text, "%s after %s" % (v, what))
        check_eq(mode(v), (0o644, 0), "mode of %s after %s" % (v, what))


def test_links(work, data):
    victim_dir = os.path.join(work, "victims")
    os.mkdir(victim_dir)
    # (rank0.folded is written only when there are stacks: not one of them)
    tmps = ["rank0.txt.tmp", "rank0.json.tmp", "rank0.trace.json.tmp", "rank0.html.tmp", "summary.txt.tmp",
            "summary.json.tmp"]

    # CLI with -f: the .tmp names (which -f does not clear) are replaced, never followed.
    out = os.path.join(work, "out-links")
    os.mkdir(out)
    victims = plant(out, tmps + ["rank0.txt"], victim_dir)
    profile(["cat", data], out, opts=["-f"])
    check_victims(victims, "a run into %s" % out)
    for name in tmps:
        check(not os.path.lexists(os.path.join(out, name)), "%s is left in the output directory", name)
    check_private_tree(out, "out-links")

    # Preload-only mode clears nothing first: the reports' own names are links too, replaced by the renames.
    out = os.path.join(work, "out-preload")
    os.mkdir(out)
    victims = plant(out, tmps + ["rank0.txt", "rank0.json", "rank0.trace.json", "rank0.html", "summary.txt",
                                 "summary.json"], victim_dir)
    try:
        r, rep = run_preload_only(["cat", data], out)
    finally:
        remove_preload_session(out)
    check_eq((r.rc, len(r.out_bytes), r.err), (0, DATA_SIZE, ""), "cat in preload-only mode")
    check_eq(need_file(rep, data)["read_bytes"], DATA_SIZE, "read_bytes in preload-only mode")
    check_victims(victims, "a preload-only run into %s" % out)
    check_private_tree(out, "out-preload")

    # The merge lock: refused, with one line; the rank's reports are there, the summary is not.
    out = os.path.join(work, "out-lock")
    os.mkdir(out)
    victims = plant(out, [".profwrap-merge.lock"], victim_dir)
    r = profwrap(["-q", "-f", "-o", out, "--", "cat", data])
    check_victims(victims, "a run with a link at the merge lock")
    check_eq(r.rc, 0, "exit status with a link at the merge lock\n" + r.describe())
    check(("%s/.profwrap-merge.lock is a symbolic link; remove it" % out) in r.err,
          "the lock's refusal is not said\n" + r.describe())
    check(os.path.exists(os.path.join(out, "rank0.json")), "no rank0.json with a link at the merge lock")
    check(not os.path.exists(os.path.join(out, "summary.txt")), "a summary.txt with a link at the merge lock")

    # raw/ a link to a directory (whose .pwt and session files -f would remove) or to a file: refused at once.
    for kind in ("dir", "file"):
        out = os.path.join(work, "out-raw-" + kind)
        os.mkdir(out)
        target = os.path.join(victim_dir, "raw-" + kind)
        if kind == "dir":
            os.mkdir(target)
            for name in ("0-host-1.pwt", "session.txt"):
                with open(os.path.join(target, name), "w") as f:
                    f.write("keep\n")
        else:
            with open(target, "w") as f:
                f.write("keep\n")
        os.symlink(target, os.path.join(out, "raw"))
        marker = os.path.join(work, "marker-raw-" + kind)
        r = profwrap(["-q", "-f", "-o", out, "--", "touch", marker])
        ctx = "raw/ a link to a %s\n%s" % (kind, r.describe())
        check_eq(r.rc, 2, "exit status, " + ctx)
        check_eq(r.err, "profwrap: %s/raw is not a directory (a symbolic link); remove it\n" % out, "stderr, " + ctx)
        check(not os.path.exists(marker), "the target ran, " + ctx)
        if kind == "dir":
            check_eq(sorted(os.listdir(target)), ["0-host-1.pwt", "session.txt"], "the linked directory, " + ctx)
        else:
            check_eq(open(target).read(), "keep\n", "the linked file, " + ctx)


def test():
    if os.geteuid() != 0:
        skip("needs root: it creates a second user")
    for tool in ("useradd", "userdel", "setpriv"):
        if not shutil.which(tool):
            skip("no %s" % tool)
    # Everything the other user may reach lives in a directory of its own under /tmp (the test's working
    # directory is private to root).
    work = tempfile.mkdtemp(prefix="pwtest-security-", dir="/tmp")
    other = None
    try:
        os.chmod(work, 0o755)
        other = Other()
        os.makedirs(os.path.join(work, "lib"))
        lib = os.path.join(work, "lib", "libprofwrap.so")
        shutil.copy(LIB, lib)
        os.chmod(lib, 0o755)
        data = write_file(os.path.join(work, "data.bin"), DATA_SIZE)
        forged = write_file(os.path.join(work, "forged.bin"), FORGED_SIZE, seed=7)
        os.chmod(data, 0o644)
        os.chmod(forged, 0o644)
        off = pid_offset(work)
        test_live_job(other, work, lib, data, forged, off)
        test_squatted_base(other, work, data)
        test_existing_output(other, work, data)
        test_links(work, data)
    finally:
        if other:
            other.remove()
        shutil.rmtree(work, ignore_errors=True)


main(test)
