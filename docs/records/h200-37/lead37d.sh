#!/usr/bin/env bash
# Stop 37, lead, call d (not run: no device lent): lead37c.sh on the tree of 51f00fa and later
# (the camera published when it changes), against d8be436 as in call c.
exec bash "$(dirname "$0")/lead37c.sh" "$@"
