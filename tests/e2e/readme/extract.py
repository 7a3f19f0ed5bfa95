#!/usr/bin/env python3
"""Reads the steps of the README's walkthrough out of README.md itself, so the
acceptance test (run.sh) runs exactly what a newcomer reads.

    extract.py README.md NAME commands   # the block's commands, one per line
    extract.py README.md NAME comments   # its comment lines, without the "# "
    extract.py README.md NAME after      # the prose after the block, up to the
                                         # next marked block or heading

A step is a fenced ```sh block right after a marker line

    <!-- readme-test: NAME -->

(blank lines may sit between them; HTML comments do not show on a rendered
page). In a block, lines starting with `#` are comments; a line ending in a
backslash continues on the next one. Exits 1, saying so, when the README has
no such marker or the marker is not followed by a sh block: the test must
fail when the README stops saying what it tests.
"""

import re
import sys

MARKER = re.compile(r"^<!--\s*readme-test:\s*([A-Za-z0-9_-]+)\s*-->\s*$")
FENCE_OPEN = re.compile(r"^```(sh|bash|shell|console)\s*$")


def blocks(lines):
    """{name: (block lines, prose lines after it)} for every marked block."""
    found = {}
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        name = m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines) or not FENCE_OPEN.match(lines[j]):
            sys.exit("extract.py: the readme-test marker %r (line %d) is not followed by a ```sh block" % (name, i + 1))
        k = j + 1
        body = []
        while k < len(lines) and lines[k].rstrip() != "```":
            body.append(lines[k])
            k += 1
        if k >= len(lines):
            sys.exit("extract.py: the ```sh block of %r (line %d) is never closed" % (name, j + 1))
        after = []
        a = k + 1
        while a < len(lines) and not MARKER.match(lines[a]) and not lines[a].startswith("#"):
            after.append(lines[a])
            a += 1
        if name in found:
            sys.exit("extract.py: two blocks are marked %r" % name)
        found[name] = (body, after)
        i = k + 1
    return found


def commands(body):
    out, cur = [], ""
    for line in body:
        s = line.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        out.append((cur + s).strip())
        cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("commands", "comments", "after"):
        sys.exit(__doc__.strip().split("\n\n")[1])
    path, name, what = sys.argv[1:]
    with open(path, encoding="utf-8") as f:
        found = blocks(f.read().split("\n"))
    if name not in found:
        sys.exit("extract.py: %s has no block marked <!-- readme-test: %s --> (it has: %s)"
                 % (path, name, ", ".join(sorted(found)) or "none"))
    body, after = found[name]
    if what == "commands":
        lines = commands(body)
        if not lines:
            sys.exit("extract.py: the block %r has no command in it" % name)
    elif what == "comments":
        lines = [re.sub(r"^#\s?", "", l.strip()) for l in body if l.strip().startswith("#")]
    else:
        lines = after
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
