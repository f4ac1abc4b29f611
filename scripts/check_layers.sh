#!/bin/sh
# The engines' layering (issue 18): ir -> ref -> atc -> quant -> estimate -> compile ->
# runtime_sim -> accucmp -> db -> bringup -> app (bringup: the pipeline over them all). A file may include the headers of its own layer and
# of the layers before it, never of a later one, nor of another engine at its own level.
# estimate comes after quant: it reads a Q/DQ (QAT) model as atc does (nb_read_npu_input). atc comes before quant: what the NPU's lowering
# runs (nb_npu_rnn_reason: the LSTM/GRU forms the cube takes) decides what calibrate may
# quantize. Each include/nb header belongs to the engine that
# implements it; a relative include ("../ir/ir_internal.h") to the folder it names.
# Inside app/ (the front ends), no include circle: module X (X.c, X.h) uses Y when one of
# its files includes Y.h, and those uses form no loop (tsort names one).
# usage: scripts/check_layers.sh [ROOT]; prints each violation and "layering: N files, M
# includes checked, K violations"; exit 1 when there is one.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
# rank and side of a layer (a side tells apart the layers of one rank)
rank() {
    case $1 in
    ir) echo "0 ir" ;; ref) echo "1 ref" ;; atc) echo "2 atc" ;; quant) echo "3 quant" ;;
    estimate) echo "4 estimate" ;; compile) echo "5 compile" ;; runtime_sim) echo "6 runtime_sim" ;;
    accucmp) echo "7 accucmp" ;; db) echo "8 db" ;; bringup) echo "9 bringup" ;; app) echo "10 app" ;; *) echo "" ;;
    esac
}
# the layer owning a header include/nb/X.h or include/acl/X.h
owner() {
    case $1 in
    nb/status.h|nb/tensor.h|nb/ir.h|nb/json.h) echo ir ;; nb/ref.h) echo ref ;; nb/quant.h) echo quant ;;
    nb/atc.h) echo atc ;; nb/estimate.h) echo estimate ;; nb/exeom.h) echo compile ;;
    nb/sim.h|nb/run.h|acl/acl.h) echo runtime_sim ;; nb/accucmp.h) echo accucmp ;; nb/db.h|nb/report.h) echo db ;; nb/bringup.h) echo bringup ;;
    nb/*) echo unknown ;; *) echo "" ;;
    esac
}
layer_of_file() {
    case $1 in
    engine/*) d=${1#engine/}; echo "${d%%/*}" ;;
    db/*) echo db ;; app/*) echo app ;;
    include/*) owner "${1#include/}" ;;
    esac
}
files=0; incs=0; bad=0
for f in $(find engine db app include -name '*.c' -o -name '*.h' | sort); do
    me=$(layer_of_file "$f")
    [ -n "$me" ] || continue
    set -- $(rank "$me")
    [ $# -eq 2 ] || { echo "$f: layer '$me' is not in the order"; bad=$((bad + 1)); continue; }
    my_rank=$1; my_side=$2
    files=$((files + 1))
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case $inc in
        ../*/*) o=$(echo "$inc" | sed 's|^\.\./\([^/]*\)/.*|\1|') ;;
        ../*) continue ;; # the parent folder's own header (app/tui -> app/cli.h): one layer
        nb/*|acl/*) o=$(owner "$inc") ;;
        *) continue ;; # the engine's own headers, generated bindings
        esac
        incs=$((incs + 1))
        if [ "$o" = unknown ]; then
            echo "$f: includes $inc, which belongs to no layer"; bad=$((bad + 1)); continue
        fi
        set -- $(rank "$o")
        if [ "$1" -gt "$my_rank" ] || { [ "$1" -eq "$my_rank" ] && [ "$2" != "$my_side" ]; }; then
            echo "$f ($me): includes $inc ($o), a later or sibling layer"; bad=$((bad + 1))
        fi
    done
done
# an include circle inside app/: module X (X.c and X.h) -> Y when one of X's files includes
# Y.h; tsort refuses a graph with a loop and names its modules
edges=$(for f in $(find app -name '*.c' -o -name '*.h' | sort); do
    d=$(dirname "$f"); m=${f%.*}
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case $inc in nb/*|acl/*) continue ;; esac
        t=$(cd "$d" 2>/dev/null && realpath -m --relative-to="$root" "$inc" 2>/dev/null)
        [ -f "$root/$t" ] || continue
        case $t in app/*) ;; *) continue ;; esac
        [ "${t%.*}" = "$m" ] || echo "$m ${t%.*}"
    done
done)
loop=$(printf '%s\n' "$edges" | sed '/^$/d' | tsort 2>&1 >/dev/null | sed -n 's/^tsort: //p' | grep -v 'input contains a loop' | tr '\n' ' ')
if [ -n "$loop" ]; then
    echo "app/: an include circle: $loop"; bad=$((bad + 1))
fi
echo "layering: $files files, $incs includes checked, $bad violations"
[ "$bad" -eq 0 ]
