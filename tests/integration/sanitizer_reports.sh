#!/usr/bin/env bash
# The last integration test of the sanitized build: the daemons and clients of the run (with the
# ASan+UBSan plugins loaded) wrote no sanitizer report under the lab's log directory (cluster.sh up
# empties it). Passes trivially in an unsanitized build, where nothing writes there.
shopt -s nullglob
reports=("$FMTE_LAB"/log/sanitizer-*)
if [ ${#reports[@]} -eq 0 ]; then
  echo "no ASan/UBSan report in $FMTE_LAB/log"
  exit 0
fi
for f in "${reports[@]}"; do
  echo "== $f"
  head -60 "$f"
done
exit 1
