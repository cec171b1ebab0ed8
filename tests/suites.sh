#!/usr/bin/env bash
# `make test`'s pytest part: the suite as four sessions at once, split by what they share.
#   offline  every test without a lab or Nautobot (CPU-bound)
#   ownlab   the live tests that bring up a lab of their own, each under its own prefix and
#            subnet (marker own_lab: the lab cycle, timeouts against a dropping address,
#            unmanaged hosts, the installed package's project)
#   lab      the classic lab's live tests (prefix fft; test_zz_lifecycle brings up a second
#            lab beside it)
#   sot      Nautobot and the rail lab (its tests are marked `rail`); the SoT audit of a
#            classic lab gets one of its own, under another prefix and subnet
# The live sessions mostly wait (timers, BGP, rollouts), so they run beside the offline one.
# (Niceness per session is there to tune; nice 10 for the offline one starved its own
# real-time tests: the watch CLI's.)
# Each session has its own temp dir and log; a log is printed whole when its session ends,
# and the exit code is the first failing session's.
# (--durations: each log ends with its slowest tests, where to look when make test grows;
# NAME.xml beside each log holds every test's time.)
set -uo pipefail
cd "$(dirname "$0")/.."
PYTEST=${PYTEST:-.venv/bin/pytest}
work=${FLATFAB_SUITES_DIR:-/tmp/flatfab-suites}
rm -rf "$work" && mkdir -p "$work"

# An environment may turn Python's bytecode cache off (PYTHONDONTWRITEBYTECODE): then every
# flatfab process the suite starts (some hundreds: CLI runs, workers, gNMI targets) compiles
# the package again, about 0.4 s of CPU each on a machine the four sessions keep busy, and
# each session compiles and rewrites every test module it collects. Compile once here and
# let the sessions keep their caches (in __pycache__, which git ignores).
unset PYTHONDONTWRITEBYTECODE
"$(dirname "$PYTEST")/python" -m compileall -q -j0 tasks labs napalm_frr napalm_linux_host \
    napalm_flatfab_junos tests >/dev/null

# the operator's wheel (tests/support/installed.py) is built once, by the first session
# that needs it, for all of them
export FLATFAB_SHARED_DIST="$work/dist"

declare -A names=() started=()
# start NAME NICENESS [VAR=value ...] -- pytest arguments
start() {
    local name=$1 niceness=$2; shift 2
    local vars=()
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    nice -n "$niceness" env "${vars[@]}" "$PYTEST" -q -p no:cacheprovider --durations=15 \
        --basetemp="$work/$name" --junitxml="$work/$name.xml" "$@" \
        >"$work/$name.log" 2>&1 &
    names[$!]=$name
    started[$name]=$SECONDS
    echo "== $name: started (log: $work/$name.log)"
}

# lint and type-check (make test's STATIC_CHECKS) run beside the sessions: on their own, first,
# they kept one core of two idle for their 10-15 s
if [ -n "${STATIC_CHECKS:-}" ]; then
    bash -c "$STATIC_CHECKS" >"$work/static.log" 2>&1 &
    names[$!]=static
    started[static]=$SECONDS
    echo "== static: started ($STATIC_CHECKS; log: $work/static.log)"
fi
start offline 0 -- -m "not nautobot and not live"
start ownlab 0 -- -m "own_lab"
start lab 0 -- -m "live and not nautobot and not rail and not own_lab"
start sot 0 FLATFAB_TEST_LAB_PREFIX=fts FLATFAB_TEST_LAB_SUBNET=172.31.245.0/24 \
    -- -m "nautobot or rail"

status=0
while [ ${#names[@]} -gt 0 ]; do
    wait -n -p pid
    rc=$?
    name=${names[$pid]}
    unset "names[$pid]"
    echo "== $name: exit $rc after $((SECONDS - started[$name])) s"
    cat "$work/$name.log"
    if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
done
exit "$status"
