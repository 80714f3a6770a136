"""rank<R>.html in a real browser: headless Chromium (Debian's chromium, which `make deps` installs; skipped
with the reason when none is installed) loads each page from disk with the network off, runs its script and
hands back the DOM it made (--dump-dom), which the checks read; any console message, or an error the page's
own handler caught (<html data-errors>), fails the test. A screenshot of each page goes into the test's
directory.

CPU: tests/workloads/cpu_spin split 1600 spins 3/4 of its CPU time under spin_major and 1/4 under spin_minor
(its own clock says how much each: the ground truth), sampled at 997 Hz. The CPU flame graph's two frames
have the widths of those shares' ratio within 10 %, and each frame's figure is what rank0.folded gives its
function (the sum of its lines, in us); the page opened at #zoom=cpu-svg:spin_minor shows spin_minor across
the whole width and hides spin_major. The bar chart of calls has one bar per call of the report, up to 15, in
the report's order.

GPU: two ranks of cuda_gpu_patterns overlap on the fake GPU: the timeline has a row per GPU of the report and
one per process, a red mark per idle gap of the report's gpu_gaps on that device, and a band with the 20 NVTX
"step" ranges; "What to fix first" lists the report's findings, each linking to a section the page has; the
kernel chart has the report's kernels with their counts; and the wait flame graph's root is the time of the
calls with stacks. summary.html has a row per rank with summary.json's figures, its straggler, and a skew
chart per collective domain compared."""
import html.parser
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

STEPS = 20


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise Skip("no Chromium installed (make deps installs Debian's chromium)")


def load(browser, page, fragment=""):
    """The DOM of page after its script ran, and Chromium's console lines."""
    url = "file://" + os.path.abspath(page) + fragment
    r = run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom", url], timeout=120)
    check_eq(r.rc, 0, "chromium --dump-dom %s\n%s" % (url, r.describe()))
    console = [line for line in r.err.splitlines() if ":CONSOLE" in line]
    check(not console, "%s: the console says:\n%s", url, "\n".join(console))
    dom = Dom()
    dom.feed(r.out)
    check("data-errors" not in dom.root_attrs, "%s: the page's script failed: %r", url,
          dom.root_attrs.get("data-errors"))
    return dom


def screenshot(browser, page, png):
    r = run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1300,2200",
             "--screenshot=" + os.path.abspath(png), "file://" + os.path.abspath(page)], timeout=120)
    check(r.rc == 0 and os.path.getsize(png) > 10000, "screenshot of %s\n%s", page, r.describe())


class Dom(html.parser.HTMLParser):
    """The elements of a page: tag, attributes, the ids of their open ancestors' sections and SVGs."""

    VOID = {"meta", "br", "rect", "line", "img", "input", "link"}

    def __init__(self):
        super().__init__()
        self.elements = []
        self.stack = []
        self.root_attrs = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.root_attrs = attrs
        inside = [a.get("id") for t, a in self.stack if a.get("id")]
        self.elements.append((tag, attrs, inside))
        if tag not in self.VOID:
            self.stack.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), [a.get("id") for t, a in self.stack if a.get("id")]))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def find(self, tag, cls=None, inside=None):
        return [a for t, a, ins in self.elements
                if t == tag and (cls is None or cls in (a.get("class") or "").split())
                and (inside is None or inside in ins)]

    def ids(self):
        return {a["id"] for t, a, ins in self.elements if a.get("id")}


def folded_us(path, function):
    """The us rank<R>.folded gives function: its lines' counts (a line counts once, however deep)."""
    total = 0
    with open(path) as f:
        for line in f:
            frames, count = line.rsplit(" ", 1)
            if any(fr == function or fr.startswith(function + " (") for fr in frames.split(";")):
                total += int(count)
    return total


def check_cpu(browser):
    r, rep = profile([workload("cpu_spin"), "split", "1600"], "CPU", opts=["--sample=997"])
    truth = json.loads(r.out.strip().splitlines()[-1])
    dom = load(browser, "CPU/rank0.html")
    screenshot(browser, "CPU/rank0.html", "cpu-rank0.png")
    frames = {}
    for g in dom.find("g", "fr", inside="cpu-svg"):
        frames.setdefault(g["data-n"], []).append(g)
    for name in ("spin_major", "spin_minor"):
        check_eq(len(frames.get(name, [])), 1, "frames named %s in the CPU flame graph" % name)
    major, minor = frames["spin_major"][0], frames["spin_minor"][0]
    want = truth["major_ns"] / truth["minor_ns"]
    got = float(major["data-w"]) / float(minor["data-w"])
    check(abs(got / want - 1) <= 0.10, "the widths of spin_major and spin_minor: ratio %.3f, the workload's CPU "
          "time %.3f (%s)", got, want, truth)
    for g in (major, minor):
        us = folded_us("CPU/rank0.folded", g["data-n"])
        check(abs(int(g["data-v"]) / 1000.0 - us) <= 2, "%s: %s ns in the flame graph, %d us in rank0.folded",
              g["data-n"], g["data-v"], us)
    root = [g for g in dom.find("g", "fr", inside="cpu-svg") if g["data-d"] == "0"]
    check_eq(len(root), 1, "roots of the CPU flame graph")
    check_eq(int(root[0]["data-v"]), rep["samples"]["cpu_ns"], "the CPU flame graph's root against samples.cpu_ns")

    zoomed = load(browser, "CPU/rank0.html", "#zoom=cpu-svg:spin_minor")
    shown = {}
    for g in zoomed.find("g", "fr", inside="cpu-svg"):
        shown.setdefault(g["data-n"], []).append("display: none" not in (g.get("style") or ""))
    check_eq(shown["spin_major"], [False], "spin_major shown when zoomed on spin_minor")
    check_eq(shown["spin_minor"], [True], "spin_minor shown when zoomed on it")
    minor_rects = [a for t, a, ins in zoomed.elements if t == "rect" and "cpu-svg" in ins]
    widths = [float(a["width"]) for a in minor_rects]
    check(max(widths) >= 1198, "the zoomed frame's width: %r", max(widths))

    calls = dom.find("div", "row", inside="calls")
    ranked = sorted((c for c in rep["calls"] if c["count"]), key=lambda c: (-c["total_ns"], -c["count"]))
    check_eq([c["data-name"] for c in calls], ["%s.%s" % (c["domain"], c["name"]) for c in ranked[:15]],
             "the calls chart's bars")
    check_eq([int(c["data-value"]) for c in calls], [c["total_ns"] for c in ranked[:15]],
             "the calls chart's figures")


