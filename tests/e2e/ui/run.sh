#!/usr/bin/env bash
# Runs the control UI's browser test against a fresh `toolgate serve`.
#
#   tests/e2e/ui/run.sh                      # uses target/<host triple>/release/toolgate
#   TOOLGATE_BIN=target/x86_64-unknown-linux-gnu/debug/toolgate tests/e2e/ui/run.sh
#   CHROMIUM_PATH=/usr/bin/chromium tests/e2e/ui/run.sh -g "wrong token"
#
# Extra arguments go to `playwright test`. Needs Node >= 20 and a system
# Chromium (Debian: apt-get install chromium); no browser is downloaded.
# The daemon gets a temporary data dir, a free port and generated tokens,
# and is always stopped at the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"

bin="${TOOLGATE_BIN:-target/$(rustc --print host-tuple)/release/toolgate}"
[[ "$bin" == /* ]] || bin="$root/$bin"
if [[ ! -x "$bin" ]]; then
  echo "run.sh: no toolgate binary at $bin: build it (cargo build --release -p toolgate) or set TOOLGATE_BIN" >&2
  exit 2
fi
export CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM_PATH" ]]; then
  echo "run.sh: no Chromium at $CHROMIUM_PATH: install it (apt-get install chromium) or set CHROMIUM_PATH" >&2
  exit 2
fi
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

cd "$here"
# Install (again) only when the lockfile changed since the last install.
if [[ ! -d node_modules/@playwright/test || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund
fi

rand() { node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))'; }
free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close(); });'
}

data_dir="$(mktemp -d "${TMPDIR:-/tmp}/toolgate-ui-e2e.XXXXXX")"
log="$data_dir/serve.log"
daemon=""
cleanup() {
  local status=$?
  if [[ -n "$daemon" ]] && kill -0 "$daemon" 2>/dev/null; then
    kill "$daemon" 2>/dev/null || true
    # Give it a moment to stop cleanly, then make sure.
    for _ in $(seq 1 50); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$daemon" 2>/dev/null || true
    wait "$daemon" 2>/dev/null || true
  fi
  if [[ $status -ne 0 && -f "$log" ]]; then
    echo "---- toolgate serve log (last 40 lines) ----" >&2
    tail -n 40 "$log" >&2 || true
  fi
  rm -rf "$data_dir"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# history.spec.js runs daemons of its own with this binary.
export TOOLGATE_E2E_BIN="$bin"

port="$(free_port)"
export TOOLGATE_AGENT_TOKEN="agent-$(rand)"
export TOOLGATE_OPERATOR_TOKEN="operator-$(rand)"
export TOOLGATE_URL="http://127.0.0.1:$port"
# The built-in default policy, whatever the caller's environment says.
unset TOOLGATE_POLICY TOOLGATE_DATA_DIR

# A named operator with a token of their own, signed in by one test.
export TOOLGATE_PERSON_TOKEN
TOOLGATE_PERSON_TOKEN="$("$bin" --data-dir "$data_dir/data" operators add e2e-alice --json |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.parse(s).token))')"

# The daemon's own HOME, so the knowledge layer's default SOP directory
# (~/.config/toolgate/sop) is this run's, empty, and panels.spec.js may
# write SOPs there; never the caller's.
export TOOLGATE_E2E_HOME="$data_dir/home"
mkdir -p "$TOOLGATE_E2E_HOME"

HOME="$TOOLGATE_E2E_HOME" "$bin" serve --listen "127.0.0.1:$port" --data-dir "$data_dir/data" >"$log" 2>&1 &
daemon=$!

# Wait until it answers an operator request (at most 30 s).
ready=""
for _ in $(seq 1 300); do
  if ! kill -0 "$daemon" 2>/dev/null; then
    echo "run.sh: toolgate serve exited before it was ready" >&2
    exit 1
  fi
  if curl -fsS -o /dev/null -H "Authorization: Bearer $TOOLGATE_OPERATOR_TOKEN" "$TOOLGATE_URL/v1/state" 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.1
done
if [[ -z "$ready" ]]; then
  echo "run.sh: toolgate serve did not answer on $TOOLGATE_URL within 30 s" >&2
  exit 1
fi
echo "run.sh: toolgate serve is up on $TOOLGATE_URL (data dir $data_dir/data)"

npx --no-install playwright test --config "$here/playwright.config.js" "$@"
