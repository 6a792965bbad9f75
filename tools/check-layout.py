#!/usr/bin/env python3
"""Holds the tree's layout: the checks behind `ctest -R layout`.

For each part that has a layout.rules file (deploy/, runtime/, ...):
  1. no source file (.c .h .cpp .hpp .py) is over 800 lines;
  2. a file includes ("quoted") only headers of its own folder or of the
     folders its folder's rule lets it use: a lower folder never includes a
     higher one;
  3. no units call each other in a circle (a unit: the files of one
     folder with one name, x.c and x.h; a call: a use of a function another
     unit defines, not through a pointer it was handed), inside a folder or
     across: a lower unit never calls back into a higher one.

A rules file has one line per folder of the part, the folder (relative to
the part, "." for the part's own) and a colon, then the folders it may use
besides itself (a folder's line covers its subfolders, and a folder used
brings its subfolders):

    cmd: session prepare transport util
    util:

A folder of another part is written from the top of the tree: //runtime/wire.
Headers that are nowhere in the tree (the system's, generated ones) are not
checked. Usage: tools/check-layout.py [TOP]; exit 0 when everything holds,
1 with one line per finding.
"""
import os
import re
import sys

MAX_LINES = 800
SOURCES = (".c", ".h", ".cpp", ".hpp", ".py")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
DEFINITION = re.compile(r"^(?!static\b|typedef\b|extern\b|struct\b|enum\b|union\b|return\b)"
                        r"[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(")
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def definitions(text):
    """Names of the functions a C file defines with external linkage."""
    lines = text.split("\n")
    names = set()
    for i, line in enumerate(lines):
        m = DEFINITION.match(line)
        if not m:
            continue
        for nxt in lines[i:i + 12]:
            if nxt.startswith("{"):
                names.add(m.group(1))
                break
            if nxt.rstrip().endswith(";"):
                break
    return names


def read_rules(top, part):
    rules = {}
    path = os.path.join(top, part, "layout.rules")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                sys.exit(f"{path}:{n}: expected 'FOLDER: FOLDER...'")
            folder, uses = line.split(":", 1)
            key = os.path.normpath(os.path.join(part, folder.strip()))
            allowed = set()
            for u in uses.split():
                if u.startswith("//"):
                    allowed.add(os.path.normpath(u[2:]))
                else:
                    allowed.add(os.path.normpath(os.path.join(part, u)))
            rules[key] = allowed
    return rules


def tree_files(top):
    out = []
    skip = {".git", "build", "node_modules", "__pycache__"}
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith(".")]
        for name in files:
            if name.endswith(SOURCES):
                out.append(os.path.relpath(os.path.join(root, name), top))
    return sorted(out)


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    parts = sorted(
        os.path.relpath(root, top)
        for root, dirs, files in os.walk(top)
        if "layout.rules" in files and "/build" not in root and "/.git" not in root
    )
    files = tree_files(top)
    headers = {}
    for f in files:
        if f.endswith((".h", ".hpp")):
            headers.setdefault(os.path.basename(f), []).append(f)
    rules = {}
    for p in parts:
        rules.update(read_rules(top, p))
    findings = []
    edges = {}

    def unit(path):
        return os.path.splitext(path)[0]

    def covered(folder, by):
        return folder == by or folder.startswith(by + "/")

    def rule_for(folder):
        while folder not in rules and folder not in ("", "."):
            folder = os.path.dirname(folder)
        return folder if folder in rules else None

    def resolve(src, inc):
        """The tree's header that src's #include "inc" names, or None."""
        here = os.path.normpath(os.path.join(os.path.dirname(src), inc))
        if here in headers.get(os.path.basename(inc), []):
            return here
        cands = [h for h in headers.get(os.path.basename(inc), []) if h.endswith("/" + inc) or h == inc]
        if not cands:
            return None
        folder = rule_for(os.path.dirname(src))
        allowed = rules.get(folder, set())
        for c in cands:
            if covered(os.path.dirname(c), folder) or any(covered(os.path.dirname(c), a) for a in allowed):
                return c
        return cands[0]

    defined = {}  # function name -> unit
    texts = {}
    for p in parts:
        for f in files:
            if not f.startswith(p + "/"):
                continue
            with open(os.path.join(top, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            if len(lines) > MAX_LINES:
                findings.append(f"{f}: {len(lines)} lines, over {MAX_LINES}")
            if f.endswith(".py"):
                continue
            if f.endswith((".c", ".cpp")):
                texts[f] = COMMENT.sub(" ", text)
                for name in definitions(texts[f]):
                    defined.setdefault(name, unit(f))
            folder = rule_for(os.path.dirname(f))
            if folder is None:
                findings.append(f"{f}: its folder has no line in {p}/layout.rules")
                continue
            for n, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                h = resolve(f, m.group(1))
                if not h:
                    continue
                hf = os.path.dirname(h)
                if not covered(hf, folder) and not any(covered(hf, a) for a in rules[folder]):
                    findings.append(f"{f}:{n}: includes {h}, but {folder} may use only "
                                    f"{', '.join(sorted(rules[folder])) or 'itself'}")
    for f, text in texts.items():
        for m in CALL.finditer(text):
            u = defined.get(m.group(1))
            if u and u != unit(f):
                edges.setdefault(unit(f), set()).add(u)

    # Circles among units: a depth-first search that reports each cycle once.
    state, stack, seen_cycles = {}, [], set()

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == 1:
                cyc = stack[stack.index(v):]
                key = frozenset(cyc)
                if key not in seen_cycles:
                    seen_cycles.add(key)
                    findings.append("units call each other in a circle: " + " -> ".join(cyc + [v]))
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    sys.setrecursionlimit(10000)
    for u in sorted(edges):
        if u not in state:
            visit(u)
    for line in findings:
        print(line)
    if findings:
        print(f"check-layout: {len(findings)} findings in {', '.join(parts)}", file=sys.stderr)
        return 1
    print(f"check-layout: {', '.join(parts)}: no file over {MAX_LINES} lines, no include against the rules, no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