def check_gpu(browser):
    profile_overlap_ranks("GPU", STEPS)
    linked = 0
    for rank in (0, 1):
        rep = load_report("GPU", rank)
        page = "GPU/rank%d.html" % rank
        dom = load(browser, page)
        screenshot(browser, page, "gpu-rank%d.png" % rank)
        what = "rank %d: " % rank
        gpus = dom.find("g", "gpu", inside="timeline")
        check_eq([int(g["data-device"]) for g in gpus], [g["device"] for g in rep["gpus"]], what + "GPU rows")
        gaps = dom.find("rect", "gap", inside="timeline")
        check_eq(sorted(int(g["data-ns"]) for g in gaps), sorted(g["duration_ns"] for g in rep["gpu_gaps"]),
                 what + "idle gap marks against gpu_gaps")
        procs = dom.find("g", "proc", inside="timeline")
        check_eq(sorted(int(p["data-pid"]) for p in procs), sorted(p["pid"] for p in rep["processes"]),
                 what + "process rows")
        phases = [a for t, a, ins in dom.elements if t == "rect" and "timeline" in ins and a.get("height") == "18"]
        check_eq(len(phases), STEPS, what + "phases in the band")
        findings = dom.find("li")
        check_eq([f.get("data-finding") for f in findings if f.get("data-finding")],
                 [f["id"] for f in rep["findings"]], what + "findings")
        links = [a["href"][1:] for a in dom.find("a") if a.get("href", "").startswith("#")]
        # the workload's sync_bound share sits near its 5 % threshold (5.2-11 % in runs here): a rank may
        # have no finding, and then no link
        check(bool(links) == bool(rep["findings"]) and set(links) <= dom.ids(),
              "%sfinding links %r for findings %r, sections %r", what, links, rep["findings"], dom.ids())
        linked += len(links)
    if not linked:
        note("neither rank had a finding this run: the findings' links were not exercised")
        kernels = dom.find("div", "row", inside="kernels")
        check_eq(sorted(int(k["data-value"]) for k in kernels), sorted(k["total_ns"] for k in rep["kernels"]),
                 what + "the kernels chart's figures")
        root = [g for g in dom.find("g", "fr", inside="waits-svg") if g["data-d"] == "0"]
        check_eq(len(root), 1, what + "roots of the wait flame graph")
        with_stacks = sum(c["total_ns"] for c in rep["callsites"])
        check(int(root[0]["data-v"]) >= with_stacks, "%sthe wait flame graph's root %s ns, call sites %d ns", what,
              root[0]["data-v"], with_stacks)


def check_summary(browser):
    """GPU/summary.html against GPU/summary.json: a row per rank with its figures, the straggler (none here),
    a skew chart per collective domain compared."""
    summary = load_json("GPU/summary.json")
    dom = load(browser, "GPU/summary.html")
    screenshot(browser, "GPU/summary.html", "gpu-summary.png")
    rows = dom.find("tr", "rank", inside="ranks")
    check_eq([int(r["data-rank"]) for r in rows], [r["rank"] for r in summary["ranks"]], "summary.html's rank rows")
    cells = dom.find("span", "cell", inside="ranks")
    figures = {"wall": "wall_ns", "GPU busy": "gpu_busy_ns", "compute kernels": "kernel_ns",
               "collectives": "collective_ns", "file I/O": "io_ns", "waits": "wait_ns", "main thread busy": "busy_ns"}
    check_eq(len(cells), len(figures) * len(rows), "summary.html's figure cells")
    for i, r in enumerate(summary["ranks"]):
        got = {c["data-figure"]: int(c["data-value"]) for c in cells[i * len(figures):(i + 1) * len(figures)]}
        check_eq(got, {label: r[key] for label, key in figures.items()}, "summary.html's rank %d" % r["rank"])
    straggler = dom.find("p", inside=None)
    marked = [p for p in straggler if p.get("id") == "straggler"]
    want = summary["straggler"] if summary["straggler"] is not None else -1
    check_eq([int(p["data-straggler"]) for p in marked], [want], "summary.html's straggler")
    check_eq(len(dom.find("svg", "skew")), sum(1 for d in summary["collective_skew"] if d.get("compared")),
             "summary.html's skew charts")


def test():
    browser = chromium()
    check_cpu(browser)
    check_gpu(browser)
    check_summary(browser)


if __name__ == "__main__":
    main(test)
