#!/usr/bin/env python3
"""The report excerpts of docs/*.md, made by running bundled workloads under the built profwrap, so that
the documents show what the code prints now (`make docs` runs this).

In a document an excerpt is an indented block between two comment lines:

    <!-- excerpt NAME: how it was made -->
        ...the excerpt...
    <!-- /excerpt -->

    python3 scripts/docs_excerpts.py            # write every excerpt into its document
    python3 scripts/docs_excerpts.py --check    # exit 1 when a document's excerpt differs from a new run's

An excerpt is chosen sections of a report (a section: the lines from its title to the next blank line; a
table keeps its first ROWS rows, then "..."). --check compares the documents' excerpts with new ones after
masking what varies from run to run: every number (with its unit: 980 us is 1.02 ms in another run), the widths of table columns and rules, which rows a
table shows (the row count stays), the findings after the first (a finding near its threshold comes and goes),
the "... N more" lines, which calls a list of calls names ("read 106 ms, write 9 us") and how many ranks a list
of ranks names, and where a paragraph's lines break; the titles, the table headers, the sentences and the order of sections must be the
same. Needs the fake CUDA libraries (build/fakes) and OpenMPI's mpirun for every excerpt; run from
the top of the tree after `make`."""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
WORKLOADS = os.environ.get("PROFWRAP_WORKLOADS", os.path.join(ROOT, "build", "workloads"))
FAKES = os.environ.get("PROFWRAP_FAKES", os.path.join(ROOT, "build", "fakes"))
PROFWRAP = os.path.join(os.environ.get("PROFWRAP_BIN_DIR", ROOT), "profwrap")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}

# NAME: (document, command after `profwrap -q -o OUT`, report file, section titles, rows per table)
# "{w}" is the workloads' directory, "{py}" the Python interpreter, "{data}" a scratch directory.
EXCERPTS = {
    "demo-rank0": ("reports.md", ["--", "{py}", "tests/workloads/toy_train.py", "{data}", "--epochs", "2"],
                   "rank0.txt", ["Command:", "What to fix first", "Calls", "Files"], 6),
    "gpu-calls": ("gpu.md", ["--trace=cudart,cublas,cublaslt,cudnn,nccl", "--", "{w}/cuda_train"], "rank0.txt",
                  ["GPU", "CUDA API summary", "Kernel launches", "GEMM shapes", "Collectives",
                   "Memory operations", "Device allocations"], 2),
    "gpu-findings": ("gpu.md", ["--", "{w}/cuda_gpu_patterns", "input"], "rank0.txt", ["What to fix first"], 0),
    "phases": ("phases.md", ["--", "{w}/cuda_nvtx", "ranges", "{data}/nvtx.json", "20"], "rank0.txt", ["Phases"],
               8),
    "call-sites": ("stacks.md", ["--", "{py}", "tests/workloads/py_stacks.py", "main", "3", "3"], "rank0.txt",
                   ["Top call sites"], 4),
    "summary": ("distributed.md", ["--", "{mpirun}", "-n", "4", "{w}/mpi_ranks", "--iters", "200", "--slow-rank",
                                   "2", "--delay-ms", "40"], "summary.txt", ["profwrap summary", "Straggler",
                                                                             "Collective skew"], 4),
}


def python():
    return os.path.realpath(sys.executable)


def mpirun():
    found = shutil.which("mpirun")
    if not found:
        sys.exit("docs_excerpts: mpirun not found (make deps installs openmpi-bin)")
    return [found, "--oversubscribe"]


def data_dir():
    """The workloads' data: one path for every run, so that the excerpts name it alike."""
    return os.path.join(tempfile.gettempdir(), "profwrap-docs-data")


