#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# integration/lock_safety/critical_section.sh LOG REGISTRYCTL CONFIG TAG PAUSE_BEFORE PAUSE_AFTER [MODE]
#
# One critical section of the lock-safety harness, run by `registryctl lock` while it holds the
# lock: read the counter, sleep PAUSE_BEFORE seconds, write counter+1 -- deliberately not
# atomic, so only the lock keeps increments from being lost -- then sleep PAUSE_AFTER seconds.
# Every step appends "<event> <CLOCK_REALTIME ns> <TAG> [<value>]" to LOG (one short O_APPEND
# write each, so lines never interleave):
#   start, read V, put V+1 (the write is about to be sent), wrote V+1 (it succeeded), end,
#   term (SIGTERM arrived: registryctl says the lock was lost).
# A get or put failing under injected faults is retried: writing the same absolute value again
# is harmless while the lock is held. MODE "read" (a reader of a read/write lock) reads the
# counter and writes nothing: start, read V, end. Exit: 0 done, 10/11 get/put kept failing,
# 143 SIGTERM.
set -u
# A clock-rate fault runs registryctl with its clock slowed or sped up (integration/partition):
# the section's steps and pauses keep the host's clock all the same.
unset LD_PRELOAD REGISTRY_CLOCK_RATE
log=$1
ctl=$2
config=$3
tag=$4
pause_before=$5
pause_after=$6
mode=${7:-write}

# registryctl signals CMD's whole process group when the lock is lost, so the `date` of a note
# being written at that moment dies with no output: take the time again rather than log a line
# without one (the retry runs after the signal, so its time is, if anything, late).
note() {
  now=
  tries=0
  while [ -z "$now" ] && [ "$tries" -lt 5 ]; do
    now=$(date +%s%N)
    tries=$((tries + 1))
  done
  echo "$1 $now $tag${2:+ $2}" >>"$log"
}
trap 'note term; exit 143' TERM

# retry CMD...: runs CMD until it succeeds, at most 40 times, 50 ms apart.
retry() {
  n=0
  until "$@"; do
    n=$((n + 1))
    [ "$n" -ge 40 ] && return 1
    sleep 0.05
  done
}

note start
value=$(retry "$ctl" --config="$config" get /safety/counter) || exit 10
note read "$value"
sleep "$pause_before"
if [ "$mode" = read ]; then
  sleep "$pause_after"
  note end
  exit 0
fi
next=$((value + 1))
note put "$next"
retry "$ctl" --config="$config" put /safety/counter "$next" || exit 11
note wrote "$next"
sleep "$pause_after"
note end
