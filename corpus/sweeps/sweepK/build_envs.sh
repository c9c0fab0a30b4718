#!/bin/bash
# Build each env of envs.txt (name then pip requirements) sequentially.
while read -r name reqs; do
  [ -z "$name" ] && continue
  d=/tmp/sweepK-envs/$name
  [ -f $d/.done ] && continue
  rm -rf $d
  python3 -m venv $d
  start=$(date +%s)
  if $d/bin/pip install -q $reqs > /tmp/sweepK-logs/pip-$name.log 2>&1; then
    touch $d/.done; echo "$name ok $(( $(date +%s)-start ))s $(du -sh $d | cut -f1)"
  else
    echo "$name FAILED"; tail -3 /tmp/sweepK-logs/pip-$name.log
  fi
done < /work/sweepK/bench/sweepK/envs.txt
