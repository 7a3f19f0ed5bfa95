#!/usr/bin/env bash
# End-to-end test of `toolgate mcp-proxy` between a real MCP client and a
# real MCP server.
#
#   tests/e2e/mcp/run.sh                    # uses target/<host triple>/debug/toolgate
#   TOOLGATE_BIN=target/x86_64-unknown-linux-gnu/release/toolgate tests/e2e/mcp/run.sh
#   KEEP_TMP=1 tests/e2e/mcp/run.sh         # keep the run's dir to look at
#
# The server is @modelcontextprotocol/server-filesystem (pinned in
# package-lock.json, installed here by `npm ci`); the client is client.py on
# the MCP Python SDK's ClientSession over stdio_client (pinned in
# requirements.txt, installed into .venv/ here by lib.sh). raw.py speaks JSON-RPC by
# hand where the bytes matter. The server runs behind tap.sh, which copies
# everything the server reads into a log: a blocked call must never reach it.
#
# The server may write to three directories, all under .work/<run>/ next to
# this script (outside every temp dir: toolgate lets writes under /tmp
# through):
#   ws         the workspace, the proxy's cwd: reads and writes are allowed
#              (except ws/.git/hooks/*, which the default policy escalates R4)
#   outside    denied by the suite's policy deny.toml (policies/default.toml
#              plus deny = ["write(<outside>/**)"]): writes there are blocked;
#              the default policy itself blocks no single-file write
#   elsewhere  outside the workspace: the default policy escalates writes
#              there (R3), which wait for an operator or an elicitation
#
#   control  the client straight to the server: the writes to outside,
#            elsewhere and .git/hooks really happen (so the checks can fail)
#   A        SDK client through the proxy: tools/list unchanged, workspace
#            read and write allowed, the outside write blocked (isError with
#            toolgate's reason, no file, the server never saw it), stderr
#   B        raw JSON-RPC: responses equal the direct ones byte for byte
#            (ids kept), the block result's exact shape, no elicitation for a
#            client that did not declare it, exit on end of input (also
#            while a call is held); the write in unusual framings (escapes,
#            duplicate keys, …: hostile.py) that the server runs directly
#   C        escalation: --wait 2s with no approval → isError with the id;
#            a read is not stalled by a held call; approved late, the exact
#            retry in the same session runs once (another session's does
#            not); approved by an operator while held (another process) → runs
#   D        elicitation: decline/cancel → isError at once; accept without
#            relay → not honoured; accept with relay.toml ([approvals]
#            relay = true) → runs; an R4 call is never relayed
#   E        audit verify for every data dir, the judged calls are in it
#   F        the same through `toolgate serve` (--url/--token): allow, block,
#            escalate approved over the HTTP API, GET /v1/decisions
#
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
# shellcheck source=../lib.sh
source "$here/../lib.sh"

