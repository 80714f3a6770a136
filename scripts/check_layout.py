#!/usr/bin/env python3
"""The collector's layout, checked (make test runs it): its folders in their order, bottom first, and a file
may include only headers of its own folder or of a folder below it; the collector includes nothing of the
preload; and no circle of includes among its files (a .c and its .h count as one module). Prints each
breach and exits 1."""
import os
import re
import sys

ORDER = ["lib", "symbols", "ingest", "model", "report", "merge", ""]  # "": collector/ itself, the top
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
COLLECTOR = os.path.join(ROOT, "collector")


def folder_of(path):
    rel = os.path.relpath(path, COLLECTOR)
    return os.path.dirname(rel)


def module_of(path):
    return os.path.splitext(os.path.relpath(path, COLLECTOR))[0]


def main():
    breaches = []
    edges = {}
    for dirpath, _, names in os.walk(COLLECTOR):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            folder = folder_of(path)
            if folder not in ORDER:
                breaches.append("%s: folder %r is not in the layout %r" % (path, folder, ORDER))
                continue
            for inc in re.findall(r'^#include "([^"]+)"', open(path).read(), re.M):
                target = os.path.normpath(os.path.join(dirpath, inc))
                rel = os.path.relpath(target, ROOT)
                if rel.startswith("preload" + os.sep):
                    breaches.append("%s includes %s: the collector uses only common/ of the preload's side" % (path, rel))
                if not rel.startswith("collector" + os.sep):
                    continue
                to = folder_of(target)
                if to not in ORDER or ORDER.index(to) > ORDER.index(folder):
                    breaches.append("%s (%s/) includes %s (%s/): a folder uses only folders below it" %
                                    (os.path.relpath(path, ROOT), folder or "collector", rel, to or "collector"))
                a, b = module_of(path), module_of(target)
                if a != b:
                    edges.setdefault(a, set()).add(b)
    # circles among modules
    state = {}

    def visit(m, stack):
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                breaches.append("a circle of includes: " + " -> ".join(stack[stack.index(n):] + [n]))
            elif n not in state:
                visit(n, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [])
    for b in breaches:
        print("layout: " + b)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
