#!/bin/sh
# nanobench report (issue 23): the conv fixture brought up twice (ifmr, then minmax), the
# first's report opened in headless Chromium (Debian's chromium): a screenshot is taken and
# the page's DOM checked for every section, a plot in each of the plotted ones (gnuplot's
# SVG), and the numbers the summary prints (the same numbers); the two side by side with the
# table of what changed; the report of a run whose folder is gone says so per section
# (exit 0); bringup's own OUT/report.html; bad arguments exit 2 with one line.
# usage: test_report.sh NANOBENCH MAKE_FIXTURE
NB=$1; FIX=$2
T=$(mktemp -d /tmp/nb_test_report.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v chromium >/dev/null || { echo "FAIL: chromium is not installed (apt-get install chromium)"; exit 1; }
command -v gnuplot >/dev/null || { echo "FAIL: gnuplot is not installed (apt-get install gnuplot-nox)"; exit 1; }
DB="$T/runs.db"
"$FIX" conv "$T/conv.onnx" || fail "make_fixture conv"
mkdir -p "$T/x"
node -e 'const fs = require("fs"); let s = 7;
    const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 1073741824 - 1;
    for (let f = 0; f < 6; f++) {
        const x = new Float32Array(192);
        for (let i = 0; i < 192; i++) x[i] = rnd();
        fs.writeFileSync(`${process.argv[1]}/b${f}.bin`, Buffer.from(x.buffer));
    }' "$T/x" || fail "data"
"$NB" --db "$DB" bringup "$T/conv.onnx" --data_dir "$T/x" --out "$T/b1" --json >"$T/s1.json" 2>"$T/e1" ||
    { fail "bringup 1: $(tail -1 "$T/e1")"; exit 1; }
"$NB" --db "$DB" bringup "$T/conv.onnx" --data_dir "$T/x" --algo minmax --out "$T/b2" --json >"$T/s2.json" 2>"$T/e2" ||
    { fail "bringup 2: $(tail -1 "$T/e2")"; exit 1; }
id1=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).runs.bringup)' "$T/s1.json")
id2=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).runs.bringup)' "$T/s2.json")
[ -s "$T/b1/report.html" ] || fail "bringup wrote no report.html"

# report --text: the bring-up's own one-screen text again, from its summary.json, line for
# line what bringup printed (a third bring-up, in text)
"$NB" --db "$DB" bringup "$T/conv.onnx" --data_dir "$T/x" --out "$T/b3" >"$T/t3.txt" 2>"$T/e3" ||
    fail "bringup 3: $(tail -1 "$T/e3")"
id3=$(sed -n 's/^runs *bringup \([0-9]*\):.*/\1/p' "$T/t3.txt")
[ -n "$id3" ] || fail "bringup 3's text names no bringup run: $(cat "$T/t3.txt")"
"$NB" --db "$DB" report "$id3" --text >"$T/r3.txt" 2>"$T/err" || fail "report $id3 --text: $(cat "$T/err")"
cmp -s "$T/t3.txt" "$T/r3.txt" || fail "report --text differs from bringup's text: $(diff "$T/t3.txt" "$T/r3.txt")"
grep -q "^estimate   TOTAL_WEIGHT_SIZE 4800," "$T/r3.txt" || fail "report --text: no estimate line"
"$NB" report "$T/b3" --text >"$T/r3b.txt" 2>"$T/err" && cmp -s "$T/t3.txt" "$T/r3b.txt" ||
    fail "report FOLDER --text differs from bringup's text"
"$NB" --db "$DB" report "$id3" --text -o "$T/x.html" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "report --text with -o: not one line and exit 2"
mkdir -p "$T/empty"
"$NB" report "$T/empty" --text >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "summary.json" "$T/err" || fail "report --text of a folder without summary.json: $(cat "$T/err")"

# dom FILE OUT: Chromium's DOM of FILE (after layout), and a screenshot OUT.png
dom() {
    HOME="$T" timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --dump-dom "file://$1" >"$2" 2>/dev/null || fail "chromium --dump-dom $1"
    HOME="$T" timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1100,3000 --screenshot="$2.png" "file://$1" >/dev/null 2>&1
    [ -s "$2.png" ] || fail "chromium took no screenshot of $1"
}

"$NB" --db "$DB" report "$id1" -o "$T/r1.html" >"$T/out" 2>"$T/err" || fail "report $id1: $(cat "$T/err")"
dom "$T/r1.html" "$T/d1.html"
node -e '
const fs = require("fs");
const d = fs.readFileSync(process.argv[1], "utf8"), s = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const bad = [];
const cell = id => { const m = d.match(new RegExp(`id="${id}"[^>]*>([^<]*)<`)); return m ? m[1] : null; };
const section = id => { const a = d.indexOf(`<section id="${id}"`); if (a < 0) return null;
                        const b = d.indexOf("</section>", a); return d.slice(a, b); };
for (const id of ["sec-model", "sec-estimate", "sec-calibration", "sec-npu", "sec-outputs", "sec-compare"])
    if (section(id) === null) bad.push("no section " + id);
for (const id of ["sec-model", "sec-estimate", "sec-calibration", "sec-npu", "sec-compare"])
    if (section(id) !== null && !/<svg[^>]*>[\s\S]*<\/svg>/.test(section(id))) bad.push("no plot in " + id);
