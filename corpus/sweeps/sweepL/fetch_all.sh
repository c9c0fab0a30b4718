#!/bin/bash
# Fetch every project of ${PLAN:-plan.txt} (one pip download at a time) into ~/.cache/wheelcheck-sweepL.
cd /tmp/sweepL-run/empty && . /work/sweepL/.venv/bin/activate
while read -r project specs; do
  python /work/sweepL/bench/sweepL/fetch_newest.py ~/.cache/wheelcheck-sweepL "$project" $specs
done < /work/sweepL/bench/sweepL/${PLAN:-plan.txt}
