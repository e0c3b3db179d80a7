#!/usr/bin/env python3
"""The tree's structure, checked on the build (doc/DESIGN.md sections 3 and 6).

  - no include/call cycle: no two files (or more) reach each other; the graph's nodes are
    source files, its edges each `#include "..."` and each symbol an object
    uses that another object of the tree defines (nm on BUILD/*/*.o);
  - the layers, top down: cmd/, collector/, source/, task/, plan/, cli/;
    none includes or calls one above it, and the modules below (host
    tracefs perfev aggregate symbolize output report fleet) none of the six;
    mem/ (the one grow-by-doubling and the one chunked arena) none of any
    other folder;
  - no top-level folder holds more than a third of the code (.c and .h lines);
  - every .c outside cmd/main.c links into some unit test (one of its
    global functions or data is in a BUILD/tests/*_test binary);
  - doc/ARCHITECTURE.md's table has a row for every folder.
Prints ok/not ok lines (tests/run counts them).
Usage: tests/structure/check.py [BUILD]   (default: build)
"""
import os
import re
import subprocess
import sys

MODULES = ["mem", "tracefs", "perfev", "aggregate", "symbolize", "python", "output", "report",
           "cli", "plan", "task", "source", "collector", "cmd", "fleet", "host"]
LOWER = ["host", "tracefs", "perfev", "aggregate", "symbolize", "python", "output", "report", "fleet"]
# mem/ (grow-by-doubling, the chunked arena) is below everything: it includes and calls no other folder
BOTTOM = ["mem"]
# the run's layers, top down: cmd/ (subcommands), collector/ (the run),
# source/ (records from the kernel), task/ (the traced tasks), plan/, cli/
# (source/ takes no session: collector/ builds the sources' configs and
# receives their records through a callback)
RUN = ["cmd", "collector", "source", "task", "plan", "cli"]
FORBIDDEN = {m: set(RUN[:i]) for i, m in enumerate(RUN)}
for m in LOWER:
    FORBIDDEN[m] = set(RUN)
for m in BOTTOM:
    FORBIDDEN[m] = set(MODULES) - {m}

build = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("FTSTACK_BUILD", "build")
root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
os.chdir(root)
failed = 0


def report(ok, what, detail=()):
    global failed
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        failed += 1
        for line in detail:
            print("    " + line)


sources = []
for m in MODULES:
    if os.path.isdir(m):
        sources += sorted(os.path.join(m, f) for f in os.listdir(m)
                          if f.endswith((".c", ".h")))
edges = {s: set() for s in sources}
kind = {}  # (a, b) -> why

inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
layer_bad = []
for s in sources:
    with open(s, errors="replace") as f:
        for line in f:
            m = inc_re.match(line)
            if not m:
                continue
            target = m.group(1)
            if not os.path.exists(target):
                target = os.path.normpath(os.path.join(os.path.dirname(s), target))
            if target in edges and target != s:
                edges[s].add(target)
                kind.setdefault((s, target), "includes")
            top = s.split("/")[0]
            ttop = target.split("/")[0]
            if ttop in FORBIDDEN.get(top, ()):
                layer_bad.append("%s includes %s" % (s, m.group(1)))


def nm(path, *flags):
    out = subprocess.run(["nm", *flags, path], capture_output=True, text=True)
    return out.stdout.splitlines()


defined = {}   # symbol -> source
undefined = {}  # source -> symbols
objects = {}
for s in sources:
    if not s.endswith(".c"):
        continue
    o = os.path.join(build, s[:-2] + ".o")
    if not os.path.exists(o):
        continue
    objects[s] = o
    undefined[s] = set()
    for line in nm(o):
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDRB":
            defined[parts[2]] = s
        elif len(parts) == 2 and parts[0] == "U":
            undefined[s].add(parts[1])
for s, syms in undefined.items():
    for sym in syms:
        t = defined.get(sym)
        if t and t != s:
            edges[s].add(t)
            kind.setdefault((s, t), "calls " + sym)
            if t.split("/")[0] in FORBIDDEN.get(s.split("/")[0], ()):
                layer_bad.append("%s calls %s (%s)" % (s, sym, t))

report(len(objects) > 0, "objects found in %s (%d)" % (build, len(objects)))

# Tarjan's strongly connected components, iterative
index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
for v0 in sources:
    if v0 in index:
        continue
    work = [(v0, iter(sorted(edges[v0])))]
    index[v0] = low[v0] = counter[0]; counter[0] += 1
    stack.append(v0); on.add(v0)
    while work:
        v, it = work[-1]
        advanced = False
        for w in it:
            if w not in index:
                index[w] = low[w] = counter[0]; counter[0] += 1
                stack.append(w); on.add(w)
                work.append((w, iter(sorted(edges[w]))))
                advanced = True
                break
            if w in on:
                low[v] = min(low[v], index[w])
        if advanced:
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

big = [c for c in sccs if len(c) > 1]
detail = []
for c in big:
    detail.append("cycle of %d files: %s" % (len(c), " ".join(c)))
    cs = set(c)
    for a in c:
        for b in sorted(edges[a] & cs):
            detail.append("  %s -> %s (%s)" % (a, b, kind[(a, b)]))
largest = max((len(c) for c in sccs), default=0)
report(not big, "no include/call cycle: no files reach each other (largest: %d)" % largest,
       detail)

report(not layer_bad, "layers: cmd/ > collector/ > source/ > task/ > plan/ > cli/ > the modules", layer_bad)

lines = {}
for s in sources:
    with open(s, errors="replace") as f:
        lines[s.split("/")[0]] = lines.get(s.split("/")[0], 0) + sum(1 for _ in f)
total = sum(lines.values())
worst = max(lines, key=lines.get)
report(lines[worst] * 3 <= total,
       "no folder holds more than a third of the code (largest: %s, %d of %d lines)"
       % (worst, lines[worst], total),
       ["%s %d" % (m, n) for m, n in sorted(lines.items(), key=lambda x: -x[1])])

arch = open("doc/ARCHITECTURE.md", errors="replace").read()
missing = [m for m in MODULES if os.path.isdir(m) and ("| `%s/` |" % m) not in arch]
report(not missing, "doc/ARCHITECTURE.md's table has a row for every folder", missing)

tests_dir = os.path.join(build, "tests")
linked = set()
if os.path.isdir(tests_dir):
    for f in sorted(os.listdir(tests_dir)):
        if f.endswith("_test"):
            for line in nm(os.path.join(tests_dir, f)):
                parts = line.split()
                if len(parts) == 3 and parts[1] in "TDR":
                    linked.add(parts[2])
unlinked = []
for s, o in sorted(objects.items()):
    if s == "cmd/main.c":
        continue
    funcs = [sym for sym, src in defined.items() if src == s]  # functions and data
    if not any(f in linked for f in funcs):
        unlinked.append(s)
report(not unlinked, "every .c outside cmd/main.c links into a unit test (%d do not)"
       % len(unlinked), unlinked)
sys.exit(1 if failed else 0)
