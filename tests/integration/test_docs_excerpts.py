"""The report excerpts of docs/*.md are what profwrap prints now: scripts/docs_excerpts.py --check runs the
bundled workloads each excerpt names (make demo's toy training loop, cuda_train, cuda_gpu_patterns input,
cuda_nvtx, py_stacks.py, four MPI ranks) and compares each document's excerpt with a new one, numbers, column
widths and which rows a table shows masked. It fails, naming the excerpt and showing both, when a title, a
table header, a sentence or the sections differ: `make docs` writes them again."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "docs_excerpts.py")


def test():
    fakes_dir()
    find_mpirun()
    env = {"PROFWRAP_BIN_DIR": BIN_DIR, "PROFWRAP_WORKLOADS": WORKLOADS, "PROFWRAP_FAKES": FAKES}
    r = run([sys.executable, SCRIPT, "--check"], extra_env=env, timeout=400)
    check_eq(r.rc, 0, "scripts/docs_excerpts.py --check\n" + r.describe())
    check("excerpts match" in r.out, "docs_excerpts.py --check says: %r", r.out)


if __name__ == "__main__":
    main(test)