bin="${TOOLGATE_BIN:-target/$(rustc --print host-tuple)/debug/toolgate}"
[[ "$bin" == /* ]] || bin="$root/$bin"
if [[ ! -x "$bin" ]]; then
  echo "run.sh: no toolgate binary at $bin: build it (cargo build -p toolgate) or set TOOLGATE_BIN" >&2
  exit 2
fi
for tool in node npm python3 curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "run.sh: $tool is missing" >&2; exit 2; }
done
if ! "$bin" mcp-proxy --help >/dev/null 2>&1; then
  echo "run.sh: $bin has no working \`mcp-proxy\` subcommand" >&2
  exit 2
fi

started=$SECONDS
unset TOOLGATE_POLICY TOOLGATE_DATA_DIR TOOLGATE_URL TOOLGATE_AGENT_TOKEN TOOLGATE_OPERATOR_TOKEN

# --- the server (npm) ----------------------------------------------------------
server_pkg="$here/node_modules/@modelcontextprotocol/server-filesystem"
server_js="$server_pkg/dist/index.js"
if [[ ! -f "$server_js" || "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]]; then
  echo "run.sh: installing the filesystem MCP server (npm ci)"
  (cd "$here" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) || {
    echo "run.sh: npm ci failed" >&2
    exit 2
  }
fi
[[ -f "$server_js" ]] || { echo "run.sh: no $server_js after npm ci" >&2; exit 2; }

# --- the client (the MCP Python SDK) -------------------------------------------
# The MCP Python SDK, pinned in tests/e2e/mcp/requirements.txt (lib.sh).
mcp_sdk_python "$here/requirements.txt"
echo "run.sh: server-filesystem $(node -p "require('$server_pkg/package.json').version")," \
  "python mcp $("${py[@]}" -c 'import importlib.metadata as m; print(m.version("mcp"))')," \
  "node $(node --version), $("${py[@]}" --version 2>&1), toolgate $("$bin" --version 2>/dev/null)"

# --- the run's dir, processes, cleanup -----------------------------------------
work_parent="$(work_root "$here" mcp)" || exit 2
mkdir -p "$work_parent"
work="$(mktemp -d "$work_parent/run.XXXXXX")"
ws="$work/ws"
outside="$work/outside"
elsewhere="$work/elsewhere"
mkdir -p "$ws/.git/hooks" "$outside" "$elsewhere" "$work/home"
serve_pid=""
bg_pids=()

cleanup() {
  local status=$?
  local pid
  for pid in "${bg_pids[@]}"; do stop_pid "$pid"; done
  stop_pid "$serve_pid"
  if [[ -n "${KEEP_TMP:-}" ]]; then
    echo "run.sh: kept $work"
  else
    rm -rf "$work"
    rmdir "$work_parent" 2>/dev/null || true
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- results -------------------------------------------------------------------
# check COND_STATUS LABEL DETAIL: PASS when the preceding command succeeded.
check() { if [[ $1 -eq 0 ]]; then pass "$2"; else fail "$2" "${3:-}"; fi; }

# pyq FILE EXPR: EXPR evaluated in Python with d = the JSON document in FILE
# and helpers for client.py's output: step(i), text(i) (the tool result's
# text), is_error(i), ms(i) (elapsed), each also (i, j) for the j-th call of
# a parallel step i; ids(s) (the approval ids in s), toolgate_block(s) (s is
# toolgate's block text: the TOOLGATE_BLOCK| protocol line and the name).
# Prints strings as they are, anything else as JSON; exit 1 when it raises.
pyq() {
  python3 - "$1" "$2" <<'EOF'
import json, re, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"<no JSON: {e}>"); sys.exit(1)
def step(i, j=None): return d["steps"][i] if j is None else d["steps"][i]["result"]["steps"][j]
def result(i, j=None): return step(i, j)["result"]
def text(i, j=None): return "".join(c.get("text", "") for c in (result(i, j).get("content") or []))
def is_error(i, j=None): return bool(result(i, j).get("isError"))
def ms(i, j=None): return step(i, j)["elapsed_ms"]
def ids(s): return re.findall(r"\b[0-9a-f]{32}\b", s)
def toolgate_block(s): return "TOOLGATE_BLOCK|" in s and "toolgate" in s.lower()
try:
    v = eval(sys.argv[2], {"d": d, "step": step, "result": result, "text": text, "ms": ms,
                           "is_error": is_error, "ids": ids, "toolgate_block": toolgate_block,
                           "re": re, "json": json})
except Exception as e:
    print(f"<{type(e).__name__}: {e}>"); sys.exit(1)
print(v if isinstance(v, str) else json.dumps(v))
EOF
}
# is_true FILE EXPR: exit 0 when EXPR is true.
is_true() { [[ "$(pyq "$1" "bool($2)")" == true ]]; }

json_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
write_step() { # write_step PATH CONTENT
  printf '{"op":"call","tool":"write_file","args":{"path":%s,"content":%s}}' "$(json_str "$1")" "$(json_str "$2")"
}

# The server command for case NAME (its stdin tapped into $work/NAME/wire.jsonl).
server_cmd() {
  local name=$1
  mkdir -p "$work/$name"
  : >"$work/$name/wire.jsonl"
  server=(bash "$here/tap.sh" "$work/$name/wire.jsonl" node "$server_js" "$ws" "$outside" "$elsewhere")
}

# mcp_client NAME [client.py options] STEPS -- CMD...: runs client.py from the
# workspace (the proxy's cwd); leaves $work/NAME/out.json and err.log,
# $last_out, $last_status, $last_ms.
mcp_client() {
  local name=$1
  shift
  local d="$work/$name"
  mkdir -p "$d"
  local t0=$EPOCHREALTIME
  (cd "$ws" && HOME="$work/home" XDG_STATE_HOME="$work/home/.state" \
    timeout 90 "${py[@]}" "$here/client.py" "$@" >"$d/out.json" 2>"$d/err.log")
  last_status=$?
  last_ms=$(python3 -c "print(round(($EPOCHREALTIME - $t0) * 1000))")
  last_out="$d/out.json"
  echo "      ($name: client exit $last_status, $last_ms ms)"
  if [[ $last_status -ne 0 ]]; then
    tail -n 8 "$d/err.log" | sed 's/^/      | /'
  fi
  return "$last_status"
}
# proxy ARGS...: the proxy command line ($proxy) in front of $server.
proxy_cmd() { proxy=("$bin" "$@" -- "${server[@]}"); }

# wire_has NAME STRING: the server received a message containing STRING.
wire_has() { grep -qF -- "$2" "$work/$1/wire.jsonl"; }

# --- policies ------------------------------------------------------------------
deny_policy="$work/deny.toml"
relay_policy="$work/relay.toml"
python3 - "$root/policies/default.toml" "$outside" "$deny_policy" "$relay_policy" <<'EOF' || exit 2
import json, sys
src, outside, deny_path, relay_path = sys.argv[1:]
base = open(src).read()
deny = base.replace("deny = []", "deny = [%s]" % json.dumps(f"write({outside}/**)"), 1)
relay = base.replace("relay = false", "relay = true", 1)
if deny == base or relay == base:
    sys.exit("run.sh: policies/default.toml no longer has `deny = []` and `relay = false` to edit")
open(deny_path, "w").write(deny)
open(relay_path, "w").write(relay)
EOF
for p in "$deny_policy" "$relay_policy"; do
  if ! out=$("$bin" policy check "$p" 2>&1); then
    echo "run.sh: toolgate policy check $(basename "$p") failed: $out" >&2
    exit 2
  fi
done
pass "setup: toolgate policy check accepts deny.toml (default + deny write(<outside>/**)) and relay.toml (default + relay = true)"

# --- preflight: what toolgate says about the calls -----------------------------
verdict() { # verdict PATH [--policy FILE]: toolgate check's decision for write_file PATH
  local path=$1
  shift
  printf '{"tool":"mcp__fs__write_file","params":{"path":%s,"content":"x"},"cwd":%s}' \
    "$(json_str "$path")" "$(json_str "$ws")" |
    HOME="$work/home" "$bin" check --stateless "$@" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["decision"], d.get("risk"), "-", d.get("reason"))'
}
v_ws=$(verdict "$ws/probe.txt" --policy "$deny_policy")
v_out=$(verdict "$outside/probe.txt" --policy "$deny_policy")
v_else=$(verdict "$elsewhere/probe.txt")
v_else_relay=$(verdict "$elsewhere/probe.txt" --policy "$relay_policy")
v_hook=$(verdict "$ws/.git/hooks/post-checkout" --policy "$relay_policy")
if [[ $v_ws == allow* && $v_out == block* && $v_else == "escalate R3"* && $v_else_relay == "escalate R3"* && $v_hook == "escalate R4"* ]]; then
  pass "preflight: toolgate check says allow (workspace), block (outside, deny.toml), escalate R3 (elsewhere, default and relay.toml), escalate R4 (.git/hooks)"
else
  fail "preflight: toolgate check verdicts are not allow/block/escalate R3/escalate R3/escalate R4" \
    "ws: $v_ws | outside: $v_out | elsewhere: $v_else | elsewhere (relay): $v_else_relay | hook: $v_hook"
fi
echo "      elsewhere: $v_else"

echo "the workspace readme: $(basename "$work")" >"$ws/readme.txt"
t_case=$EPOCHREALTIME
timing() { # timing LABEL: prints the time since the last call
  local now=$EPOCHREALTIME
  printf '      [%s: %s s]\n' "$1" "$(python3 -c "print(f'{$now - $t_case:.1f}')")"
  t_case=$now
}

# --- control: the client straight to the server --------------------------------
server_cmd control
mcp_client control "[{\"op\":\"list_tools\"},$(write_step "$outside/control.txt" control),$(write_step "$elsewhere/control.txt" control),$(write_step "$ws/.git/hooks/post-checkout" control)]" \
  -- "${server[@]}"
control_out=$last_out
if [[ $last_status -eq 0 && "$(cat "$outside/control.txt" 2>/dev/null)" == control &&
  "$(cat "$elsewhere/control.txt" 2>/dev/null)" == control && "$(cat "$ws/.git/hooks/post-checkout" 2>/dev/null)" == control ]]; then
  pass "control: without toolgate the server really writes <outside>/control.txt, <elsewhere>/control.txt and <ws>/.git/hooks/post-checkout"
else
  fail "control: without toolgate the outside writes did not happen: the test cannot tell toolgate's block apart" \
    "$(head -c 800 "$last_out") $(tail -n 5 "$work/control/err.log")"
fi
rm -f "$outside/control.txt" "$elsewhere/control.txt" "$ws/.git/hooks/post-checkout"
tool_names=$(pyq "$control_out" '" ".join(sorted(t["name"] for t in result(0)["tools"]))')
echo "      server tools: $tool_names"
for t in read_text_file write_file; do
  [[ " $tool_names " == *" $t "* ]] || { echo "run.sh: the server has no $t tool (names changed?)" >&2; exit 2; }
done
timing control

# --- A: allowed and blocked calls (deny.toml, in-process) -----------------------
data_a="$work/data-a"
server_cmd a
proxy_cmd --data-dir "$data_a" mcp-proxy --name fs --policy "$deny_policy" --wait 5s
mcp_client a "[{\"op\":\"list_tools\"},
  {\"op\":\"call\",\"tool\":\"read_text_file\",\"args\":{\"path\":\"readme.txt\"}},
  $(write_step "$ws/written.txt" "written through toolgate"),
  $(write_step "$outside/blocked.txt" "must not be written")]" -- "${proxy[@]}"
a_out=$last_out
if [[ $last_status -ne 0 ]]; then
  fail "A: the client could not talk through the proxy" "$(tail -n 20 "$work/a/err.log")"
else
  if [[ "$(pyq "$a_out" 'result(0)["tools"]')" == "$(pyq "$control_out" 'result(0)["tools"]')" ]]; then
    pass "A: tools/list through the proxy equals tools/list straight from the server ($(pyq "$a_out" 'len(result(0)["tools"])') tools)"
  else
    fail "A: tools/list through the proxy differs from the direct one" "$(pyq "$a_out" 'step(0)')"
  fi
  if is_true "$a_out" 'not is_error(1) and text(1).strip() == open("'"$ws/readme.txt"'").read().strip()'; then
    pass "A: read_text_file readme.txt in the workspace is allowed and returns its content"
  else
    fail "A: read_text_file in the workspace did not return the file" "$(pyq "$a_out" 'step(1)')"
  fi
  if [[ "$(cat "$ws/written.txt" 2>/dev/null)" == "written through toolgate" ]] && is_true "$a_out" 'not is_error(2)'; then
    pass "A: write_file in the workspace is allowed and the file appears"
  else
    fail "A: write_file in the workspace did not write the file" "$(pyq "$a_out" 'step(2)')"
  fi
  blocked_text=$(pyq "$a_out" 'text(3)')
  if [[ ! -e "$outside/blocked.txt" ]] && is_true "$a_out" 'is_error(3) and toolgate_block(text(3)) and "deny rule" in text(3)' &&
    ! wire_has a blocked.txt; then
    pass "A: write_file to <outside> is blocked: isError with toolgate's reason, no file, the server never saw the call"
  else
    fail "A: the write to <outside> was not blocked as it should be" \
      "exists: $([[ -e "$outside/blocked.txt" ]] && echo yes || echo no); server saw it: $(wire_has a blocked.txt && echo yes || echo no); step: $(pyq "$a_out" 'step(3)')"
  fi
  echo "      blocked: ${blocked_text:0:300}"
  if wire_has a written.txt && wire_has a readme.txt; then
    pass "A: the allowed calls reached the server (tap)"
  else
    fail "A: the tap did not see the allowed calls" "$(head -c 600 "$work/a/wire.jsonl")"
  fi
  if grep -q "Secure MCP Filesystem Server running on stdio" "$work/a/err.log"; then
    pass "A: the server's stderr passes through the proxy"
  else
    fail "A: the server's stderr line is not in the client's stderr" "$(head -n 5 "$work/a/err.log")"
  fi
fi
timing A

# --- B: raw JSON-RPC: ids, result shape, no elicitation unasked, exit on EOF ----
data_b="$work/data-b"
raw_steps="[{\"id\":1,\"method\":\"tools/list\"},
  {\"id\":42,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\",\"arguments\":{\"path\":\"readme.txt\"}}},
  {\"id\":\"p-1\",\"method\":\"ping\"}]"
raw_blocked="{\"id\":\"blk-1\",\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\",\"arguments\":{\"path\":$(json_str "$outside/raw.txt"),\"content\":\"x\"}}}"
raw_escalated="{\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\",\"arguments\":{\"path\":$(json_str "$elsewhere/raw.txt"),\"content\":\"x\"}}}"
server_cmd b-direct
(cd "$ws" && HOME="$work/home" timeout 60 python3 "$here/raw.py" "$raw_steps" -- "${server[@]}" \
  >"$work/b-direct/out.json" 2>"$work/b-direct/err.log")
raw_direct_status=$?
server_cmd b
proxy_cmd --data-dir "$data_b" mcp-proxy --name fs --policy "$deny_policy" --wait 2s
raw_proxy_steps="${raw_steps%]},$raw_blocked,$raw_escalated]"
t0=$EPOCHREALTIME
(cd "$ws" && HOME="$work/home" timeout 60 python3 "$here/raw.py" "$raw_proxy_steps" -- "${proxy[@]}" \
  >"$work/b/out.json" 2>"$work/b/err.log")
raw_status=$?
echo "      (b: raw exit $raw_status, direct $raw_direct_status, $(python3 -c "print(round(($EPOCHREALTIME - $t0) * 1000))") ms)"
rb="$work/b/out.json"
rd="$work/b-direct/out.json"
if [[ $raw_status -ne 0 || $raw_direct_status -ne 0 ]]; then
  fail "B: the raw client failed" "$(tail -n 10 "$work/b/err.log" "$work/b-direct/err.log")"
else
  same=$(python3 - "$rd" "$rb" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
bad = []
if a["init"] != b["init"]:
    bad.append("initialize: %s vs %s" % (json.dumps(a["init"])[:300], json.dumps(b["init"])[:300]))
for i in range(len(a["steps"])):
    if a["steps"][i]["response"] != b["steps"][i]["response"]:
        bad.append("%s: %s vs %s" % (a["steps"][i]["sent"]["method"], json.dumps(a["steps"][i]["response"])[:300],
                                     json.dumps(b["steps"][i]["response"])[:300]))
print("; ".join(bad) or "same")
EOF
)
  if [[ "$same" == same ]]; then
    pass "B: initialize, tools/list, tools/call (read) and ping responses through the proxy equal the direct ones, ids and all"
  else
    fail "B: responses through the proxy differ from the direct ones" "$same"
  fi
  if is_true "$rb" 'set(step(3)["response"]) == {"jsonrpc", "id", "result"} and step(3)["response"]["id"] == "blk-1"
      and set(step(3)["response"]["result"]) == {"content", "isError"} and step(3)["response"]["result"]["isError"] is True
      and [set(c) for c in step(3)["response"]["result"]["content"]] == [{"type", "text"}]
      and step(3)["response"]["result"]["content"][0]["type"] == "text"
      and toolgate_block(step(3)["response"]["result"]["content"][0]["text"])' &&
    [[ ! -e "$outside/raw.txt" ]] && ! wire_has b raw.txt; then
    pass "B: a blocked call answers its string id with exactly {content:[{type:text,text:<toolgate's reason>}],isError:true}; the server never saw it"
  else
    fail "B: the blocked call's response is not the promised shape" "$(pyq "$rb" 'step(3)')"
  fi
  if is_true "$rb" 'step(4)["response"] is not None and step(4)["response"]["id"] == 7 and step(4)["response"]["result"]["isError"] is True
      and len(ids(json.dumps(step(4)["response"]))) > 0
      and not any(m.get("method") == "elicitation/create" for m in d["other"])' &&
    [[ ! -e "$elsewhere/raw.txt" ]]; then
    pass "B: an escalated call from a client without the elicitation capability times out (--wait 2s) into isError with the approval id, no elicitation/create sent"
  else
    fail "B: the escalated call from a client without elicitation misbehaved" \
      "$(pyq "$rb" 'step(4)') other: $(pyq "$rb" 'd["other"]')"
  fi
  echo "      escalated (no approval): $(pyq "$rb" 'step(4)["response"]["result"]["content"][0]["text"][:300]') [$(pyq "$rb" 'step(4)["elapsed_ms"]') ms]"
  # The client closes stdin: the proxy closes the server's and exits.
  sleep 0.3
  if is_true "$rb" 'd["exit"]["code"] == 0 and d["exit"]["after_close_ms"] < 5000' &&
    ! pgrep -f -- "$server_js $ws" >/dev/null; then
    pass "B: on end of input the proxy exits (code 0, $(pyq "$rb" 'd["exit"]["after_close_ms"]') ms) and the server is gone"
  else
    fail "B: the proxy did not shut down cleanly on end of input" \
      "exit: $(pyq "$rb" 'd["exit"]'); left: $(pgrep -af -- "$server_js $ws" | head -n 3)"
  fi
fi

# End of input while a call is held (--wait 15s): the proxy must not sit out
# the wait, and the held call must not run.
server_cmd b-held
proxy_cmd --data-dir "$data_b" mcp-proxy --name fs --wait 15s
held="{\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\",\"arguments\":{\"path\":$(json_str "$elsewhere/held.txt"),\"content\":\"x\"}}}"
(cd "$ws" && HOME="$work/home" timeout 60 python3 "$here/raw.py" --timeout 1 "[$held]" -- "${proxy[@]}" \
  >"$work/b-held/out.json" 2>"$work/b-held/err.log")
held_status=$?
sleep 0.3
if [[ $held_status -eq 0 && ! -e "$elsewhere/held.txt" ]] && ! wire_has b-held held.txt &&
  is_true "$work/b-held/out.json" 'd["exit"]["after_close_ms"] is not None and d["exit"]["after_close_ms"] < 5000' &&
  ! pgrep -f -- "$server_js $ws" >/dev/null; then
  pass "B: end of input while a call is held: the proxy exits in $(pyq "$work/b-held/out.json" 'd["exit"]["after_close_ms"]') ms (code $(pyq "$work/b-held/out.json" 'd["exit"]["code"]')), the call never runs"
else
  fail "B: end of input while a call is held did not end the proxy promptly and cleanly" \
    "exists: $([[ -e "$elsewhere/held.txt" ]] && echo yes || echo no); exit: $(pyq "$work/b-held/out.json" 'd["exit"]'); other: $(pyq "$work/b-held/out.json" 'd["other"]'); left: $(pgrep -af -- "$server_js $ws" | head -n 3)"
fi

# Unusual framings of the same write (hostile.py): the server runs every one
# of them (control), the proxy must judge them as the server reads them.
hostile_steps=$(python3 "$here/hostile.py" "$outside")
hostile_names=$(python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.loads(sys.argv[1])))' "$hostile_steps")
server_cmd b-hostile-direct
(cd "$ws" && HOME="$work/home" timeout 60 python3 "$here/raw.py" --timeout 5 "$hostile_steps" -- "${server[@]}" \
  >"$work/b-hostile-direct/out.json" 2>"$work/b-hostile-direct/err.log")
missing=()
for n in $hostile_names; do [[ -e "$outside/hostile-$n.txt" ]] || missing+=("$n"); done
if [[ ${#missing[@]} -eq 0 ]]; then
  pass "B control: the server itself runs the write in each framing ($hostile_names)"
else
  fail "B control: the server did not run the write in: ${missing[*]} (the proxy checks for them prove nothing)" \
    "$(head -c 600 "$work/b-hostile-direct/out.json")"
fi
rm -f "$outside"/hostile-*.txt
server_cmd b-hostile
proxy_cmd --data-dir "$data_b" mcp-proxy --name fs --policy "$deny_policy" --wait 1s
(cd "$ws" && HOME="$work/home" timeout 60 python3 "$here/raw.py" --timeout 5 "$hostile_steps" -- "${proxy[@]}" \
  >"$work/b-hostile/out.json" 2>"$work/b-hostile/err.log")
ran=()
for n in $hostile_names; do [[ -e "$outside/hostile-$n.txt" ]] && ran+=("$n"); done
if [[ ${#ran[@]} -eq 0 ]] && ! wire_has b-hostile hostile- &&
  is_true "$work/b-hostile/out.json" 'all(s["response"] is not None and ("error" in s["response"] or s["response"]["result"].get("isError") is True) for s in d["steps"])'; then
  pass "B: in every framing the write to <outside> is refused (blocked or rejected as malformed), none reaches the server"
else
  fail "B: a write to <outside> got through in framing(s): ${ran[*]:-none}; server saw: $(grep -o 'hostile-[a-z-]*' "$work/b-hostile/wire.jsonl" | sort -u | tr '\n' ' ')" \
    "$(pyq "$work/b-hostile/out.json" '[(s["sent"][:60], s["response"]) for s in d["steps"]]')"
fi
timing B

# --- C: escalation resolved by an operator in another process -----------------
data_c="$work/data-c"
server_cmd c-timeout
proxy_cmd --data-dir "$data_c" mcp-proxy --name fs --wait 2s
timeout_write=$(write_step "$elsewhere/timeout.txt" "written after a late approval")
# In one session: the write held for --wait 2s (with a read sent while it is
# held), then, after the operator has approved the timed-out call late, the
# exact call retried twice: it runs once.
mcp_client c-timeout "[{\"op\":\"parallel\",\"steps\":[$timeout_write,
    {\"op\":\"call\",\"tool\":\"read_text_file\",\"args\":{\"path\":\"readme.txt\"}}]},
  {\"op\":\"signal\",\"path\":$(json_str "$work/c-timeout/timed-out")},
  {\"op\":\"wait_file\",\"path\":$(json_str "$work/c-timeout/approved"),\"timeout\":40},
  $timeout_write, $timeout_write]" -- "${proxy[@]}" &
client_pid=$!
bg_pids+=("$client_pid")
for _ in $(seq 1 300); do
  [[ -e "$work/c-timeout/timed-out" ]] && break
  kill -0 "$client_pid" 2>/dev/null || break
  sleep 0.1
done
late_id=""
ran_early=no
[[ -e "$elsewhere/timeout.txt" ]] && ran_early=yes
if [[ -e "$work/c-timeout/timed-out" ]]; then
  late_id=$("$bin" --data-dir "$data_c" approvals list --json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    a = json.loads(line)
    if a.get("state") == "pending" and "timeout.txt" in json.dumps(a.get("call")):
        print(a["id"]); break' 2>/dev/null)
  if [[ -n "$late_id" ]]; then
    "$bin" --data-dir "$data_c" approvals approve "$late_id" --reason "late" >"$work/c-timeout/approve.log" 2>&1 ||
      echo "      (approvals approve $late_id failed: $(cat "$work/c-timeout/approve.log"))"
    # The approval is bound to the session that asked: the same call from
    # another proxy process (another session) does not use it up.
    server_cmd c-other
    proxy_cmd --data-dir "$data_c" mcp-proxy --name fs --wait 1s
    mcp_client c-other "[$timeout_write]" -- "${proxy[@]}"
    late_state=$("$bin" --data-dir "$data_c" approvals list --json 2>/dev/null | grep -F "\"id\":\"$late_id\"" |
      python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["state"])' 2>/dev/null)
    if [[ $last_status -eq 0 && ! -e "$elsewhere/timeout.txt" && "$late_state" == approved ]] && is_true "$last_out" 'is_error(0)'; then
      pass "C: the approval is bound to its session: the same call from another proxy process does not use it"
    else
      fail "C: another session's identical call used the approval (or misbehaved)" \
        "exists: $([[ -e "$elsewhere/timeout.txt" ]] && echo yes || echo no); approval $late_id: '$late_state'; $(pyq "$last_out" 'd["steps"]')"
    fi
  fi
fi
touch "$work/c-timeout/approved"
wait "$client_pid"
last_status=$?
echo "      (c-timeout: client exit $last_status)"
c_out="$work/c-timeout/out.json"
c_id=$(pyq "$c_out" '(ids(text(0, 0)) or [""])[0]')
if [[ $last_status -eq 0 && $ran_early == no ]] &&
  is_true "$c_out" 'is_error(0, 0) and 1500 <= ms(0, 0) < 20000' && [[ -n "$c_id" && "$c_id" == "$late_id" ]]; then
  pass "C: an escalated write with --wait 2s and no approval: isError naming approval $c_id after $(pyq "$c_out" 'ms(0, 0)') ms, not run then"
else
  fail "C: the unapproved escalation did not end as it should" \
    "ran before approval: $ran_early; id in text: '$c_id', pending id: '$late_id'; $(pyq "$c_out" 'd["steps"]') $(tail -n 5 "$work/c-timeout/err.log")"
fi
echo "      timed out: $(pyq "$c_out" 'text(0, 0)[:400]')"
if is_true "$c_out" 'not is_error(0, 1) and ms(0, 1) < ms(0, 0) - 1000'; then
  pass "C: a read sent while the write is held is answered at once ($(pyq "$c_out" 'ms(0, 1)') ms): held calls do not stall the session"
else
  fail "C: a read sent while an escalated write was held waited for it" "$(pyq "$c_out" 'step(0)')"
fi
if [[ "$(cat "$elsewhere/timeout.txt" 2>/dev/null)" == "written after a late approval" ]] &&
  is_true "$c_out" 'not is_error(3) and is_error(4)'; then
  pass "C: approved after the timeout, the exact call retried in the same session runs once (the second retry needs approval again)"
else
  fail "C: a late approval did not let the retried call run exactly once" \
    "exists: $([[ -e "$elsewhere/timeout.txt" ]] && echo yes || echo no); $(pyq "$c_out" 'd["steps"][3:]')"
fi

server_cmd c-approve
proxy_cmd --data-dir "$data_c" mcp-proxy --name fs --wait 15s
mcp_client c-approve "[$(write_step "$elsewhere/approved.txt" "approved by the operator")]" -- "${proxy[@]}" &
client_pid=$!
bg_pids+=("$client_pid")
approve_id=""
for _ in $(seq 1 150); do
  approve_id=$("$bin" --data-dir "$data_c" approvals list --json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    a = json.loads(line)
    if a.get("state") == "pending" and "approved.txt" in json.dumps(a.get("call")):
        print(a["id"]); break' 2>/dev/null)
  [[ -n "$approve_id" ]] && break
  sleep 0.1
done
if [[ -n "$approve_id" ]]; then
  "$bin" --data-dir "$data_c" approvals approve "$approve_id" --reason "mcp e2e" >"$work/c-approve/approve.log" 2>&1 ||
    echo "      (approvals approve failed: $(cat "$work/c-approve/approve.log"))"
fi
wait "$client_pid"
last_status=$?
if [[ -z "$approve_id" ]]; then
  fail "C: no pending approval for the held write appeared in \`toolgate approvals list --json\`" \
    "$(pyq "$work/c-approve/out.json" 'd["steps"]') $(tail -n 5 "$work/c-approve/err.log")"
elif [[ $last_status -eq 0 && "$(cat "$elsewhere/approved.txt" 2>/dev/null)" == "approved by the operator" ]] &&
  is_true "$work/c-approve/out.json" 'not is_error(0)'; then
  pass "C: an escalated write held by the proxy runs once an operator approves $approve_id from another process ($(pyq "$work/c-approve/out.json" 'step(0)["elapsed_ms"]') ms)"
else
  fail "C: the operator's approval did not let the held write run" \
    "approval $approve_id; exists: $([[ -e "$elsewhere/approved.txt" ]] && echo yes || echo no); $(pyq "$work/c-approve/out.json" 'd["steps"]') $(tail -n 5 "$work/c-approve/err.log")"
fi
approved_state=$("$bin" --data-dir "$data_c" approvals list --all --json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    a = json.loads(line)
    if a["id"] == sys.argv[1]: print(a.get("state"))' "$approve_id" 2>/dev/null)
echo "      approval $approve_id is now: ${approved_state:-?}"
timing C

# --- D: elicitation ------------------------------------------------------------
# The five sessions are independent: they run at once (two data dirs, two
# proxies on each), then each is checked.
data_d="$work/data-d"
data_r="$work/data-relay"
declare -A d_pid=()
# d_launch NAME ANSWER DATA WAIT POLICY|"" PATH CONTENT
d_launch() {
  local name=$1 answer=$2 data=$3 wait=$4 policy=$5 path=$6 content=$7
  local -a pol=()
  [[ -n "$policy" ]] && pol=(--policy "$policy")
  server_cmd "$name"
  proxy_cmd --data-dir "$data" mcp-proxy --name fs "${pol[@]}" --wait "$wait"
  mcp_client "$name" --elicit "$answer" "[$(write_step "$path" "$content")]" -- "${proxy[@]}" &
  d_pid[$name]=$!
  bg_pids+=("$!")
}
# d_wait NAME: waits for the session; sets $o (its output) and $st (exit status).
d_wait() {
  wait "${d_pid[$1]}"
  st=$?
  o="$work/$1/out.json"
}
d_launch d-decline decline "$data_d" 15s "" "$elsewhere/decline.txt" "must not be written"
d_launch d-cancel cancel "$data_d" 15s "" "$elsewhere/cancel.txt" "must not be written"
# Accepted, but the default policy does not honour relayed approvals: the
# proxy keeps waiting for an operator, and times out.
d_launch d-accept-norelay accept "$data_d" 2s "" "$elsewhere/norelay.txt" "must not be written"
d_launch d-accept-relay accept "$data_r" 15s "$relay_policy" "$elsewhere/relayed.txt" "approved by the user through elicitation"
# Relayed approval never applies to R4: a hook in .git/hooks, accepted at the
# client under relay.toml, still waits for operators and times out.
d_launch d-accept-r4 accept "$data_r" 2s "$relay_policy" "$ws/.git/hooks/post-checkout" "#!/bin/sh
echo pwned"

for mode in decline cancel; do
  d_wait "d-$mode"
  if [[ $st -eq 0 && ! -e "$elsewhere/$mode.txt" ]] && ! wire_has "d-$mode" "$mode.txt" &&
    is_true "$o" 'len(d["elicitations"]) == 1 and is_error(0) and step(0)["elapsed_ms"] < 10000
      and ids(d["elicitations"][0]["message"]) and ids(d["elicitations"][0]["message"])[0] in text(0)
      and d["elicitations"][0]["requestedSchema"]["properties"]["approve"]["type"] == "boolean"'; then
    pass "D: elicitation answered \"$mode\": one elicitation/create (reason + approval id, boolean approve), isError at once ($(pyq "$o" 'step(0)["elapsed_ms"]') ms), no file"
  else
    fail "D: elicitation answered \"$mode\" did not end the call as it should" \
      "exists: $([[ -e "$elsewhere/$mode.txt" ]] && echo yes || echo no); elicitations: $(pyq "$o" 'd["elicitations"]'); steps: $(pyq "$o" 'd["steps"]') $(tail -n 5 "$work/d-$mode/err.log")"
  fi
done
echo "      elicitation: $(pyq "$work/d-decline/out.json" 'd["elicitations"][0]["message"][:300]')"
echo "      declined: $(pyq "$work/d-decline/out.json" 'text(0)[:300]')"

d_wait d-accept-norelay
if [[ $st -eq 0 && ! -e "$elsewhere/norelay.txt" ]] && ! wire_has d-accept-norelay norelay.txt &&
  is_true "$o" 'len(d["elicitations"]) == 1 and is_error(0) and step(0)["elapsed_ms"] >= 1500'; then
  pass "D: elicitation accepted without [approvals] relay = true: not honoured, isError after --wait 2s ($(pyq "$o" 'step(0)["elapsed_ms"]') ms), no file"
else
  fail "D: an accepted elicitation was honoured (or misbehaved) although relay is off" \
    "exists: $([[ -e "$elsewhere/norelay.txt" ]] && echo yes || echo no); elicitations: $(pyq "$o" 'd["elicitations"]'); steps: $(pyq "$o" 'd["steps"]') $(tail -n 5 "$work/d-accept-norelay/err.log")"
fi
echo "      accepted, relay off: $(pyq "$o" 'text(0)[:300]')"

d_wait d-accept-relay
if [[ $st -eq 0 && "$(cat "$elsewhere/relayed.txt" 2>/dev/null)" == "approved by the user through elicitation" ]] &&
  is_true "$o" 'len(d["elicitations"]) == 1 and not is_error(0) and step(0)["elapsed_ms"] < 10000'; then
  pass "D: elicitation accepted with relay.toml ([approvals] relay = true): the write runs ($(pyq "$o" 'step(0)["elapsed_ms"]') ms)"
else
  fail "D: an accepted elicitation under relay = true did not let the write run" \
    "exists: $([[ -e "$elsewhere/relayed.txt" ]] && echo yes || echo no); elicitations: $(pyq "$o" 'd["elicitations"]'); steps: $(pyq "$o" 'd["steps"]') $(tail -n 5 "$work/d-accept-relay/err.log")"
fi

d_wait d-accept-r4
if [[ $st -eq 0 && ! -e "$ws/.git/hooks/post-checkout" ]] && ! wire_has d-accept-r4 post-checkout &&
  is_true "$o" 'is_error(0) and ms(0) >= 1500'; then
  pass "D: an R4 write (.git/hooks) accepted at the client under relay = true is not run: isError after --wait 2s, no file ($(pyq "$o" 'len(d["elicitations"])') elicitation(s))"
else
  fail "D: an R4 write was relayed into running (relay must never apply to R4)" \
    "exists: $([[ -e "$ws/.git/hooks/post-checkout" ]] && echo yes || echo no); elicitations: $(pyq "$o" 'd["elicitations"]'); steps: $(pyq "$o" 'd["steps"]')"
fi
echo "      R4 accepted: $(pyq "$o" 'text(0)[:300]')"
# What the user was told: the last line of the elicitation message is the
# instruction (relay.toml, R3: approving runs it). For R4 approving cannot run
# it, so the user must not be told the same thing.
r3_hint=$(pyq "$work/d-accept-relay/out.json" 'd["elicitations"][0]["message"].strip().splitlines()[-1]')
r4_hint=$(pyq "$o" 'd["elicitations"][0]["message"].strip().splitlines()[-1]')
if [[ -n "$r4_hint" && "$r4_hint" != "$r3_hint" ]]; then
  pass "D: the R4 elicitation does not tell the user that approving runs the call"
else
  fail "D: the R4 elicitation tells the user \"$r4_hint\" although a relayed approval can never run an R4 call" \
    "R4 message: $(pyq "$o" 'd["elicitations"][0]["message"]')"
fi
timing D

# --- E: the audit log -------------------------------------------------------------
# audit_has DATA STRING...: every STRING is in the data dir's audit log.
audit_ok() {
  local data=$1 label=$2
  shift 2
  local v
  if ! v=$("$bin" --data-dir "$data" audit verify 2>&1); then
    fail "E: audit verify fails for $label" "$v"
    return
  fi
  "$bin" --data-dir "$data" audit tail --json -n 100000 >"$data.audit.jsonl" 2>&1
  local missing=()
  for s in "$@"; do grep -qF -- "$s" "$data.audit.jsonl" || missing+=("$s"); done
  if [[ ${#missing[@]} -eq 0 ]]; then
    pass "E: $label: audit verify ok ($(sed -E 's/^audit chain intact: ([0-9]+ entries).*/\1/' <<<"$v")) and the log holds $*"
  else
    fail "E: $label: the audit log lacks ${missing[*]}" "$(tail -c 600 "$data.audit.jsonl")"
  fi
}
audit_ok "$data_a" "A" mcp__fs__write_file mcp__fs__read_text_file written.txt blocked.txt
audit_ok "$data_b" "B" raw.txt
audit_ok "$data_c" "C" timeout.txt approved.txt "$approve_id"
audit_ok "$data_d" "D" decline.txt cancel.txt norelay.txt
audit_ok "$data_r" "D (relay)" relayed.txt post-checkout approval.vote '"relayed":true' 
timing E

# --- F: the same through the daemon (toolgate serve + --url) --------------------
data_f="$work/data-f"
agent_token="agent-$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
operator_token="operator-$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
serve_log="$work/serve.log"
# The policy lies in this checkout, the daemon's working directory, which
# toolgate counts as the agent's to change: said knowingly here.
TOOLGATE_AGENT_TOKEN="$agent_token" TOOLGATE_OPERATOR_TOKEN="$operator_token" \
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$data_f" --policy "$deny_policy" \
  --allow-writable-policy >"$serve_log" 2>&1 &
serve_pid=$!
serve_url=""
for _ in $(seq 1 300); do
  kill -0 "$serve_pid" 2>/dev/null || break
  serve_url=$(grep -oE 'listening on http://[0-9.]+:[0-9]+' "$serve_log" | head -n1 | sed 's/^listening on //')
  [[ -n "$serve_url" ]] && curl -fsS -o /dev/null -H "Authorization: Bearer $operator_token" "$serve_url/v1/state" 2>/dev/null && break
  serve_url=""
  sleep 0.1
done
if [[ -z "$serve_url" ]]; then
  fail "F: toolgate serve did not start" "$(tail -n 20 "$serve_log")"
else
  echo "      toolgate serve on $serve_url"
  server_cmd f
  # An empty data dir for the proxy: every decision must come from the daemon.
  # Pinned to the daemon's key: an answer it did not sign is a denial.
  proxy_cmd --data-dir "$work/data-f-proxy" mcp-proxy --name fs --url "$serve_url" \
    --daemon-key "$(cat "$data_f/daemon.pub")" --token "$agent_token" --wait 15s
  mcp_client f "[$(write_step "$ws/daemon-ok.txt" "allowed by the daemon"),
    $(write_step "$outside/daemon-blocked.txt" "must not be written"),
    $(write_step "$elsewhere/daemon-approved.txt" "approved over the API")]" -- "${proxy[@]}" &
  client_pid=$!
  bg_pids+=("$client_pid")
  f_id=""
  for _ in $(seq 1 150); do
    f_id=$(curl -fsS -H "Authorization: Bearer $operator_token" "$serve_url/v1/approvals" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
items = d if isinstance(d, list) else (d.get("approvals") or d.get("items") or [])
for a in items:
    if a.get("state") == "pending" and "daemon-approved.txt" in json.dumps(a):
        print(a["id"]); break' 2>/dev/null)
    [[ -n "$f_id" ]] && break
    sleep 0.1
  done
  if [[ -n "$f_id" ]]; then
    curl -fsS -X POST -H "Authorization: Bearer $operator_token" -H 'Content-Type: application/json' \
      -d '{"reason":"mcp e2e"}' "$serve_url/v1/approvals/$f_id/approve" >"$work/f/approve.json" 2>&1 ||
      echo "      (POST approve failed: $(cat "$work/f/approve.json"))"
  fi
  wait "$client_pid"
  last_status=$?
  o="$work/f/out.json"
  if [[ $last_status -ne 0 ]]; then
    fail "F: the client could not talk through the proxy in daemon mode" "$(tail -n 20 "$work/f/err.log")"
  else
    if [[ "$(cat "$ws/daemon-ok.txt" 2>/dev/null)" == "allowed by the daemon" ]] && is_true "$o" 'not is_error(0)'; then
      pass "F (daemon): a workspace write is allowed by toolgate serve and happens"
    else
      fail "F (daemon): the workspace write did not happen" "$(pyq "$o" 'step(0)')"
    fi
    if [[ ! -e "$outside/daemon-blocked.txt" ]] && ! wire_has f daemon-blocked.txt &&
      is_true "$o" 'is_error(1) and toolgate_block(text(1)) and "deny rule" in text(1)'; then
      pass "F (daemon): the write to <outside> is blocked by toolgate serve, the server never saw it"
    else
      fail "F (daemon): the write to <outside> was not blocked" "$(pyq "$o" 'step(1)')"
    fi
    if [[ -n "$f_id" && "$(cat "$elsewhere/daemon-approved.txt" 2>/dev/null)" == "approved over the API" ]] &&
      is_true "$o" 'not is_error(2)'; then
      pass "F (daemon): an escalated write waits and runs once approved over the HTTP API ($(pyq "$o" 'step(2)["elapsed_ms"]') ms)"
    else
      fail "F (daemon): the escalated write was not held and released by the API approval" \
        "approval: '${f_id}'; $(pyq "$o" 'step(2)') $(tail -n 5 "$work/f/err.log")"
    fi
  fi
  if curl -fsS -H "Authorization: Bearer $operator_token" "$serve_url/v1/decisions?limit=50" >"$work/f/decisions.json" 2>/dev/null &&
    grep -q daemon-ok.txt "$work/f/decisions.json" && grep -q daemon-blocked.txt "$work/f/decisions.json" &&
    grep -q daemon-approved.txt "$work/f/decisions.json"; then
    pass "F (daemon): GET /v1/decisions shows all three calls"
  else
    fail "F (daemon): GET /v1/decisions does not show the three calls" "$(head -c 600 "$work/f/decisions.json" 2>/dev/null)"
  fi
  if [[ -e "$work/data-f-proxy" ]]; then
    echo "      note: the proxy created its own data dir although it asked the daemon: $(ls "$work/data-f-proxy" | tr '\n' ' ')"
  fi
fi
timing F

# --- summary -------------------------------------------------------------------
echo
echo "==== toolgate mcp-proxy end-to-end ($((SECONDS - started)) s) ===="
printf '%s\n' "${results[@]}"
if [[ $fails -gt 0 ]]; then
  echo "FAIL: $fails check(s) failed (KEEP_TMP=1 keeps $work for a look)"
  exit 1
fi
echo "PASS: all ${#results[@]} checks"
exit 0
