#!/usr/bin/env bash
# Stop 37, lead, call b: lead37a.sh run again (the same text) on the tree where the mapper waits
# for a keyframe being verified ahead and the producer verifies on all threads.
exec bash "$(dirname "$0")/lead37a.sh" "$@"
