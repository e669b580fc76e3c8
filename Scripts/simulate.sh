#!/usr/bin/env bash
# The deterministic simulation (Docs/Reliability.md, "Deterministic simulation"): random sessions on
# the real client, on virtual time, compared with the model of the behaviour contract after every
# operation. `swift test` runs the default campaign (2,000 sessions of 60 operations, seed 21); this
# runs longer ones, or replays one session from the seed a failure printed.
#
#   Scripts/simulate.sh [--sessions N] [--seed S] [--length L] [--excluded-findings LIST]
#
#   --sessions N  sessions to run (default 20000)
#   --seed S      the first session's seed; session i uses S + i (default: a random one, printed)
#   --length L    operations per session (default 60)
#   --excluded-findings LIST
#                 the known findings whose triggers the generator leaves out, comma-separated
#                 (default: SimulationKnownDefects.defaultExcluded; "" drives them all)
#
# A divergence fails the run and prints the session's seed and a shrunk list of operations.
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=20000
seed=$(( (RANDOM << 15) | RANDOM ))
length=60
while (($#)); do
    case "$1" in
        --sessions) sessions=${2:?--sessions needs a number}; shift 2 ;;
        --seed) seed=${2:?--seed needs a number}; shift 2 ;;
        --length) length=${2:?--length needs a number}; shift 2 ;;
        --excluded-findings) export SIMULATION_EXCLUDED_FINDINGS="${2?--excluded-findings needs a list}"; shift 2 ;;
        -h | --help) sed -n '7,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "simulate.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ $sessions =~ ^[0-9]+$ && $seed =~ ^[0-9]+$ && $length =~ ^[0-9]+$ ]] || { echo "simulate.sh: numbers only" >&2; exit 2; }
echo "simulate.sh: $sessions sessions of $length operations from seed $seed" >&2
swift build --build-tests >/dev/null
SIMULATION_SESSIONS=$sessions SIMULATION_SEED=$seed SIMULATION_LENGTH=$length \
    swift test --skip-build --filter SpecSimulationTests
