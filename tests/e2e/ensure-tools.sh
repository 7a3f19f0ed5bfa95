#!/usr/bin/env bash
# Makes sure the end-to-end suites' system tools are here: Node with npm,
# Debian's Chromium for the browser test, curl, and Python 3 with venv (fake
# servers, the MCP SDK) and pip (Node 24 for OpenClaw). Installs what is missing with
# apt-get when it can (root, or passwordless sudo). Exit 0 when everything
# is present, 3 when something is missing and cannot be installed here
# (the message says what to install).
set -euo pipefail

missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
[[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]] || missing+=(chromium)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
# The MCP suite installs the Python SDK into a venv.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
# The OpenClaw suite gets Node 24 from the Python package index with pip.
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "ensure-tools: missing ${missing[*]} and no root to install them: run \`sudo apt-get install -y ${missing[*]}\`" >&2
  exit 3
fi
echo "ensure-tools: installing ${missing[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
