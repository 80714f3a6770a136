"""One file, one row, however it was reached. `tar czf out.tgz src`, run in DIR: tar's child opens the archive as
"out.tgz" (relative to DIR) and hands it to gzip as its standard output, which gzip writes through the inherited
descriptor (named at start from /proc/self/fd: DIR/out.tgz); tar reads src/x through openat() on src's
descriptor. Files has one row DIR/out.tgz (the open and every byte of the archive) and one row DIR/src/x (the
bytes of the file), and no row named out.tgz or x. Before, the open and the writes were two rows, "out.tgz" and
DIR/out.tgz, and the read was "x"."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SIZE = 30000


def test():
    if not (shutil.which("tar") and shutil.which("gzip")):
        skip("tar or gzip is not installed")
    d = tmpdir("tar-")
    os.mkdir(os.path.join(d, "src"))
    write_file(os.path.join(d, "src", "x"), SIZE)
    r, rep = profile(["tar", "czf", "out.tgz", "src"], os.path.abspath("OUT"), cwd=d)
    archive, member = os.path.join(d, "out.tgz"), os.path.join(d, "src", "x")
    rows = {f["path"]: (f["opens"], f["write_bytes"], f["read_bytes"]) for f in rep["files"]
            if os.path.basename(f["path"]) in ("out.tgz", "x")}
    check_eq(rows, {archive: (1, os.path.getsize(archive), 0), member: (1, 0, SIZE)},
             "Files rows of the archive and of the member: (opens, written, read)")


main(test)