const want = {"est-exeom": String(s.estimate.TOTAL_EXEOM_SIZE), "est-weight": String(s.estimate.TOTAL_WEIGHT_SIZE),
              "npu-cycles-0": String(s.npu.cycles), "npu-ms_64mhz-0": s.npu.ms_64mhz.toFixed(3),
              "npu-exeom_bytes-0": String(s.compile.exeom_bytes),
              "out-cos-worst-0-0": s.outputs[0].cosine_worst.toFixed(5),
              "out-cos-mean-0-0": s.outputs[0].cosine_mean.toFixed(5),
              "cmp-input-0": `on evaluation input ${s.compare.input + 1} of ${s.evaluation.count} (the lowest output SQNR)`,
              "out-sqnr-mean-0-0": s.outputs[0].sqnr_db_mean.toFixed(1),
              "cal-sqnr-0": s.calibration.output_sqnr_db.toFixed(1),
              "cmp-verdict-0": s.compare.verdict_text};
for (const [id, v] of Object.entries(want))
    if (cell(id) !== v) bad.push(`${id}: ${cell(id)} in the page, ${v} in the summary`);
if (!/<figcaption>/.test(d) || !/<details>/.test(d)) bad.push("no captions or data tables");
if (bad.length) { console.log(bad.join("\n")); process.exit(1); }' "$T/d1.html" "$T/s1.json" ||
    fail "report $id1: the page (above)"

# two side by side: the table of what changed (--algo: not given reads as its default), both
# on the same axes; one model and one estimate come out once
"$NB" --db "$DB" report "$id1" "$id2" -o "$T/r12.html" >/dev/null 2>"$T/err" || fail "report $id1 $id2: $(cat "$T/err")"
dom "$T/r12.html" "$T/d12.html"
grep -q 'id="sec-changes"' "$T/d12.html" && grep -q 'class="changed"><th>--algo</th><td>ifmr (default)</td><td>"minmax"</td>' "$T/d12.html" &&
    grep -q "bringup $id1" "$T/d12.html" && grep -q "bringup $id2" "$T/d12.html" &&
    [ "$(grep -c 'id="npu-cycles-1"' "$T/d12.html")" = 1 ] ||
    fail "report of two: no changes table naming --algo, or no second column"
[ "$(grep -c 'id="sec-model"' "$T/d12.html")" = 1 ] && ! grep -q '<th>--out</th>' "$T/d12.html" ||
    fail "report of two: the model's section twice, or --out listed as a change"

# a step of the bringup (its compare) names the same report; a folder path works too
cmp_id=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).runs.compare)' "$T/s1.json")
"$NB" --db "$DB" report "$cmp_id" -o "$T/rc.html" >/dev/null 2>&1 && grep -q "bringup $id1" "$T/rc.html" ||
    fail "report of a step ($cmp_id) does not find its bringup"
"$NB" report "$T/b2" -o "$T/rf.html" >/dev/null 2>&1 && grep -q 'id="sec-compare"' "$T/rf.html" ||
    fail "report of a folder"

# the first run's folder gone: each section says so, from the history's metrics
rm -rf "$T/b1"
"$NB" --db "$DB" report "$id1" -o "$T/rg.html" >/dev/null 2>"$T/err" || fail "report of a run whose files are gone: $(cat "$T/err")"
[ "$(grep -c 'class="gone"' "$T/rg.html")" -ge 5 ] || fail "report of a run whose files are gone: sections do not say so"

# a later bringup into the same folder (b3 again): bringup says it replaces run id3's files;
# run id3's report no longer shows them as its own, its --text is refused
"$NB" --db "$DB" bringup "$T/conv.onnx" --data_dir "$T/x" --out "$T/b3" --json >"$T/s4.json" 2>"$T/e4" ||
    fail "bringup 4: $(tail -1 "$T/e4")"
grep -q "holds bringup $id3's files: they are replaced" "$T/e4" || fail "bringup into b3 did not say it replaces bringup $id3's files: $(cat "$T/e4")"
id4=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).runs.bringup)' "$T/s4.json")
"$NB" --db "$DB" report "$id3" --text >"$T/r3b.txt" 2>"$T/err"; st=$?
[ $st = 2 ] && grep -q "is bringup $id4's now" "$T/err" && [ ! -s "$T/r3b.txt" ] ||
    fail "report $id3 --text of a replaced folder: exit $st: $(cat "$T/err")"
"$NB" --db "$DB" report "$id3" -o "$T/r3b.html" >/dev/null 2>"$T/err" || fail "report of a replaced run: $(cat "$T/err")"
grep -q "holds bringup $id4's files now" "$T/r3b.html" && ! grep -q "bringup $id4:" "$T/r3b.html" ||
    fail "report $id3 of a replaced folder shows bringup $id4's files as its own"
"$NB" --db "$DB" report "$id4" --text >/dev/null 2>&1 || fail "report $id4 --text (the folder's own run)"

# bad arguments: one line, exit 2, no file
"$NB" --db "$DB" report 999999 -o "$T/bad.html" 2>"$T/err"; st=$?
[ $st = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && [ ! -e "$T/bad.html" ] || fail "report 999999: exit $st: $(cat "$T/err")"
"$NB" --db "$DB" report "$id2" 2>"$T/err"; st=$?
[ $st = 2 ] && grep -q -- "-o FILE.html is required" "$T/err" || fail "report without -o: exit $st"
"$NB" --db "$DB" report "$id2" -o "$T/nodir/r.html" 2>"$T/err"; st=$?
[ $st = 2 ] && grep -q "cannot write" "$T/err" || fail "report into a missing folder: exit $st: $(cat "$T/err")"
[ $fails = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "report: sections, plots and the summary's numbers in Chromium's DOM; two side by side; files gone said; bad arguments refused"
