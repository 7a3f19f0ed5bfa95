# Shared by the end-to-end suites (source it): stopping processes, free
# ports, secrets, and PASS/FAIL bookkeeping. Each suite keeps its own
# set-up and cleanup.

# stop_pid PID: TERM, up to 5 s to exit, then KILL; reaps it.
stop_pid() {
  local pid=$1
  [[ -n "$pid" ]] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# work_root HERE NAME: where a suite keeps the files its calls must find
# outside the workspace and outside every temp dir (toolgate lets writes and
# deletions under /tmp, /var/tmp and /dev/shm through, so a sentinel there
# proves nothing). HERE/.work, next to the suite, unless the checkout is
# itself under a temp dir or its path holds a character a shell command
# would have to quote (the suites write these paths into commands for the
# agents); then ~/.cache/toolgate-e2e/NAME. Fails with the reason when
# neither will do.
work_root() {
  local here=$1 name=$2 dir
  for dir in "$here/.work" "${XDG_CACHE_HOME:-$HOME/.cache}/toolgate-e2e/$name"; do
    dir="$(realpath -m "$dir")"
    case "$dir/" in
      /tmp/* | /var/tmp/* | /dev/shm/*) continue ;;
    esac
    [[ "$dir" =~ ^[A-Za-z0-9_./-]+$ ]] || continue
    echo "$dir"
    return 0
  done
  echo "lib.sh: no directory for $name's files outside temp dirs with a plain path (tried $here/.work and ~/.cache/toolgate-e2e/$name): set XDG_CACHE_HOME to one" >&2
  return 1
}

# rand: 24 random bytes as hex (tokens).
rand() { python3 -c 'import secrets; print(secrets.token_hex(24))'; }

# free_port LO HI: a loopback port in [LO, HI] nothing listens on (each
# suite has its own range, so suites running at once do not collide).
free_port() {
  python3 - "$1" "$2" <<'PY'
import random, socket, sys
ports = list(range(int(sys.argv[1]), int(sys.argv[2]) + 1))
random.shuffle(ports)
for p in ports:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
PY
}

# pass LABEL / fail LABEL [DETAIL]: record a check (see `summary`).
fails=0
results=()
pass() { results+=("PASS  $1"); echo "PASS  $1"; }
fail() {
  results+=("FAIL  $1"); echo "FAIL  $1"; fails=$((fails + 1))
  [[ -n "${2:-}" ]] && echo "      ${2:0:1500}"
  return 0
}

# make_sentinel DIR: a directory with files in it (the destructive calls'
# target), printed back; survives DIR: both files are still there.
make_sentinel() {
  mkdir -p "$1/sub"
  echo "do not delete" >"$1/keep.txt"
  echo "nor this" >"$1/sub/also.txt"
  printf '%s' "$1"
}
survives() { [[ -f "$1/keep.txt" && -f "$1/sub/also.txt" ]]; }

# pending_approval BIN DATA_DIR: the id of a pending approval in the data
# dir, waiting up to 60 s for one to appear; empty if none did.
pending_approval() {
  local id=""
  for _ in $(seq 1 300); do
    id=$("$1" --data-dir "$2" approvals list --json 2>/dev/null |
      python3 -c 'import json,sys
for l in sys.stdin:
    v = json.loads(l)
    if v.get("state") == "pending":
        print(v["id"]); break' 2>/dev/null)
    [[ -n "$id" ]] && break
    sleep 0.2
  done
  printf '%s' "$id"
}

# summary TITLE: prints every check and exits 1 if any failed, else 0.
summary() {
  echo
  echo "==== $1 ($((SECONDS - ${started:-0})) s) ===="
  printf '%s\n' "${results[@]}"
  if [[ $fails -gt 0 ]]; then
    echo "FAIL: $fails check(s) failed (KEEP_TMP=1 keeps the temp dirs for a look)"
    exit 1
  fi
  echo "PASS: all ${#results[@]} checks"
  exit 0
}

# as_root CMD…: CMD as root (we are root, or passwordless sudo), else fails.
as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo -n "$@"
  else return 1; fi
}

# mcp_sdk_python REQUIREMENTS: sets the array `py` to a Python that imports
# the pinned MCP Python SDK (client and server), installing it first when
# needed into tests/e2e/mcp/.venv, the one place both MCP suites share (pip
# inside a venv is fine under PEP 668). Where `python3 -m venv` does not work
# (Debian/Ubuntu without python3-venv), it installs python3-venv with apt-get
# when we are root (or have passwordless sudo); failing that, the packages go
# into .venv/site with `pip install --target`, which PEP 668 does not forbid,
# and run with PYTHONPATH. Exits 2 when nothing works.
mcp_sdk_python() {
  local requirements=$1
  local venv
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mcp/.venv"
  local stamp="$venv/.toolgate-requirements"
  py=("$venv/bin/python")
  if [[ -d "$venv/site" ]]; then
    py=(env "PYTHONPATH=$venv/site" python3)
  fi
  _mcp_ready() { "${py[@]}" -c 'import mcp.client.session, mcp.client.stdio, mcp.server.mcpserver' >/dev/null 2>&1; }
  if cmp -s "$requirements" "$stamp" && _mcp_ready; then
    return 0
  fi
  echo "run.sh: installing the MCP Python SDK ($(grep -E '^mcp==' "$requirements"))"
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    local minor
    minor=$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    if command -v apt-get >/dev/null 2>&1 &&
      as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 &&
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        python3-venv "python$minor-venv" >/dev/null 2>&1; then
      echo "run.sh: installed python3-venv with apt-get"
      python3 -m venv "$venv" >/dev/null 2>&1 || rm -rf "$venv"
    fi
  fi
  if [[ -x "$venv/bin/python" ]]; then
    py=("$venv/bin/python")
    "${py[@]}" -m pip install -q --disable-pip-version-check --no-input -r "$requirements" || {
      echo "run.sh: pip install into $venv failed" >&2
      exit 2
    }
  else
    echo "run.sh: python3 -m venv does not work here; installing with pip --target into $venv/site"
    mkdir -p "$venv"
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --disable-pip-version-check --no-input --target "$venv/site" \
      -r "$requirements" || {
      echo "run.sh: pip install --target failed (install python3-venv or python3-pip)" >&2
      exit 2
    }
    py=(env "PYTHONPATH=$venv/site" python3)
  fi
  _mcp_ready || { echo "run.sh: the MCP SDK does not import after installing it" >&2; exit 2; }
  cp "$requirements" "$stamp"
}
