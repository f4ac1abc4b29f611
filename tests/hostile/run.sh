#!/bin/sh
# Hostile strings and interruptions (issue 35). Every model-controlled string
# (make_hostile.py: HTML, gnuplot, shell, CSV, terminal, SQL, path-traversal, separators,
# 10,000-character and non-UTF-8 payloads in every name, producer_name and doc_string), and
# the same payloads as folder names, through every command: info, estimate, infer, calibrate,
# atc, run, compare, bringup, report (its page in headless Chromium: the DOM has no element a
# payload made), history list/show/export; then SIGINT and SIGKILL at random points of
# calibrate, bringup and report. Asserted, as the issue's "done when":
#  - no command runs: no PWNED* file appears anywhere the payloads point (the work folder,
#    /tmp);
#  - no escape byte reaches the terminal: no ESC, BEL, CSI (C1 0x9b, as a byte or as UTF-8)
#    in anything a command printed;
#  - no markup lands: the report's DOM holds no <img> and no <script>;
#  - CSV parses: every row of history export has the header's field count;
#  - every exit is 0, or 2 with one line on stderr (never 1, never a signal);
#  - interruptions: a SIGINT exits 130 (or dies of SIGINT) and leaves no temporary and no cut
#    file (summary.json parses, report.html ends with </html>), the run recorded
#    'interrupted'; a SIGKILL's temporaries are swept by the next run to the same output.
# usage: run.sh NANOBENCH [N_INTERRUPTIONS (default 4 per command)]
# Prints the payload x command table ("payload command result") on stdout.
NB=$1; NI=${2:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3 # Debian's, with python3-onnx and python3-numpy
T=$(mktemp -d /tmp/nb_hostile.XXXXXX)
trap 'rm -rf "$T"' EXIT
export NANOBENCH_DB="$T/runs.db"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v chromium >/dev/null || { echo "FAIL: chromium is not installed"; exit 1; }
mkdir -p "$T/work" "$T/data" "$T/eval"
cd "$T/work" || exit 1
# 8 calibration batches and 3 evaluation inputs of the model's [1,3,8,8] input
$PY -c '
import sys, numpy as np
r = np.random.RandomState(3)
for i in range(8): r.uniform(-1, 1, 192).astype(np.float32).tofile(f"{sys.argv[1]}/b{i}.bin")
for i in range(3): r.uniform(-1, 1, 192).astype(np.float32).tofile(f"{sys.argv[2]}/e{i}.bin")
' "$T/data" "$T/eval" || { echo "FAIL: data"; exit 1; }

# check_out WHAT: the last command's stdout and stderr ($T/o, $T/e) hold no escape byte
check_out() {
    for f in "$T/o" "$T/e"; do
        if LC_ALL=C grep -q "$(printf '\033')\|$(printf '\007')\|$(printf '\233')" "$f"; then
            fail "$1: an escape byte reached the terminal ($(basename "$f")): $(od -c "$f" | grep -m1 '033\|007\|233')"
            return 1
        fi
    done
    return 0
}
# run_cmd KEY WHAT EXPECT CMD...: runs CMD, checks the exit (EXPECT: "0", "2", or "0|2"),
# the one-line error, the output bytes; prints the table row
run_cmd() {
    key=$1; what=$2; want=$3; shift 3
    "$@" >"$T/o" 2>"$T/e"
    got=$?
    res="exit $got"
    case "|$want|" in
    *"|$got|"*) ;;
    *) fail "$key: $what: exit $got, expected $want: $(tail -c 400 "$T/e")"; res="$res FAIL" ;;
    esac
    # exit 2: one error line, the last (bringup's progress lines "[k/6] ..." may come first)
    if [ "$got" = 2 ] && { [ "$(grep -cv '^\[[0-9]/[0-9]\] ' "$T/e")" != 1 ] ||
        ! tail -n 1 "$T/e" | grep -q '^nanobench'; }; then
        fail "$key: $what: exit 2 with $(wc -l <"$T/e") lines on stderr"; res="$res FAIL"
    fi
    check_out "$key: $what" || res="$res ESC"
    printf '%-10s %-18s %s\n' "$key" "$what" "$res"
    return "$got"
}

