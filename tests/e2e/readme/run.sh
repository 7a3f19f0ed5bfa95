#!/usr/bin/env bash
# The README's acceptance test: a newcomer with only the README, from a fresh
# clone to a Claude Code call held by toolgate and approved in the UI, timed.
#
#   tests/e2e/readme/run.sh
#   KEEP_TMP=1 tests/e2e/readme/run.sh              # keep the temp dirs to look at
#   README_TEST_TARGET_DIR= tests/e2e/readme/run.sh # cargo's own throwaway target dir
#   README_TEST_SKIP_APPROVE=1 tests/e2e/readme/run.sh  # nobody presses Approve:
#                                                   # must FAIL (checks the test)
#   README_TEST_PERSON_DELAY=5 tests/e2e/readme/run.sh  # a quicker person (default 40 s)
#
# What it does, in order (every toolgate command comes out of README.md):
#   clone    `git clone` of this checkout at HEAD into a temp dir, with a temp
#            HOME: ~/.cargo/bin, ~/.claude and ~/.local/state/toolgate start
#            empty; of the real user's files only the toolchain and its
#            download cache are used (see "Toolchain" below).
#   README   the walkthrough's steps are read from the clone's README.md, the
#            ```sh blocks after `<!-- readme-test: NAME -->` markers
#            (extract.py): `install` (cargo install …, toolgate install
#            claude-code, toolgate serve: run in order, the daemon in the
#            background), `try` (run in a terminal; its output must start as
#            the README shows it), `sign-in` (`toolgate ui`: the sign-in link
#            it prints is what the browser opens; were the step to print a
#            token instead, it would be typed into the sign-in form at the
#            address the block names), and the button the README says to
#            press (its first **bold** word after the sign-in block).
#   Claude   the real Claude Code CLI (tests/e2e/claude-code's pinned
#            install), in default mode with Bash allowed (a person who lets
#            it use the shell), against fake_model.py, is asked to push main
#            to origin in a throwaway repository with a local bare remote.
#            The hook must hold it: Claude is told it needs approval, the
#            remote does not move.
#   approve  approve.js (Playwright, system Chromium) signs in as the README
#            says, finds the held call in the inbox and presses the button,
#            as a person would: README_TEST_PERSON_DELAY seconds (40) after
#            the hold (noticing it, opening the inbox, reading the call).
#   retry    another README_TEST_PERSON_DELAY seconds later (switching back
#            to Claude and asking it to go on), the fake model retries
#            exactly the same call: it must run (the
#            remote's main moves to the commit), and a third try of the same
#            call must be held again (the approval ran it once).
#
# Prints each step's time and "README acceptance: clone→approved in N s";
# never asserts on times. Cleans up on success and failure; on failure prints
# the daemon's log tail and Claude's transcript.
#
# Toolchain: CARGO_HOME and RUSTUP_HOME stay the real ones (no download of
# the toolchain or of crates already fetched), but CARGO_INSTALL_ROOT is the
# temp HOME's ~/.cargo, so `cargo install` puts toolgate where the README says,
# in a fresh ~/.cargo/bin. CARGO_TARGET_DIR is README_TEST_TARGET_DIR
# (default: this checkout's own target directory, the one every other build
# here uses; set it empty for cargo's own throwaway dir): on a fresh machine
# (CI) the release build is as cold as a newcomer's, bar the build scripts
# and proc macros the test build compiled the same way; on a machine that
# ran this before, the compiled dependencies are reused, while the toolgate
# crates are always compiled from the clone (a path of their own), which the
# test checks in cargo's output.
#
# The daemon listens where the README says (127.0.0.1:7878): the test stops
# with exit 2 if something already listens there. Exit 0 pass, 1 fail, 2
# broken setup.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
# shellcheck source=../lib.sh
source "$here/../lib.sh"

for tool in git cargo node npm python3 curl script timeout; do
  command -v "$tool" >/dev/null 2>&1 || { echo "run.sh: $tool is missing" >&2; exit 2; }
done
export CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM_PATH" ]]; then
  echo "run.sh: no Chromium at $CHROMIUM_PATH: install it (apt-get install chromium) or set CHROMIUM_PATH" >&2
  exit 2
fi

