#!/bin/bash
# The one long fuzz run: 100,000 generated transcripts over four generators, two processes.
# Usage: bash tests/fuzz/run_all.sh [PYTHON]   (logs in $TMPDIR/explore-suff-fuzz)
set -u
here=$(cd "$(dirname "$0")" && pwd)
PY=${1:-$here/../../.venv/bin/python}
out=${TMPDIR:-/tmp}/explore-suff-fuzz
mkdir -p "$out" && cd "$out"
start=$(date +%s)
( $PY "$here/fuzz.py" events 20000 101; $PY "$here/fuzz.py" bytes 20000 102 ) > a.log 2>&1 &
( $PY "$here/fuzz.py" mutated 25000 103; $PY "$here/fuzz.py" metamorphic 35000 104 ) > b.log 2>&1 &
wait
echo "wall seconds: $(( $(date +%s) - start ))" | tee done.log
cat a.log b.log