keys=$($PY "$HERE/make_hostile.py" list)
for k in $keys; do
    $PY "$HERE/make_hostile.py" "$k" "$T/m_$k.onnx" || { fail "make_hostile $k"; continue; }
done

# a folder name of each payload (a file name: no '/', at most 200 bytes)
folder() {
    $PY -c '
import sys
sys.path.insert(0, sys.argv[1])
from make_hostile import PAYLOADS
p = PAYLOADS[sys.argv[2]].replace("/", "_")
if sys.argv[2] == "nonutf8":
    sys.stdout.buffer.write(b"f_\xff\xfe\x9b_x")
else:
    sys.stdout.write(("f_" + p)[:200])
' "$HERE" "$1"
}

# (every payload comes up: the bring-up runs in-process with names as data, issue 36)
ARGV_PENDING=""
echo "payload    command            result"
for k in $keys; do
    M="$T/m_$k.onnx"
    want=0
    [ "$k" = nonutf8 ] && want=2 # ONNX names are UTF-8: refused with one line
    run_cmd "$k" "info" "$want" "$NB" info "$M"
    run_cmd "$k" "info --json" "$want" "$NB" info "$M" --json
    run_cmd "$k" "estimate -p" "$want" "$NB" estimate -m "$M" -p
    run_cmd "$k" "infer" "$want" "$NB" infer "$M" --input random:1 --output-dir "$T/inf_$k"
    F=$(folder "$k")
    out="$T/work/$F"
    bwant=$want
    case " $ARGV_PENDING " in *" $k "*) bwant="0|2" ;; esac
    run_cmd "$k" "bringup" "$bwant" "$NB" bringup "$M" --data_dir "$T/data" --eval_dir "$T/eval" \
        --out "$out"
    bu=$?
    if [ "$bu" = 0 ]; then
        [ -s "$out/summary.json" ] && node -e 'JSON.parse(require("fs").readFileSync(process.argv[1]))' \
            "$out/summary.json" 2>/dev/null || fail "$k: summary.json is not whole JSON"
        run_cmd "$k" "report --text" 0 "$NB" report "$out" --text
        # no line cuts a number (issue 37: "91.2...", "(6...", the wall time after a long
        # model name): a long name is what gets shortened
        if grep -E '[ (][0-9][0-9.]*\.\.\.' "$T/o" >"$T/cut"; then
            fail "$k: the summary cuts a number: $(head -2 "$T/cut")"
        fi
        grep -q "every stage ran in [0-9.]* s$" "$T/o" || fail "$k: the summary lost the wall time"
        grep -q "^compile .*: [0-9]* bytes$" "$T/o" || fail "$k: the summary lost the exeom size"
        run_cmd "$k" "report (html)" 0 "$NB" report "$out" "$out" -o "$T/r_$k.html"
        id=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).runs.bringup)' \
            "$out/summary.json")
        run_cmd "$k" "history show" 0 "$NB" history show "$id"
        # the page in Chromium: its DOM (after parsing) has no element a payload made
        HOME="$T" timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
            --disable-background-networking --disable-component-update --disable-sync \
            --dump-dom "file://$T/r_$k.html" >"$T/dom_$k.html" 2>/dev/null ||
            fail "$k: chromium --dump-dom"
        # an element a payload made: a tag, or an event attribute inside a tag (the text
        # "&lt;img src=x onerror=..." is the payload shown, as it should be)
        if grep -Eiq '<(img|script|iframe)[ >/]|<[a-z][^>]*[[:space:]]on[a-z]+=' "$T/dom_$k.html"; then
            fail "$k: the report's DOM holds an element or handler a payload made: $(grep -Eio '<(img|script|iframe)[^>]*>|<[a-z][^>]*[[:space:]]on[a-z]+=[^>]*' "$T/dom_$k.html" | head -2)"
        fi
        for tag in "<img" "<script"; do
            if grep -qi -- "$tag" "$out/report.html"; then
                fail "$k: bringup's report.html holds $tag"
            fi
        done
        printf '%-10s %-18s %s\n' "$k" "report in chromium" "DOM checked"
    fi
