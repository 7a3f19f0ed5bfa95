#!/usr/bin/env bash
# tap.sh LOG CMD ARGS...: runs the MCP server CMD ARGS with everything it
# reads on stdin also appended to LOG, so run.sh can tell which JSON-RPC
# messages really reached the server (a blocked call must not). The server's
# stdout and stderr are untouched; when its stdin closes, tee ends and the
# server sees end of file as it would without the tap.
set -uo pipefail
log=$1
shift
tee -a "$log" | "$@"
