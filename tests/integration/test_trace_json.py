"""rank0.trace.json: valid Chrome/Perfetto JSON (complete "X" events with ts/dur/pid/tid inside the run,
metadata naming every process); a run of ~500k calls stays under 100 MB, keeps at most 300000 calls and
says how many it folded, the two adding up to the calls recorded."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

MAX_KEPT = 300000
MAX_BYTES = 100 * 1000 * 1000


def check_trace(out, rep):
    path = os.path.join(out, "rank0.trace.json")
    size = os.path.getsize(path)
    check(size < MAX_BYTES, "%s is %d bytes, not under 100 MB", path, size)
    t = load_json(path)
    check(isinstance(t, dict) and isinstance(t.get("traceEvents"), list), "%s has no traceEvents list", path)
    ev = t["traceEvents"]
    other = t.get("otherData")
    check(isinstance(other, dict), "%s has no otherData object", path)
    span_us = (rep["end_ns"] - rep["start_ns"]) / 1000.0
    pids = {p["pid"] for p in rep["processes"]}
    xs = [e for e in ev if e.get("ph") == "X"]
    check(xs, "no X events in %s", path)
    for e in xs:
        for k in ("name", "ts", "dur", "pid", "tid"):
            check(k in e, "X event without %s: %r", k, e)
        check(isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)), "bad ts/dur: %r", e)
        check(e["dur"] >= 0 and e["ts"] >= 0, "negative ts or dur: %r", e)
        check(e["ts"] + e["dur"] <= span_us + 1.0, "event past the end of the run (%.3f us): %r", span_us, e)
        check(e["pid"] in pids, "X event of a pid not in rank0.json processes: %r", e)
    named = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    check_eq(set(named), pids, "pids named by process_name metadata")
    threads = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    check({(e["pid"], e["tid"]) for e in xs} <= threads, "X events on threads with no thread_name metadata")
    folded_slices = [e for e in xs if e.get("cat") == "profwrap" and e["name"].startswith("folded")]
    kept, folded = other.get("kept_events"), other.get("folded_events")
    check(isinstance(kept, int) and isinstance(folded, int), "otherData lacks kept_events/folded_events: %r", other)
    check_eq(kept + folded, rep["events"], "otherData kept_events + folded_events vs rank0.json events")
    check_eq(len(xs) - len(folded_slices), kept, "X events (not counting folded slices) vs kept_events")
    check_eq(sum(e["args"]["count"] for e in folded_slices), folded, "sum of folded slices' counts vs folded_events")
    check(kept <= MAX_KEPT, "kept_events %d > %d", kept, MAX_KEPT)
    check_eq(other.get("skipped_records"), 0, "otherData skipped_records")
    return t, named, xs, folded_slices


def test_small():
    r, rep = profile(["sh", "-c", 'ls / >/dev/null; sh -c "exit 0"; exit 0'], "SMALL")
    t, named, xs, folded = check_trace("SMALL", rep)
    check_eq(folded, [], "folded slices in a small run")
    check_eq(t["otherData"]["folded_events"], 0, "folded_events in a small run")
    check_eq(len(xs), rep["events"], "X events in a small run vs events")
    # The exec'd images share their pid's track, and the name says what ran in it.
    ls = [p for p in rep["processes"] if p["argv"] == "ls /"][0]
    check("ls" in named[ls["pid"]], "process_name of the ls pid: %r", named[ls["pid"]])
    names = {(e["name"], e.get("cat")) for e in xs}
    check(("fork", "process") in names or ("vfork", "process") in names, "no fork slice in %r", sorted(names))


def test_big():
    iomix = workload("iomix")
    data = tmpdir("data-")
    r, rep = profile([iomix, data, "2", "125000", "1", "0", "0"], "BIG")
    calls = load_json_text(r.out)["calls"]
    check_eq(rep["events"] + rep["dropped_events"], calls, "events + dropped_events vs the calls iomix made")
    t, named, xs, folded = check_trace("BIG", rep)
    other = t["otherData"]
    note("big: %d events, %d dropped, kept %d, folded %d, %d bytes" % (
        rep["events"], rep["dropped_events"], other["kept_events"], other["folded_events"],
        os.path.getsize("BIG/rank0.trace.json")))
    check(other["folded_events"] > 0, "nothing folded in a run of %d calls", rep["events"])
    check(other["kept_events"] >= 100000, "only %d calls kept of %d", other["kept_events"], rep["events"])


def load_json_text(text):
    import json
    try:
        return json.loads(text)
    except ValueError:
        raise Fail("not JSON: %r" % text[:300])


def test():
    test_small()
    test_big()


main(test)
