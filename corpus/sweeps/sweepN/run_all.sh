#!/bin/bash
# Run both tools on every wheel of ~/.cache/wheelcheck-sweepN, one at a time; repeats until the fetch is over.
cd /tmp/sweepN-run/empty && . /work/sweepN/.venv/bin/activate
while :; do
  fetching=$(pgrep -f fetch_all.sh)
  python /work/sweepN/bench/sweep_run_one.py /tmp/sweepN-run/results.jsonl ~/.cache/wheelcheck-sweepN/*.whl
  [ -z "$fetching" ] && break
  sleep 20
done
echo RUN-DONE