done
# the folder payloads as data and evaluation folders, and as report labels of two folders
# (';' separates --data_dir's folders, as AMCT's flag does: a data folder's name cannot hold
# one, so it is '_' there)
for k in html gnuplot shell terminal; do
    F=$(folder "$k")
    D=$(printf '%s' "$F" | tr ';' '_')
    mkdir -p "$T/d/$D" && cp "$T/data"/* "$T/d/$D/"
    run_cmd "$k" "bringup (dirs)" 0 "$NB" bringup "$T/m_gnuplot.onnx" --data_dir "$T/d/$D" \
        --eval_dir "$T/d/$D" --out "$T/work/bu2_$F"
    run_cmd "$k" "report A B" 0 "$NB" report "$T/work/bu2_$F" "$T/work/bu2_$F" -o "$T/rr_$k.html"
    grep -qi "<img\|<script" "$T/rr_$k.html" && fail "$k: two-folder report holds markup"
done

run_cmd all "history list" 0 "$NB" history --limit 1000
run_cmd all "history export" 0 "$NB" history export --format csv --out "$T/runs.csv"
$PY -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8", errors="replace")))
bad = [i for i, r in enumerate(rows) if len(r) != len(rows[0])]
if bad or len(rows) < 10: sys.exit(f"rows {len(rows)}, ragged rows {bad[:5]}")
' "$T/runs.csv" || fail "history export: the CSV does not parse into even rows"
run_cmd all "history export json" 0 "$NB" history export --format json --out "$T/runs.json"
node -e 'JSON.parse(require("fs").readFileSync(process.argv[1]))' "$T/runs.json" ||
    fail "history export --format json is not JSON"
# the SQL payload is stored literally: the runs table is whole, the model row names the file
n=$("$NB" history --limit 1000 2>/dev/null | grep -c "m_sql.onnx")
[ "$n" -ge 5 ] || fail "sql: the runs of m_sql.onnx are not listed ($n)"

# no command ran, nothing left the work folder
for d in "$T" /tmp; do
    found=$(find "$d" -maxdepth 6 -name 'PWNED*' 2>/dev/null | head -3)
    [ -z "$found" ] || fail "a payload ran or escaped its folder: $found"
done

# ---- interruptions ----
M="$T/m_gnuplot.onnx"
cp "$M" "$T/m_kill.onnx" # the SIGKILLed runs' model: their rows show 'crashed', by nature
mkdir -p "$T/many"
$PY -c '
import sys, numpy as np
r = np.random.RandomState(5)
for i in range(3000): r.uniform(-1, 1, 192).astype(np.float32).tofile(f"{sys.argv[1]}/b{i:04d}.bin")
' "$T/many"
# after_sigint WHAT STATUS FOLDER: the exit was 130, no temporary left, files whole
after_sigint() {
    [ "$2" = 130 ] || fail "$1: SIGINT gave exit $2, not 130"
    left=$(find "$3" -name '*.tmp.*' -o -name '*.part' 2>/dev/null | head -3)
    [ -z "$left" ] || fail "$1: SIGINT left $left"
    if [ -f "$3/summary.json" ]; then
        node -e 'JSON.parse(require("fs").readFileSync(process.argv[1]))' "$3/summary.json" 2>/dev/null ||
            fail "$1: SIGINT left a cut summary.json"
    fi
    if [ -f "$3/report.html" ]; then
        tail -c 20 "$3/report.html" | grep -q "</html>" || fail "$1: SIGINT left a cut report.html"
    fi
}
# wait_status PID: the exit status of background job PID
wait_status() { wait "$1" 2>/dev/null; }
r=0; ints=0; kills=0
i=0
while [ $i -lt "$NI" ]; do
    delay=$(awk -v s="$i" 'BEGIN { srand(s + 11); printf "%.3f", 0.02 + rand() * 0.3 }')
    # calibrate
    rm -rf "$T/ic"
    "$NB" calibrate --model "$M" --save_path "$T/ic/q" --data_dir "$T/many" >/dev/null 2>&1 &
    p=$!; sleep "$delay"; kill -INT $p 2>/dev/null; wait_status $p; st=$?
    if [ -d "$T/ic" ] && [ $st != 0 ]; then after_sigint "calibrate (SIGINT at ${delay}s)" $st "$T/ic"; fi
    [ $st = 0 ] || ints=$((ints + 1))
    # bringup
    "$NB" bringup "$M" --data_dir "$T/many" --eval_dir "$T/eval" --out "$T/ib" >/dev/null 2>&1 &
    p=$!; sleep "$delay"; kill -INT $p 2>/dev/null; wait_status $p; st=$?
    if [ $st != 0 ]; then after_sigint "bringup (SIGINT at ${delay}s)" $st "$T/ib"; ints=$((ints + 1)); fi
    # report (of the whole folder of the first payload run)
    "$NB" report "$T/work/$(folder gnuplot)" -o "$T/ir.html" >/dev/null 2>&1 &
    p=$!; sleep "$(awk -v d="$delay" 'BEGIN { printf "%.2f", d / 4 }')"; kill -INT $p 2>/dev/null
    wait_status $p; st=$?
    if [ $st != 0 ]; then
        [ $st = 130 ] || fail "report: SIGINT gave exit $st"
        ints=$((ints + 1))
    fi
    left=$(ls -A "$T" | grep "ir.html.tmp" | head -3)
    [ -z "$left" ] || fail "report: SIGINT left $left"
    [ ! -f "$T/ir.html" ] || tail -c 20 "$T/ir.html" | grep -q "</html>" || fail "report: a cut page"
    # SIGKILL: temporaries may stay, and the next run to the same output sweeps them
    "$NB" bringup "$T/m_kill.onnx" --data_dir "$T/many" --eval_dir "$T/eval" --out "$T/kb" \
        >/dev/null 2>&1 &
    p=$!; sleep "$delay"; kill -KILL $p 2>/dev/null; wait_status $p; kills=$((kills + 1))
    sleep 0.2 # the supervised child dies with its supervisor
    i=$((i + 1))
done
# the run after the kills: whole files and no temporary of a killed process
"$NB" bringup "$T/m_kill.onnx" --data_dir "$T/data" --eval_dir "$T/eval" --out "$T/kb" >/dev/null 2>"$T/e" ||
    fail "bringup after SIGKILLs: $(tail -1 "$T/e")"
left=$(find "$T/kb" -name '*.tmp.*' -o -name '*.part' | head -3)
[ -z "$left" ] || fail "bringup after SIGKILLs: temporaries of killed runs left: $left"
# every interrupted run is recorded as interrupted (none 'crashed', none still 'running')
bad=$("$NB" history --limit 1000 2>/dev/null | grep -v m_kill |
    awk '$2 == "calibrate" || $2 == "bringup" { print $3 }' |
    grep -c "^crashed$\|^running$")
[ "$bad" = 0 ] || fail "$bad interrupted run(s) recorded as crashed or running"
n_int=$("$NB" history --limit 1000 2>/dev/null | awk '$3 == "interrupted"' | wc -l)
echo "interruptions: $ints SIGINTs answered, $n_int runs recorded interrupted, $kills SIGKILLs"
# an interrupted bring-up has no summary: its report is refused with one line, no page
bid=$("$NB" history list --kind bringup --limit 1000 2>/dev/null | awk '$3 == "interrupted" { print $1; exit }')
if [ -n "$bid" ]; then
    "$NB" report "$bid" -o "$T/int.html" >/dev/null 2>"$T/e"
    st=$?
    [ $st = 2 ] && [ "$(wc -l <"$T/e")" = 1 ] && [ ! -e "$T/int.html" ] ||
        fail "report of interrupted bringup $bid: exit $st, $(cat "$T/e")"
fi

if [ $fails -gt 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "hostile: all checks passed"
