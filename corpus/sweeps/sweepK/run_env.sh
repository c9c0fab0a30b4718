#!/bin/bash
# run_env.sh NAME: conflicts (json, text -v) and compat (all) on one env; record exit codes, time, RSS
. /work/sweepK/.venv/bin/activate
n=$1; py=/tmp/sweepK-envs/$n/bin/python; o=/tmp/sweepK-run/$n; mkdir -p $o; cd /tmp/sweepK-run
/usr/bin/time -f '%e %M' -o $o/conflicts.time wheelcheck conflicts --env $py --format json --output $o/conflicts.json 2>$o/conflicts.err; echo $? > $o/conflicts.rc
wheelcheck conflicts --env $py -v > $o/conflicts.txt 2>&1
/usr/bin/time -f '%e %M' -o $o/compat.time wheelcheck compat --env $py --format json --output $o/compat.json 2>$o/compat.err; echo $? > $o/compat.rc
wheelcheck compat --env $py -v > $o/compat.txt 2>&1
echo "$n conflicts rc=$(cat $o/conflicts.rc) t=$(cat $o/conflicts.time|tail -1) compat rc=$(cat $o/compat.rc) t=$(cat $o/compat.time|tail -1)"
