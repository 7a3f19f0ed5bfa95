#!/bin/sh
# The control's hook: reads the payload and allows the call.
cat >/dev/null
echo '{"decision":"allow"}'
