#!/usr/bin/env python3
"""hostile.py DIR: raw.py steps for tools/call lines in unusual framings.

Each line is valid JSON-RPC that the filesystem server itself runs as a
`write_file` of DIR/hostile-<name>.txt (the suite's control run proves it),
written so that a proxy matching text, or parsing JSON differently from the
server, could miss it: escapes in the method, duplicate keys (JavaScript's
JSON.parse keeps the last), a carriage return between tokens, numbers and
escapes some parsers refuse, deep nesting. Prints the steps as JSON.
"""

import json
import sys

out = sys.argv[1]


def args(name: str, extra: str = "") -> str:
    path = json.dumps(f"{out}/hostile-{name}.txt")
    return '{"path":%s,"content":"x"%s}' % (path, extra)


cases = {
    "escaped-method": lambda n: '"method":"\\u0074ools\\/call","params":{"name":"write_file","arguments":%s}' % args(n),
    "dup-method": lambda n: '"method":"ping","params":{"name":"write_file","arguments":%s},"method":"tools/call"' % args(n),
    "dup-params": lambda n: '"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"readme.txt"}},'
    '"params":{"name":"write_file","arguments":%s}' % args(n),
    "dup-name": lambda n: '"method":"tools/call","params":{"name":"read_text_file","name":"write_file","arguments":%s}' % args(n),
    "dup-path": lambda n: '"method":"tools/call","params":{"name":"write_file","arguments":{"path":"ok.txt",%s}'
    % args(n)[1:],
    "cr-between": lambda n: '"method":"tools/call",\r"params":{"name":"write_file","arguments":%s}' % args(n),
    "huge-number": lambda n: '"method":"tools/call","params":{"name":"write_file","arguments":%s}' % args(n, ',"n":1e400'),
    "lone-surrogate": lambda n: '"method":"tools/call","params":{"name":"write_file","arguments":%s}'
    % args(n, ',"s":"\\ud800"'),
    "deep-nesting": lambda n: '"method":"tools/call","params":{"name":"write_file","arguments":%s}'
    % args(n, ',"a":' + "[" * 200 + "]" * 200),
}
steps = []
for i, (name, body) in enumerate(cases.items()):
    steps.append({"id": 100 + i, "name": name, "line": '{"jsonrpc":"2.0","id":%d,%s}' % (100 + i, body(name))})
print(json.dumps(steps))
