#!/bin/sh
# The control run's PreToolUse hook: allows every call, so the suite can show
# that the destructive command really runs when toolgate is not in the way.
cat >/dev/null
printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"e2e control: allow everything"}}'