def run_report(name, scratch):
    _, args, report, _, _ = EXCERPTS[name]
    out = os.path.join(scratch, name)
    cmd = []
    for a in args:
        if a == "{mpirun}":
            cmd += mpirun()
        else:
            cmd.append(a.replace("{w}", os.path.relpath(WORKLOADS, ROOT)).replace("{py}", python())
                       .replace("{data}", data_dir()))
    os.makedirs(data_dir(), exist_ok=True)
    env = dict(os.environ, LD_LIBRARY_PATH=FAKES, **MPI_ENV)
    r = subprocess.run([PROFWRAP, "-q", "-f", "-o", out] + cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    if r.returncode != 0:
        sys.exit("docs_excerpts: %s: profwrap %s exited %d: %s" % (name, " ".join(cmd), r.returncode, r.stderr))
    with open(os.path.join(out, report)) as f:
        return f.read()


def sections(text):
    """The report's sections: runs of lines between blank lines."""
    blocks, cur = [], []
    for line in text.splitlines():
        if line.strip():
            cur.append(line.rstrip())
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    return blocks


def trim_tables(block, rows):
    """A section with each table's data rows cut to the first rows (then "..."): a data row is a "|" line
    after the table's header row and its rule."""
    out, seen_header, shown, cut = [], False, 0, False
    for line in block:
        if line.startswith("|") or line.lstrip().startswith("|"):
            if not seen_header:
                seen_header = True
                out.append(line)
                continue
            if re.match(r"^\s*\|\s*Total\b", line):  # a table's total row stays
                out.append(line)
                continue
            if shown < rows:
                out.append(line)
                shown += 1
            elif not cut:
                out.append(re.match(r"^\s*", line).group(0) + "...")
                cut = True
            continue
        if re.match(r"^\s*-{3,}\s*$", line):
            if cut or (seen_header and shown >= rows and rows):
                continue
            out.append(line)
            continue
        if not line.startswith(" "):
            seen_header, shown, cut = False, 0, False
        out.append(line)
    return out


def excerpt(name, text):
    _, _, _, titles, rows = EXCERPTS[name]
    chosen = []
    for title in titles:
        for block in sections(text):
            head = block[0].strip()
            if head == title or head.startswith((title + " (", title + ":")) or (title.endswith(":") and
                                                                              head.startswith(title)):
                chosen.append(trim_tables(block, rows) if rows else block)
                break
        else:
            sys.exit("docs_excerpts: %s: no section %r in the report" % (name, title))
    host = socket.gethostname()
    lines = []
    for i, block in enumerate(chosen):
        if i:
            lines.append("")
        lines += block
    workloads = os.path.relpath(WORKLOADS, ROOT)  # build-san/workloads under SAN: the excerpt says build/
    return [line.replace(python(), "python3").replace(data_dir(), "/tmp/data").replace(ROOT + "/", "")
            .replace(workloads + "/", "build/workloads/").replace(host, "node0") for line in lines]


MARK = re.compile(r"^<!-- excerpt ([a-z0-9-]+)(: .*)? -->$")


def documents():
    """{document: its lines} of docs/*.md with excerpts."""
    docs = {}
    for name in sorted(os.listdir(os.path.join(ROOT, "docs"))):
        if name.endswith(".md"):
            with open(os.path.join(ROOT, "docs", name)) as f:
                lines = f.read().split("\n")
            if any(MARK.match(line) for line in lines):
                docs[name] = lines
    return docs


def blocks_of(lines):
    """(name, start, end) of each excerpt: its lines are lines[start:end] (indented 4)."""
    found = []
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if m:
            end = i + 1
            while end < len(lines) and lines[end] != "<!-- /excerpt -->":
                end += 1
            if end == len(lines):
                sys.exit("docs_excerpts: excerpt %s has no <!-- /excerpt -->" % m.group(1))
            found.append((m.group(1), i + 1, end))
    return found


def mask(lines):
    """What must not change from run to run: numbers, column widths and a table's rows masked, a
    paragraph's lines joined."""
    out = []
    for line in lines:
        s = line.strip()
        if re.match(r"^-{3,}$", s):
            s = "---"
        s = re.sub(r"\d[\d.,:]*( ?(ns|us|ms|s|B|kB|MB|GB|TB)\b)?", "#", s)  # a figure and its unit
        s = re.sub(r"\s+", " ", s)
        s = re.sub(r"rank # \(#\)(, rank # \(#\))*", "rank # (#)...", s)  # how many ranks a list names
        out.append(s)
    # a table's data rows: what they hold varies (which calls are slowest); their number does not. Which
    # findings beyond the first fire, and whether a list has more rows than it shows, can vary too.
    shaped, in_table, findings = [], 0, 0
    for s in out:
        if re.match(r"^# [a-z_]+, #% of wall time", s):
            findings += 1
        elif not s:
            findings = 0
        if findings > 1 or re.match(r"^\.\.\. # more ", s):
            continue
        if s.startswith("|"):
            in_table += 1
            shaped.append(s if in_table == 1 or s.startswith("| Total") else "| row |")
        else:
            if s != "---":
                in_table = 0
            shaped.append(s)
    # a paragraph's line breaks move with the width of its figures: its lines are compared joined
    joined = []
    for s in shaped:
        text = s and not s.startswith("|") and s not in ("---", "...")
        if text and joined and joined[-1][0]:
            joined[-1] = (True, joined[-1][1] + " " + s)
        else:
            joined.append((text, s))
    out = []
    for _, s in joined:
        s = re.sub(r"# (ns|us|ms|s|B|kB|MB|GB|TB)\b", "#", s)  # a unit the line break had parted from its figure
        s = re.sub(r"[A-Za-z_.]+ #(, [A-Za-z_.]+ #)*", "CALLS #", s)  # "read #, write #": which calls, and how many
        out.append(s)
    return out


def main():
    check = "--check" in sys.argv[1:]
    docs = documents()
    wanted = {name for lines in docs.values() for name, _, _ in blocks_of(lines)}
    unknown = wanted - set(EXCERPTS)
    if unknown:
        sys.exit("docs_excerpts: unknown excerpts in docs/: %s" % ", ".join(sorted(unknown)))
    scratch = tempfile.mkdtemp(prefix="profwrap-docs-")
    made = {}
    try:
        for name in sorted(wanted):
            made[name] = ["    " + line if line else "" for line in excerpt(name, run_report(name, scratch))]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    differ = []
    for doc, lines in docs.items():
        for name, start, end in reversed(blocks_of(lines)):
            if check:
                if mask(lines[start:end]) != mask(made[name]):
                    differ.append("docs/%s: excerpt %s differs from what profwrap prints now:\n  was: %s\n  now: %s"
                                  % (doc, name, "\n       ".join(mask(lines[start:end])),
                                     "\n       ".join(mask(made[name]))))
            else:
                lines[start:end] = made[name]
        if not check:
            with open(os.path.join(ROOT, "docs", doc), "w") as f:
                f.write("\n".join(lines))
    if differ:
        print("\n".join(differ))
        print("docs_excerpts: run `make docs` and commit the documents")
        sys.exit(1)
    print("docs_excerpts: %d excerpts %s" % (len(made), "match" if check else "written"))


if __name__ == "__main__":
    main()
