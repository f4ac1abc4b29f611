#!/bin/sh
# The workbench end to end in a real terminal: tmux runs `nanobench MODEL.onnx` and the
# test sends keys and reads the screen (capture-pane) through the whole bring-up: open the
# model -> estimate -> quantize -> compile -> run -> compare -> history export, asserting
# the screen's text at each step and the exported file; and the whole bring-up in one job (b). Twice: at 80x24 in colour with a
# UTF-8 locale, and at 200x50 monochrome (NO_COLOR) in the C locale. The screen is polled
# (no fixed sleeps), each wait bounded.
# usage: test_tui.sh PATH/TO/nanobench PATH/TO/make_fixture
# Exit 77 (skipped) when tmux is missing. NANOBENCH_BIN, when set, is passed on (the binary
# the workbench runs for each step; by default itself).
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed"; exit 77; }
NB=$(realpath "$1")
FIX=$2
SRC=$(cd "$(dirname "$0")/.." && pwd) # the source tree (tests/lsan.supp)

T=$(mktemp -d "${TMPDIR:-/tmp}/nb_tui.XXXXXX")
SOCK="$T/tmux.sock"
tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
cleanup() {
    tm kill-server >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT INT TERM
fails=0
start=$(date +%s)

"$FIX" conv "$T/conv.onnx" || { echo "FAIL: make_fixture conv"; exit 1; }
# calibration data: four batches of x FLOAT [1,3,8,8] (768 bytes each), float32 values
# written byte by byte (1.0, -2.0, 0.5, 3.0 in turns) then zeros
mkdir -p "$T/calib"
i=0
for v in '\000\000\200\077' '\000\000\000\300' '\000\000\000\077' '\000\000\100\100'; do
    {
        n=0
        while [ $n -lt 48 ]; do printf "$v\000\000\200\077\000\000\000\300\000\000\000\077"; n=$((n + 1)); done
    } >"$T/calib/b$i.bin"
    i=$((i + 1))
done
[ "$(wc -c <"$T/calib/b0.bin")" -eq 768 ] || { echo "FAIL: calibration data size"; exit 1; }

# a session that keeps the server up between the bring-ups (a server whose last session
# ends exits, and a new session could meet it exiting)
tm new-session -d -s keep "sleep 600" || { echo "FAIL: tmux cannot start"; exit 1; }

screen() { tm capture-pane -p -t nb; }

# wait_for WHAT ERE [SECONDS]: polls the screen until it matches
wait_for() {
    what=$1 re=$2 limit=${3:-30}
    t0=$(date +%s)
    while :; do
        if screen | grep -Eq -- "$re"; then
            return 0
        fi
        if [ $(($(date +%s) - t0)) -ge "$limit" ]; then
            echo "FAIL [$size]: $what (no /$re/ on the screen after ${limit} s):"
            screen | sed 's/^/    | /'
            fails=$((fails + 1))
            return 1
        fi
        sleep 0.1
    done
}

# expect WHAT ERE: the screen matches (polled briefly too: a capture can fall between two
# halves of a redraw)
expect() { wait_for "$1" "$2" 5; }

# absent WHAT ERE: after a moment the screen does not match (a stale text is gone)
absent() {
    sleep 0.3
    if screen | grep -Eq -- "$2"; then
        echo "FAIL [$size]: $1 (/$2/ still on the screen):"
        screen | sed 's/^/    | /'
        fails=$((fails + 1))
    fi
}

# nocut WHAT: no value cut on the screen (issue 38): no "..." or "…" inside a number or
# right after one ("73....", "[1,…")
nocut() {
    if screen | grep -Eq -- '[0-9](\.\.\.|…)'; then
        echo "FAIL [$size]: $1: a number cut on the screen:"
        screen | sed 's/^/    | /'
        fails=$((fails + 1))
    fi
}

keys() { tm send-keys -t nb "$@"; }
# click X Y (1-based): a button-1 press as the terminal reports it (X10 mouse protocol)
click() {
    b=$(printf '\\%03o\\%03o' $((32 + $1)) $((32 + $2)))
    tm send-keys -t nb -l "$(printf "\033[M $b")"
}
text() { tm send-keys -t nb -l "$1"; }

# one bring-up at W x H; extra environment in $3
bringup() {
    size="$1x$2"
    D="$T/$size"
    mkdir -p "$D"
    tm kill-session -t nb >/dev/null 2>&1
    tm new-session -d -s nb -x "$1" -y "$2" \
        "env $3 NANOBENCH_WORK='$D/work' ${NANOBENCH_BIN:+NANOBENCH_BIN='$NANOBENCH_BIN'} \
         '$NB' --db '$D/runs.db' '$T/conv.onnx'; echo \"nanobench exited \$?\"; sleep 600" ||
        { echo "FAIL [$size]: tmux new-session"; fails=$((fails + 1)); return; }

    # Model: opened from the command line, info read
    wait_for "model info" "Model +ok" || return
    expect "model inputs" "x +FLOAT +\[1,3,8,8\]"
    expect "model opset" "opset 13"
    expect "key bar" "F1Help +F2Setup +F5Run +F10Quit"

    # help lists the global keys and the screen's; q closes it
    keys F1
    wait_for "help" "Global keys"
    keys q
    wait_for "help closed" "F1Help"

    # Estimate: the vendor's five items and the layer table
    keys 2 F5
    wait_for "estimate" "Estimate +ok" || return
    expect "estimate summary" "TOTAL_WEIGHT_SIZE"
    expect "estimate layer table" "Conv_0 +Conv"
    nocut "estimate"
    if [ "$1" -eq 80 ]; then
        # the columns that do not fit: a hint, Right shows them (the output shape whole),
        # Left goes back; the names shrink first, numbers never cut
        expect "estimate: the scroll hint" "(Right: more columns| ->)\$"
        keys Right Right Right
        wait_for "estimate: Right shows the output shapes" "2.00 KiB \[1,3,8,8\]" || return
        expect "estimate: the hint both ways" "<->\$|Left/Right: more columns"
        nocut "estimate scrolled"
        keys Left Left Left
        wait_for "estimate: Left back to the first columns" "^ .*layer +op +unit" || return
        expect "estimate: the arena line whole" "arena 4.25 KiB \(bound 4.25 KiB\), peak at task [0-9]+; m: map"
    fi
    # '/' searches the table (any cell, any case)
    keys /
    wait_for "search prompt" "^Search:" || return
    text "dequant"
    keys Enter
    wait_for "search found" "/dequant: row [0-9]+ of [0-9]+"
    # settings: a form with the work folder; a threshold compare does not know is refused
    # in the form (it stays open); Esc leaves everything unchanged
    keys F2
    wait_for "settings" "Work folder +$D/work"
    keys Down Down Down
    text "cos=0.99,max_abs=0.1"
    keys F10
    wait_for "settings: a bad threshold refused" "unknown metric 'max_abs'"
    expect "settings: the hint names the metrics" "Thresholds +cos=0.99,max_abs"
    keys Escape
    absent "settings closed" "Thresholds +cos"
    # a form shrunk under its size (Tab there), then grown back: rebuilt with its values,
    # still working (was: fields[-1] read, a crash in libformw)
    keys F2
    wait_for "settings again" "Work folder" || return
    keys Down
    tm resize-window -t nb -x 40 -y 10
    sleep 0.3
    keys Tab
    sleep 0.3
    tm resize-window -t nb -x 60 -y 20
    sleep 0.3
    keys Tab
    sleep 0.3
    tm resize-window -t nb -x "$1" -y "$2"
    wait_for "a form after a shrink and a grow" "Work folder +$D/work" || return
    keys Tab
    sleep 0.2
    keys Escape
    absent "the form closed after the resizes" "Thresholds +cos"
    # Tab to the sidebar, j, Enter: the next step; a click on a step opens it
    keys Tab j Enter
    wait_for "sidebar navigation" ">3 Quantize"
    click 2 10
    wait_for "a click in the sidebar" ">4 Compile"

    # Quantize: the form (data folder, the same folder as the evaluation set, the other
    # fields left as they are), then the table
    keys 3 F5
    wait_for "quantize form" "Data folder" || return
    # Backspace on the empty first field stays there (issue 38: it went to the previous
    # field, from the first to the last)
    keys BSpace BSpace
    text "$T/calib"
    expect "form: Backspace on an empty field stays on it" "Data folder\(s\) +$T/calib"
    keys Down Down Down Down Down
    text "$T/calib"
    # a bad algorithm keeps the form open, the reason in it and the field marked (was: the
    # form closed, a status-line message only)
    keys Up C-u
    text "bogus"
    keys F10
    wait_for "form: a bad algorithm refused in the form" "not 'bogus'" || return
    expect "form: the bad field marked" "!Algorithm"
    expect "form: still open with its values" "Data folder\(s\) +$T/calib"
    keys C-u
    keys F10
    wait_for "quantize" "Quantize +(ok|!!)" || return
    expect "quantize table" "Conv_0 .*Conv"
    nocut "quantize"
    expect "quantize: the worst batch cosine shown" "worst batch cosine [0-9.]+"
    # batch_num left as the form has it ("all"): every one of the 4 calibration files
    cal=$("$NB" --db "$D/runs.db" history list --kind calibrate --limit 1 2>/dev/null | awk 'NR == 2 { print $1 }')
    "$NB" --db "$D/runs.db" history show "$cal" 2>/dev/null | grep -q '^  batch_num  *4$' ||
        { echo "FAIL [$size]: batch_num 'all' is not the 4 files of the data folder"; "$NB" --db "$D/runs.db" history show "$cal" | head -20; fails=$((fails + 1)); }

    # Compile: the ATC form as filled in from the model, then the log
    keys 4 F5
    wait_for "compile form" "input_fp16_nodes" || return
    keys F10
    wait_for "compile" "Compile +ok" || return
    expect "atc log" "ATC run success"
    nocut "compile"
    expect "compile: the arena whole" "arena [0-9.]+ KiB \(est\.\)"
    # the work folder: <stem>-<8 hex of the model path's hash>
    WD=$(ls -d "$D"/work/conv-???????? 2>/dev/null | head -1)
    [ -n "$WD" ] && [ -s "$WD/conv.exeom" ] ||
        { echo "FAIL [$size]: no $D/work/conv-XXXXXXXX/conv.exeom"; fails=$((fails + 1)); }

    # a resize on the way keeps every step's state; under 80x24 a message in place of the
    # screens (issue 38)
    tm resize-window -t nb -x 60 -y 15
    wait_for "too small" "terminal too small: need 80x24, have 60x15"
    absent "too small: no screen drawn" "Compile +ok"
    tm resize-window -t nb -x $(($1 + 2)) -y $(($2 + 1))
    wait_for "after a resize" "Compile +ok"
    expect "after a resize: earlier steps" "Quantize +(ok|!!)"
    tm resize-window -t nb -x "$1" -y "$2"

    # Run on the simulator: the input is the evaluation set's first sample; the cycle count
    # and the profile
    keys 5
    wait_for "run input" "input_?[a-z0-9]* = evaluation sample 1/4: b0.bin|x = evaluation sample 1/4" || return
    keys F5
    wait_for "run" "Run +ok" || return
    expect "run cycles" "[0-9]+ cycles"
    expect "run profile" "Conv_0"
    expect "run profile: the sort mark apart from its title" "cycles (v|▼)"
    nocut "run"
    # each run its own output folder (issue 38: every run wrote run/, a recorded run's
    # output replaced by the next): a second run writes run.2, run.1 and its record stay
    [ -s "$WD/run.1/y.npy" ] || { echo "FAIL [$size]: no $WD/run.1/y.npy"; fails=$((fails + 1)); }
    cp "$WD/run.1/y.npy" "$D/first.npy" 2>/dev/null
    keys F5
    t0=$(date +%s)
    while [ ! -s "$WD/run.2/y.npy" ] && [ $(($(date +%s) - t0)) -lt 30 ]; do sleep 0.2; done
    wait_for "the second run" "^run: [0-9.]+ ms" || return
    cmp -s "$WD/run.1/y.npy" "$D/first.npy" && [ -s "$WD/run.2/y.npy" ] ||
        { echo "FAIL [$size]: run.1 changed or no run.2: $(ls "$WD")"; fails=$((fails + 1)); }
    "$NB" --db "$D/runs.db" history list --kind run --limit 2 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1 }' >"$D/runs"
    for r in $(cat "$D/runs"); do
        "$NB" --db "$D/runs.db" history show "$r" 2>/dev/null | awk '$1 == "output_dir" { print $2 }'
    done | sed 's|.*/||' | sort | tr '\n' ' ' >"$D/dirs"
    [ "$(cat "$D/dirs")" = "run.1 run.2 " ] ||
        { echo "FAIL [$size]: the two runs' recorded output folders: '$(cat "$D/dirs")'"; fails=$((fails + 1)); }

    # Compare: infer (golden) then file_compare, one row per layer, cosine column
    keys 6 F5
    wait_for "compare" "Compare +(ok|!!)" 40 || return
    expect "compare cosine column" "cosine"
    expect "compare first layer" "Conv_0"
    expect "compare: layers over threshold marked without colour" "# ! op|over +layer"
    nocut "compare"
    # x and l with nothing over threshold say so (issue 38: silent)
    if screen | grep -q " 0 over threshold"; then
        keys x
        wait_for "compare: x with nothing over" "^nothing over threshold"
        keys l
        wait_for "compare: l with nothing over" "^nothing over threshold: no SQNR drop|^largest SQNR drop: .*\(nothing over threshold\)"
    fi
    # Enter opens the selected layer: the NPU tasks fused into it, its metrics
    keys Enter
    wait_for "compare layer view" "NPU tasks fused into this layer" || return
    expect "compare layer metrics" "cosine"
    keys q
    wait_for "layer view closed" "F1Help"
    # the sidebar's History count follows the runs before History is opened
    expect "the sidebar's run count" "^ +[0-9]+ runs +(│|x)"

    # History: the export through the save dialog (format form, then a new name)
    keys 7
    wait_for "history" "History: [0-9]+ runs" || return
    absent "the Compare step's message after the switch" "^layer Conv_0"
    expect "history lists the compare" "compare +ok"
    nocut "history"
    expect "history: the key hint whole" "f filter  x export"
    # the diff of two runs: the differing parameter's B value in sight at any width
    keys Home Space Space
    wait_for "history: two runs marked" "marked: runs [0-9]+ and [0-9]+" || return
    keys d
    wait_for "history diff" "diff: run [0-9]+ \(A\) vs run" || return
    expect "history diff: B's value of argv" 'B  \["nanobench"|\] +\["nanobench"'
    nocut "history diff"
    keys q
    wait_for "diff closed" "F1Help"
    keys Home Space Space Home
    wait_for "history: the marks off" "Enter details" || return
    # Enter: the newest run's details with its lineage up to the model
    keys Enter
    wait_for "history details" "lineage up" || return
    expect "history lineage" "run +ok"
    keys q
    wait_for "details closed" "F1Help"
    # the job ended: its "running ... (Esc cancels)" gone from the status line (issue 38)
    absent "the status line after history show" "running history show"
    # m: this model's bring-up, the runs recorded under the deploy model, the exeom or no
    # model included; the export takes the same runs
    keys m
    wait_for "history: this model" "model conv.onnx and derived" || return
    expect "this model: its compare run" "compare +ok"
    expect "this model: its run on the NPU" " run +ok"
    keys x
    wait_for "export format form" "Export the listed runs" || return
    keys Enter
    wait_for "save dialog" "save as a new name" || return
    keys Enter
    wait_for "file name prompt" "^File name:" || return
    keys Enter
    wait_for "export" "exported [0-9]+ runs? to" || return
    f="$WD/export/runs.csv"
    if [ -s "$f" ]; then
        head -1 "$f" | grep -q "^run_id,kind,status,model" ||
            { echo "FAIL [$size]: export header: $(head -1 "$f")"; fails=$((fails + 1)); }
        grep -q ",compare,ok," "$f" ||
            { echo "FAIL [$size]: the export lacks the compare run"; fails=$((fails + 1)); }
        grep -q ",run,ok," "$f" ||
            { echo "FAIL [$size]: the export lacks the run on the NPU"; fails=$((fails + 1)); }
    else
        echo "FAIL [$size]: no $f"
        fails=$((fails + 1))
    fi

    # a limit under the runs listed: the header says so, the export form too
    keys f
    wait_for "filter form" "History filter" || return
    keys Down Down Down Down C-u
    text "1"
    keys F10
    wait_for "history: the limit said" "History: 1 run \(newest 1 of [0-9]+; f: limit\)" || return
    keys x
    wait_for "export form: not all" "Export the listed runs \(1 of [0-9]+" || return
    keys Escape
    sleep 0.3

    # a run recorded meanwhile by another process: History reads the list again, its count,
    # the filters and the marks (issue 38: "9 runs", the filter and the marks kept)
    keys Space
    wait_for "history: a run marked" "marked: run [0-9]+" || return
    "$NB" --db "$D/runs.db" info "$T/conv.onnx" >/dev/null 2>&1
    wait_for "history: the new run noticed" "new runs: the list read again, filters cleared, marks cleared" || return
    expect "history: the filters back to any" "History: [0-9]+ runs +kind any +model any"
    absent "history: the marks gone" "marked: run"

    # quit
    keys q
    wait_for "quit" "nanobench exited 0"
}

# the same model opened again (same work folder and database): the deploy model, exeom and
# run of the session before are taken up, so Run and Compare go on from them
resume() {
    size="resume $1x$2"
    D="$T/$1x$2"
    tm kill-session -t nb >/dev/null 2>&1
    tm new-session -d -s nb -x "$1" -y "$2" \
        "env $3 NANOBENCH_WORK='$D/work' ${NANOBENCH_BIN:+NANOBENCH_BIN='$NANOBENCH_BIN'} \
         '$NB' --db '$D/runs.db' '$T/conv.onnx'; sleep 600" ||
        { echo "FAIL [$size]: tmux new-session"; fails=$((fails + 1)); return; }
    wait_for "model info" "Model +ok" || return
    expect "taken up" "taken up from earlier sessions: Estimate, Quantize, Compile, Run"
    expect "the sidebar: Estimate" "Estimate +ok"
    # Estimate of the earlier session shown again (issue 38: not picked up)
    keys 2
    wait_for "Estimate shown again" "TOTAL_WEIGHT_SIZE" || return
    expect "Estimate: its layer table" "Conv_0 +Conv"
    expect "the sidebar: Quantize" "Quantize +(ok|!!)"
    expect "the sidebar: Compile" "Compile +ok"
    expect "the sidebar: Run" "Run +ok"
    keys 5
    wait_for "Run: the exeom of the earlier session" "Run conv.exeom" || return
    expect "Run: the earlier run" "of an earlier session"
    keys 6 F5
    wait_for "compare of the earlier run" "Compare +(ok|!!)" 40
    # the same model, input and shape: the golden dumps of the session before, not a new set
    expect "the golden dumps reused" "^golden reused: "
    g=$(ls "$D"/work/conv-????????/golden | tr '\n' ' ')
    [ "$g" = "dump manifest.json " ] ||
        { echo "FAIL [$size]: golden folder holds '$g', not one dump folder"; fails=$((fails + 1)); }
}

# b on the Model step: the whole bring-up in one job (nb_bringup in a forked worker, its
# options a structure), recorded as a bringup run with its steps as children; Quantize,
# Compile and Run take up what it made, the verdict on the status line
whole() {
    size="b $1x$2"
    D="$T/whole"
    mkdir -p "$D"
    tm kill-session -t nb >/dev/null 2>&1
    tm new-session -d -s nb -x "$1" -y "$2" \
        "env $3 NANOBENCH_WORK='$D/work' ${NANOBENCH_BIN:+NANOBENCH_BIN='$NANOBENCH_BIN'} \
         '$NB' --db '$D/runs.db' '$T/conv.onnx'; echo \"nanobench exited \$?\"; sleep 600" ||
        { echo "FAIL [$size]: tmux new-session"; fails=$((fails + 1)); return; }
    wait_for "model info" "Model +ok" || return
    keys b
    wait_for "bring-up form" "Data folder" || return
    text "$T/calib"
    keys F10
    wait_for "bring-up done" "^bringup [0-9]+: " 60 || return
    expect "Compile taken up" "Compile +ok"
    expect "Run taken up" "Run +ok"
    bid=$("$NB" --db "$D/runs.db" history list --kind bringup --limit 1 2>/dev/null | awk 'NR == 2 { print $1 }')
    "$NB" --db "$D/runs.db" history show "$bid" >"$D/show" 2>/dev/null
    grep -q "^status     ok$" "$D/show" && [ "$(grep '^descendants' "$D/show" | tr ',' '\n' | wc -l)" -ge 10 ] ||
        { echo "FAIL [$size]: the bringup run and its steps"; cat "$D/show"; fails=$((fails + 1)); }
    # the search from the form (issue 40): a target of 150 dB runs it (every configuration
    # calibrated, compiled and run), and the summary says it is not reached
    keys b
    wait_for "bring-up form again" "Target SQNR" || return
    keys Tab Tab
    text "150"
    keys F10
    wait_for "search done" "^bringup [0-9]+: " 120 || return
    sum=$(find "$D/work" -name summary.json -newer "$D/show" | head -1)
    /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["search"]; assert s["target_sqnr_db"] == 150 and not s["reached"] and s["tries"] > 0, s' "$sum" ||
        { echo "FAIL [$size]: the search from the workbench ($sum)"; fails=$((fails + 1)); }
    keys F10
    wait_for "quit" "nanobench exited 0"
}

# a model whose only dynamic dim is the batch: taken as 1 (as estimate does), the Model
# step ok; one with another dynamic dim: a warning until --input_shape is set
dynamic() {
    size="dynamic $1"
    "$FIX" "$1" "$T/$1.onnx" || { echo "FAIL: make_fixture $1"; fails=$((fails + 1)); return; }
    tm kill-session -t nb >/dev/null 2>&1
    tm new-session -d -s nb -x 80 -y 24 \
        "env LC_ALL=C.UTF-8 TERM=screen-256color NANOBENCH_WORK='$T/dyn/work' \
         ${NANOBENCH_BIN:+NANOBENCH_BIN='$NANOBENCH_BIN'} '$NB' --db '$T/dyn.db' '$T/$1.onnx'; \
         sleep 600" || { echo "FAIL [$size]: tmux new-session"; fails=$((fails + 1)); return; }
    wait_for "model info" "Model +(ok|!!)" || return
    expect "$2" "$3"
}

bringup 80 24 "LC_ALL=C.UTF-8 TERM=screen-256color"
resume 80 24 "LC_ALL=C.UTF-8 TERM=screen-256color"
bringup 200 50 "LC_ALL=C NO_COLOR=1 TERM=screen"
whole 100 30 "LC_ALL=C TERM=screen"
dynamic shared_dim "a dynamic batch taken as 1, the step ok" "Model +ok"
expect "the batch as 1 in --input_shape" "│--input_shape a:1,3;b:1,3"
expect "the note on the sidebar" "batch as 1"
dynamic dyn_time "a dynamic time dim: a warning" "Model +!!"
expect "the hint to set --input_shape" "press e to set --input_shape"
# the picker: a name with a control character is shown escaped; the list still opens
cp "$T/conv.onnx" "$T/$(printf 'tab\there.onnx')"
keys o
wait_for "the picker: a name with a tab, escaped" 'tab\\there\.onnx' &&
    expect "the picker: the other names" "conv\.onnx"
keys Escape

# a form's answers that only together are refused (a config file and batch_num): the step
# marked failed on the sidebar, the reason on the status line (issue 38: no mark)
size="form refused"
tm kill-session -t nb >/dev/null 2>&1
tm new-session -d -s nb -x 80 -y 24 \
    "env LC_ALL=C.UTF-8 TERM=screen-256color NANOBENCH_WORK='$T/fr/work' \
     ${NANOBENCH_BIN:+NANOBENCH_BIN='$NANOBENCH_BIN'} '$NB' --db '$T/fr.db' '$T/conv.onnx'; \
     sleep 600" || { echo "FAIL [$size]: tmux new-session"; fails=$((fails + 1)); }
if wait_for "model info" "Model +ok"; then
    keys 3 F5
    wait_for "quantize form" "Data folder" && {
        text "$T/calib"
        keys Down Down
        text "$T/conv.onnx"
        keys F10
        wait_for "refused: the reason" "give a config file or batch_num, not both" &&
            expect "refused: the sidebar's mark" "Quantize +XX"
    }
fi

# TERM=vt100 has no F5: ESC [ 1 5 ~ arrives as Esc then text; it runs the step, never a
# cancel; an Alt+key (ESC x) is no cancel either
size="vt100"
tm kill-session -t nb >/dev/null 2>&1
tm new-session -d -s nb -x 80 -y 24 \
    "env LC_ALL=C TERM=vt100 NANOBENCH_WORK='$T/vt/work' \
     ${NANOBENCH_BIN:+NANOBENCH_BIN='$NANOBENCH_BIN'} '$NB' --db '$T/vt.db' '$T/conv.onnx'; \
     sleep 600" || { echo "FAIL [$size]: tmux new-session"; fails=$((fails + 1)); }
if wait_for "model info" "Model +ok"; then
    keys 2
    text "$(printf '\033[15~')"
    wait_for "vt100: ESC [15~ runs the step" "Estimate +ok"
    text "$(printf '\033x')"
    absent "vt100: Alt+x is no cancel" "cancel"
fi

# a database the children cannot record in: the step is a warning, the reason on the
# status line (was: ok, the run silently lost)
size="bad db"
printf 'this is not a sqlite database at all, just text padding padding\n' >"$T/bad.db"
tm kill-session -t nb >/dev/null 2>&1
tm new-session -d -s nb -x 120 -y 30 \
    "env LC_ALL=C TERM=screen HOME='$T/home' NANOBENCH_WORK='$T/bad/work' \
     ${NANOBENCH_BIN:+NANOBENCH_BIN='$NANOBENCH_BIN'} '$NB' --db '$T/bad.db' '$T/conv.onnx'; \
     sleep 600" || { echo "FAIL [$size]: tmux new-session"; fails=$((fails + 1)); }
if wait_for "model info" "Model +!!"; then
    expect "the reason on the status line" "not recorded: .*not a database"
    expect "the sidebar's note" "not recorded"
    # Settings: ~ in the work folder is $HOME, as the picker reads it
    keys F2
    wait_for "settings" "Work folder" && {
        keys C-u
        text "~/nbwork"
        keys F10
        sleep 0.3
        keys F2
        wait_for "settings: ~ expanded" "Work folder +$T/home/nbwork"
        keys Escape
    }
fi

# a terminal without cursor addressing, or one terminfo does not know: one line, exit 2
for term in dumb no-such-term; do
    size="TERM=$term"
    tm kill-session -t nb >/dev/null 2>&1
    tm new-session -d -s nb -x 80 -y 24 \
        "env TERM=$term LSAN_OPTIONS=suppressions='$SRC/tests/lsan.supp' '$NB' --db '$T/x.db' '$T/conv.onnx'; echo \"nanobench exited \$?\"; \
         sleep 600" || { echo "FAIL [$size]: tmux new-session"; fails=$((fails + 1)); continue; }
    wait_for "refused" "^nanobench: the terminal '$term' cannot run the workbench" &&
        expect "exit 2" "^nanobench exited 2"
done

# not a terminal: refused with a one-line message, exit 2
out=$("$NB" --db "$T/x.db" "$T/conv.onnx" </dev/null 2>&1)
rc=$?
[ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] ||
    { echo "FAIL: without a terminal: exit $rc, '$out'"; fails=$((fails + 1)); }

echo "tui: $fails failure(s) in $(($(date +%s) - start)) s"
[ $fails -eq 0 ]
