#!/bin/bash
# Fetch every project of ${PLAN:-plan.txt} (one pip download at a time) into ~/.cache/wheelcheck-sweepN.
cd /tmp/sweepN-run/empty && . /work/sweepN/.venv/bin/activate
while read -r project specs; do
  case "$project" in ''|'#'*) continue;; esac
  python /work/sweepN/bench/sweepN/fetch_newest.py ~/.cache/wheelcheck-sweepN "$project" $specs
done < /work/sweepN/bench/sweepN/${PLAN:-plan.txt}
echo FETCH-DONE
