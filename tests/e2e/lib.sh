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