# --- the tools the newcomer brings: Claude Code, and a browser driver --------
# The same pinned installs as tests/e2e/claude-code and tests/e2e/ui (npm ci
# from their lockfiles, only when missing or stale).
case "$(uname -m)" in
  x86_64) platform=linux-x64 ;;
  aarch64 | arm64) platform=linux-arm64 ;;
  *) echo "run.sh: no Claude Code binary for $(uname -m)" >&2; exit 2 ;;
esac
cc_dir="$root/tests/e2e/claude-code"
claude="$cc_dir/node_modules/@anthropic-ai/claude-code-$platform/claude"
if [[ ! -x "$claude" || "$cc_dir/package-lock.json" -nt "$cc_dir/node_modules/.package-lock.json" ]]; then
  echo "run.sh: installing Claude Code (npm ci in tests/e2e/claude-code)"
  (cd "$cc_dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) || { echo "run.sh: npm ci failed" >&2; exit 2; }
fi
[[ -x "$claude" ]] || { echo "run.sh: no Claude Code binary at $claude" >&2; exit 2; }
ui_dir="$root/tests/e2e/ui"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if [[ ! -d "$ui_dir/node_modules/playwright" || "$ui_dir/package-lock.json" -nt "$ui_dir/node_modules/.package-lock.json" ]]; then
  echo "run.sh: installing Playwright (npm ci in tests/e2e/ui)"
  (cd "$ui_dir" && npm ci --no-audit --no-fund --loglevel=error) || { echo "run.sh: npm ci failed" >&2; exit 2; }
fi
echo "run.sh: claude $("$claude" --version 2>/dev/null | head -n1), $(cargo --version)"

# The address the README names; nothing else may be on it.
if ! python3 -c 'import socket; socket.socket().bind(("127.0.0.1", 7878))' 2>/dev/null; then
  echo "run.sh: something already listens on 127.0.0.1:7878, where the README's \`toolgate serve\` goes: stop it first" >&2
  exit 2
fi

# --- temp dirs, processes, cleanup -------------------------------------------
tmp="$(mktemp -d "${TMPDIR:-/tmp}/toolgate-readme-e2e.XXXXXX")"
home="$tmp/home"
clone="$tmp/toolgate"
mkdir -p "$home"
serve_pid=""
fake_pid=""
claude_pid=""
serve_log="$tmp/serve.log"

dump_failure() {
  echo
  echo "---- toolgate serve log (last 40 lines) ----"
  tail -n 40 "$serve_log" 2>/dev/null || echo "(none)"
  echo "---- Claude's stdout and stderr ----"
  cat "$tmp/claude.out" "$tmp/claude.err" 2>/dev/null || echo "(none)"
  echo "---- what Claude sent the model back (fake_model.py's log) ----"
  cat "$tmp/model.jsonl" 2>/dev/null || echo "(none)"
  local t
  for t in "$home"/.claude/projects/*/*.jsonl; do
    [[ -f "$t" ]] || continue
    echo "---- Claude's transcript ($t: its messages) ----"
    python3 - "$t" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    m = e.get("message")
    if not isinstance(m, dict):
        continue
    role = m.get("role") or e.get("type")
    content = m.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for b in content or []:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text" and not b.get("text", "").startswith("<system-reminder>"):
            print("%s: %s" % (role, b.get("text", "")[:600]))
        elif kind == "tool_use":
            print("%s: tool_use %s %s" % (role, b.get("name"), json.dumps(b.get("input"))[:600]))
        elif kind == "tool_result":
            c = b.get("content")
            if isinstance(c, list):
                c = " ".join(x.get("text", "") for x in c if isinstance(x, dict))
            print("%s: tool_result%s: %s" % (role, " (error)" if b.get("is_error") else "", str(c)[:800]))
PY
  done
}

cleanup() {
  local status=$?
  [[ $status -ne 0 && -d "$tmp" ]] && dump_failure
  stop_pid "$claude_pid"
  stop_pid "$serve_pid"
  stop_pid "$fake_pid"
  if [[ -n "${KEEP_TMP:-}" ]]; then
    echo "run.sh: kept $tmp"
  else
    rm -rf "$tmp"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- timing ------------------------------------------------------------------
steps=()
now() { printf '%s' "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
timed() { # timed LABEL START: records LABEL's time since START
  steps+=("$(printf '%8s s  %s' "$(secs "$2" "$(now)")" "$1")")
}
die() { # die MESSAGE [DETAIL]: a failed check ends the run
  fail "$1" "${2:-}"
  summary_and_exit
}
summary_and_exit() {
  echo
  echo "==== README acceptance, step times ===="
  printf '%s\n' "${steps[@]}"
  echo "==== checks ===="
  printf '%s\n' "${results[@]}"
  if [[ $fails -gt 0 ]]; then
    echo "FAIL: $fails check(s) failed (KEEP_TMP=1 keeps $tmp)"
    exit 1
  fi
  echo "PASS: all ${#results[@]} checks"
  exit 0
}

# --- the newcomer's environment ----------------------------------------------
# A clean environment: the temp HOME, no TOOLGATE_* or XDG_* settings, no
# Claude config dir, and a PATH without any toolgate already on it (so only
# the README's install can put one there). The real toolchain (see above).
real_cargo_home="${CARGO_HOME:-$HOME/.cargo}"
real_rustup_home="${RUSTUP_HOME:-$HOME/.rustup}"
path="$home/.cargo/bin"
IFS=: read -ra path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  [[ -n "$d" && ! -x "$d/toolgate" ]] && path="$path:$d"
done
target_dir="${README_TEST_TARGET_DIR-${CARGO_TARGET_DIR:-$root/target}}"
newcomer=(env -i HOME="$home" USER="${USER:-$(id -un)}" LANG="${LANG:-C.UTF-8}" TERM="${TERM:-xterm}"
  PATH="$path" CARGO_HOME="$real_cargo_home" RUSTUP_HOME="$real_rustup_home"
  CARGO_INSTALL_ROOT="$home/.cargo")
[[ -n "$target_dir" ]] && newcomer+=(CARGO_TARGET_DIR="$target_dir")
for v in RUSTUP_TOOLCHAIN http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY \
  SSL_CERT_FILE SSL_CERT_DIR CARGO_NET_OFFLINE CARGO_HTTP_CAINFO; do
  [[ -n "${!v:-}" ]] && newcomer+=("$v=${!v}")
done
as_newcomer() { (cd "$clone" && "${newcomer[@]}" bash -c "$1"); }

started=$(now)

# --- 1. clone -----------------------------------------------------------------
t=$(now)
if ! git clone -q "$root" "$clone" 2>"$tmp/clone.err"; then
  die "clone: git clone of $root failed" "$(cat "$tmp/clone.err")"
fi
echo "run.sh: cloned $root at $(git -C "$clone" log -1 --format='%h %s' | cut -c1-100)"
if [[ -n "$(git -C "$root" status --porcelain -- README.md tests/e2e/readme 2>/dev/null)" ]]; then
  echo "run.sh: note: README.md or tests/e2e/readme has uncommitted changes; the clone (HEAD) does not have them"
fi
timed "git clone" "$t"

# --- 2. the README's steps ----------------------------------------------------
readme="$clone/README.md"
extract() { python3 "$here/extract.py" "$readme" "$@"; }
for block in install try sign-in; do
  if ! extract "$block" commands >/dev/null 2>"$tmp/extract.err"; then
    die "README: no \`$block\` step" "$(cat "$tmp/extract.err")"
  fi
done
mapfile -t install_cmds < <(extract install commands)
mapfile -t try_cmds < <(extract try commands)
mapfile -t try_shown < <(extract try comments)
mapfile -t signin_cmds < <(extract sign-in commands)
signin_comments="$(extract sign-in comments)"
button=$(extract sign-in after | tr '\n' ' ' | grep -oP '\*\*\K[^*]+(?=\*\*)' | head -n1)
echo "run.sh: the README's steps:"
for c in "${install_cmds[@]}" "${try_cmds[@]}" "${signin_cmds[@]}"; do echo "    \$ $c"; done
echo "    then press \"$button\" in the inbox"
have() { local c; for c in "${install_cmds[@]}"; do [[ "$c" == $1 ]] && return 0; done; return 1; }
if have 'cargo install *' && have 'toolgate install claude-code*' && have 'toolgate serve*' && [[ -n "$button" ]]; then
  pass "README: the walkthrough installs, guards Claude Code, starts the daemon and names a button to press"
else
  die "README: the install step lacks cargo install, toolgate install claude-code or toolgate serve, or no button is named"
fi

# --- 3. install, guard Claude Code, start the daemon ----------------------------
if (cd "$clone" && "${newcomer[@]}" bash -c 'command -v toolgate') >/dev/null 2>&1; then
  die "fresh machine: toolgate is on the PATH before the README installs it"
fi
inbox_url=""
for c in "${install_cmds[@]}"; do
  t=$(now)
  if [[ "$c" == "toolgate serve"* ]]; then
    # The README leaves it running in its own terminal; here, in the background.
    echo "run.sh: \$ $c   (in the background)"
    (cd "$clone" && exec "${newcomer[@]}" bash -c "exec $c") >"$serve_log" 2>&1 &
    serve_pid=$!
    for _ in $(seq 1 300); do
      kill -0 "$serve_pid" 2>/dev/null || break
      inbox_url=$(grep -oP 'listening on \Khttp://\S+' "$serve_log" | head -n1)
      [[ -n "$inbox_url" ]] && curl -fsS -o /dev/null --max-time 2 "$inbox_url/healthz" 2>/dev/null && break
      inbox_url=""
      sleep 0.1
    done
    if [[ -z "$inbox_url" ]]; then
      die "install: \`$c\` did not come up" "$(tail -n 20 "$serve_log")"
    fi
    timed "$c (until it answers)" "$t"
    pass "install: \`$c\` is up on $inbox_url"
    continue
  fi
  echo "run.sh: \$ $c"
  as_newcomer "$c" 2>&1 | tee "$tmp/step.log"
  status=${PIPESTATUS[0]}
  timed "$c" "$t"
  [[ $status -eq 0 ]] || die "install: \`$c\` exited $status" "$(tail -n 20 "$tmp/step.log")"
  if [[ "$c" == "cargo install"* ]]; then
    where=$(cd "$clone" && "${newcomer[@]}" bash -c 'command -v toolgate')
    if [[ "$where" != "$home/.cargo/bin/toolgate" ]]; then
      die "install: after \`$c\`, toolgate is not on the PATH in ~/.cargo/bin (found: '${where:-nothing}')"
    fi
    # The binary is this clone's: cargo compiled the toolgate crate here.
    if ! grep -qE 'Compiling toolgate v[0-9.]+ \('"$clone" "$tmp/step.log"; then
      die "install: cargo did not compile toolgate from the clone (a stale build was installed?)" "$(tail -n 5 "$tmp/step.log")"
    fi
    pass "install: \`$c\` put toolgate on the PATH ($where, $("$where" --version))"
  elif [[ "$c" == "toolgate install claude-code"* ]]; then
    if grep -q "$home/.cargo/bin/toolgate hook claude-code" "$home/.claude/settings.json" 2>/dev/null; then
      pass "install: \`$c\` made toolgate Claude Code's hook in ~/.claude/settings.json"
    else
      die "install: ~/.claude/settings.json has no toolgate hook after \`$c\`" "$(cat "$home/.claude/settings.json" 2>/dev/null)"
    fi
  fi
done
[[ -n "$serve_pid" ]] || die "install: the README never started the daemon"

# --- 4. try it yourself --------------------------------------------------------
# Run in a terminal (script(1)), as a person would, so toolgate answers in
# its readable form; the README shows the start of that answer.
t=$(now)
for c in "${try_cmds[@]}"; do
  echo "run.sh: \$ $c   (in a terminal)"
  (cd "$clone" && "${newcomer[@]}" script -qec "$c" /dev/null) </dev/null | tr -d '\r' >"$tmp/try.out"
  sed 's/^/    /' "$tmp/try.out"
done
timed "try it yourself (toolgate check)" "$t"
ok=1
for i in "${!try_shown[@]}"; do
  want=${try_shown[$i]%…*}
  got=$(sed -n "$((i + 1))p" "$tmp/try.out")
  [[ "$got" == "$want"* ]] || ok=0
done
if [[ $ok -eq 1 && ${#try_shown[@]} -gt 0 ]]; then
  pass "try: the answer starts as the README shows it (${try_shown[0]})"
else
  fail "try: the answer is not what the README shows" "README: $(printf '%s | ' "${try_shown[@]}") got: $(head -n 3 "$tmp/try.out" | tr '\n' '|')"
fi

# --- 5. Claude makes the risky call ---------------------------------------------
# A throwaway project whose main is one commit ahead of its (local, bare) origin.
work="$tmp/work"
git_q() { HOME="$home" GIT_AUTHOR_NAME=newcomer GIT_AUTHOR_EMAIL=newcomer@example.test \
  GIT_COMMITTER_NAME=newcomer GIT_COMMITTER_EMAIL=newcomer@example.test git "$@"; }
mkdir -p "$work"
git_q init -q --bare -b main "$work/origin.git"
git_q init -q -b main "$work/project"
git_q -C "$work/project" remote add origin "$work/origin.git"
echo one >"$work/project/notes.txt"
git_q -C "$work/project" add notes.txt
git_q -C "$work/project" commit -qm one
git_q -C "$work/project" push -q origin main
echo two >>"$work/project/notes.txt"
git_q -C "$work/project" commit -qam two
before=$(git -C "$work/origin.git" rev-parse main)
ahead=$(git -C "$work/project" rev-parse main)
command="git push origin main"

model_log="$tmp/model.jsonl"
go="$tmp/approved.go"
: >"$model_log"
python3 "$here/fake_model.py" "$tmp/model.port" "$model_log" "$go" 300 2>"$tmp/model.err" &
fake_pid=$!
for _ in $(seq 1 100); do [[ -s "$tmp/model.port" ]] && break; sleep 0.1; done
[[ -s "$tmp/model.port" ]] || { cat "$tmp/model.err" >&2; echo "run.sh: the fake model did not start" >&2; exit 2; }

t=$(now)
# The newcomer's Claude: their HOME (the hook `toolgate install` wrote), the
# default permission mode with Bash allowed, a fake model instead of the API.
(
  cd "$work/project" &&
    exec env -i HOME="$home" USER="${USER:-$(id -un)}" LANG="${LANG:-C.UTF-8}" PATH="$path" \
      ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$tmp/model.port")" ANTHROPIC_API_KEY=dummy-key-for-the-fake-model \
      DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
      timeout 420 "$claude" -p "Push main to origin with the Bash tool: <<<RUN:$command>>>" \
      --output-format json --allowedTools Bash
) </dev/null >"$tmp/claude.out" 2>"$tmp/claude.err" &
claude_pid=$!
echo "run.sh: Claude is asked to run \`$command\` in a project one commit ahead of its origin"

model_entry() { # model_entry KIND: the tool_result logged with the first KIND request
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("kind") == sys.argv[2]:
        print(e.get("tool_result") or "")
        break
else:
    sys.exit(1)' "$model_log" "$1"
}
held=""
for _ in $(seq 1 900); do
  held=$(model_entry held) && break
  held=""
  grep -q '"kind": "not-held"' "$model_log" && break
  kill -0 "$claude_pid" 2>/dev/null || break
  sleep 0.1
done
timed "Claude's call held (Claude start → hold)" "$t"
approval_id=$(grep -oP 'Approval id: \K[0-9a-f]{32}' <<<"$held" | head -n1)
if [[ -n "$held" && -n "$approval_id" ]] && grep -q 'needs approval' <<<"$held" && grep -q 'pending' <<<"$held" &&
  grep -q 'did not run' <<<"$held"; then
  pass "hold: toolgate held Claude's \`$command\`; Claude was told it needs approval (id ${approval_id:0:8}…, pending)"
else
  die "hold: Claude's \`$command\` was not held with an approval id" "what Claude got back: ${held:-$(tail -n 3 "$model_log")}"
fi
if [[ "$(git -C "$work/origin.git" rev-parse main)" == "$before" ]]; then
  pass "hold: the call did not run (origin's main has not moved)"
else
  die "hold: the held push RAN: origin's main moved"
fi

# --- 6. sign in and approve in the UI ----------------------------------------------
# A person notices the hold, opens the inbox and reads the call first.
person_delay="${README_TEST_PERSON_DELAY:-40}"
echo "run.sh: a person takes ${person_delay} s to get to the inbox"
sleep "$person_delay"
t=$(now)
signin_out=""
for c in "${signin_cmds[@]}"; do
  echo "run.sh: \$ $c"
  out=$(as_newcomer "$c" 2>"$tmp/signin.err") || die "sign-in: \`$c\` failed" "$(cat "$tmp/signin.err")"
  signin_out+="$out"$'\n'
done
# A sign-in link is opened as it is; otherwise the output is the token to
# type at the address the block names.
link=$(grep -oP 'https?://\S+' <<<"$signin_out" | head -n1)
if [[ -n "$link" ]]; then
  open_url=$link
  token=""
  echo "run.sh: it printed a sign-in link; opening it"
else
  open_url=$(grep -oP 'https?://[^ )`,]+' <<<"$signin_comments" | head -n1)
  token=$(grep -v '^\s*$' <<<"$signin_out" | tail -n1 | tr -d '[:space:]')
  [[ -n "$open_url" && -n "$token" ]] ||
    die "sign-in: the README's step gives neither a sign-in link nor a token and an address" "output: ${signin_out:0:200}; comments: $signin_comments"
  echo "run.sh: it printed the operator token; signing in at $open_url"
fi
approved=""
if [[ -n "${README_TEST_SKIP_APPROVE:-}" ]]; then
  echo "run.sh: README_TEST_SKIP_APPROVE is set: nobody presses $button (this run must fail)"
else
  if PW_NODE_MODULES="$ui_dir/node_modules" OPEN_URL="$open_url" SIGNIN_TOKEN="$token" \
    APPROVAL_ID="$approval_id" COMMAND="$command" BUTTON="$button" SHOT="$tmp/ui-failure.png" \
    node "$here/approve.js"; then
    approved=$(now)
    timed "sign in and press $button in the UI (Playwright)" "$t"
    pass "approve: signed in as the README says, found the held call in the inbox and pressed $button"
  else
    timed "sign in and press $button in the UI (Playwright, failed)" "$t"
    die "approve: could not approve the held call in the UI"
  fi
fi
# Then switches back to Claude and asks it to go on: the approval must
# still be usable by then.
if [[ -n "$approved" ]]; then
  echo "run.sh: ${person_delay} s later, back in Claude, the person asks it to retry"
  sleep "$person_delay"
fi
touch "$go"

# --- 7. Claude's retry runs, once -----------------------------------------------
t=$(now)
for _ in $(seq 1 1200); do kill -0 "$claude_pid" 2>/dev/null || break; sleep 0.1; done
wait "$claude_pid"
claude_status=$?
claude_pid=""
timed "Claude's retry, and the turn's end" "$t"
retry_result=$(model_entry again) || retry_result="(no retry result: $(tail -n 2 "$model_log" | tr '\n' ' '))"
third_result=$(model_entry final) || third_result=""
after=$(git -C "$work/origin.git" rev-parse main)
if [[ "$after" == "$ahead" ]] && ! grep -q 'TOOLGATE_ESCALATE|' <<<"$retry_result"; then
  pass "retry: Claude's retry of the exact call ran: origin's main is now the project's commit"
  # Only meaningful once the retry ran: the approval must be used up by it.
  if grep -q 'TOOLGATE_ESCALATE|' <<<"$third_result"; then
    pass "once: a third try of the same call was held again (the approval was used up)"
  else
    fail "once: the third try of the same call was not held" "what Claude got back: ${third_result:0:600}"
  fi
else
  fail "retry: Claude's retry did not run the push (origin's main: ${after:0:12}, project: ${ahead:0:12})" \
    "what Claude got back for the retry: ${retry_result:0:600}"
fi
if [[ $claude_status -eq 0 ]] && grep -q 'FAKE-MODEL-DONE' "$tmp/claude.out"; then
  pass "Claude: the turn ended normally"
else
  fail "Claude: exit $claude_status, or the turn did not end with the model's answer" "$(tail -c 400 "$tmp/claude.out")"
fi

echo
if [[ -n "$approved" ]]; then
  echo "README acceptance: clone→approved in $(secs "$started" "$approved") s (clone→Claude's turn ended: $(secs "$started" "$(now)") s)"
else
  echo "README acceptance: nobody approved (README_TEST_SKIP_APPROVE)"
fi
summary_and_exit
