#!/bin/bash
# Run both tools on every wheel of ~/.cache/wheelcheck-sweepL, one at a time; repeats until the fetch is over.
cd /tmp/sweepL-run/empty && . /work/sweepL/.venv/bin/activate
while :; do
  fetching=$(pgrep -f fetch_all.sh)
  python /work/sweepL/bench/sweep_run_one.py /tmp/sweepL-run/results.jsonl ~/.cache/wheelcheck-sweepL/*.whl
  [ -z "$fetching" ] && break
  sleep 20
done
echo RUN-DONE
