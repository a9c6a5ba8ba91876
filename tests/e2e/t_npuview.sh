#!/bin/sh
# npuview end to end: headless pictures of every view of a synthetic trace
# (PNG of the asked size), a range, HiDPI scale, --bench JSON, and clear
# errors for a damaged trace and bad options.
set -u
: "${NPU_BUILD:?}" "${NPU_ROOT:?}"
V="$NPU_BUILD/bin/npuview"
S="$NPU_BUILD/bin/npt-synth"
[ -x "$V" ] || { echo "FAIL: no $V"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$NPU_ROOT" || exit 1

"$S" -o "$tmp/s.npt" --events 30000 --cores 4 >/dev/null || fail "npt-synth"
png_size() {  # file -> "W H" from the IHDR chunk
    od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%d %d\n", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }'
}
for v in timeline flame hotspots counters; do
    "$V" --screenshot "$tmp/$v.png" --view $v "$tmp/s.npt" 2>"$tmp/err" || { cat "$tmp/err"; fail "--view $v"; }
    [ "$(head -c 8 "$tmp/$v.png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ] || fail "$v: not a PNG"
    [ "$(png_size "$tmp/$v.png")" = "1280 800" ] || fail "$v: size $(png_size "$tmp/$v.png")"
    # determinism: the same trace gives the same picture (no wall-clock figure in any view)
    "$V" --screenshot "$tmp/$v.2.png" --view $v "$tmp/s.npt" 2>/dev/null || fail "--view $v again"
    cmp -s "$tmp/$v.png" "$tmp/$v.2.png" || fail "$v: two screenshots of one trace differ"
done
# --group: the hotspot table's rows; every grouping draws a different table
for g in functions labels pcs opcodes; do
    "$V" --screenshot "$tmp/g-$g.png" --view hotspots --group $g "$tmp/s.npt" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "--group $g"; }
done
cmp -s "$tmp/g-functions.png" "$tmp/hotspots.png" || fail "--group functions is not the default table"
for a in functions labels pcs; do for b in labels pcs opcodes; do
    [ $a = $b ] || ! cmp -s "$tmp/g-$a.png" "$tmp/g-$b.png" || fail "--group $a and $b draw the same picture"
done; done
"$V" --screenshot "$tmp/r.png" --range 1000:9000 --size 900x600 "$tmp/s.npt" || fail "--range"
[ "$(png_size "$tmp/r.png")" = "900 600" ] || fail "--size 900x600 gave $(png_size "$tmp/r.png")"
"$V" --screenshot "$tmp/h.png" --scale 2 --size 2560x1600 "$tmp/s.npt" || fail "--scale 2"
[ "$(png_size "$tmp/h.png")" = "2560 1600" ] || fail "HiDPI size"
ls "$tmp"/*.tmp.* >/dev/null 2>&1 && fail "temp files left behind"

# --bench: one JSON object with load and frame percentiles
"$V" --bench "$tmp/s.npt" > "$tmp/b.json" || fail "--bench"
python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
assert d['events'] == 30000, d
for k in ('load_s','load_cpu_s','load_decode_cpu_s','load_build_cpu_s','load_post_s','build_ms_p50','build_ms_p99',
          'frame_ms_p50','frame_ms_p99','frame_ms_max','frame_cpu_ms_p50','frame_cpu_ms_p99','frame_cpu_ms_max'):
    assert d[k] >= 0, k
assert d['frame_ms_p50'] <= d['frame_ms_p99'] <= d['frame_ms_max'], d
# the script covers every view: timeline zooms, a live range, both flame graphs, hotspots, counters
names = [p['phase'] for p in d['phases']]
for want in ('timeline-zoom-in', 'timeline-deep-zoom', 'range-select-live', 'flame', 'stall-flame',
             'hotspots-all-keys', 'counters-range-live'):
    assert want in names, (want, names)
assert sum(p['frames'] for p in d['phases']) == d['frames'], d
" "$tmp/b.json" || fail "--bench JSON"

# damaged and missing traces: exit 2 with a message naming the file, no PNG
head -c 100 "$tmp/s.npt" > "$tmp/cut.npt"
"$V" --screenshot "$tmp/x.png" "$tmp/cut.npt" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "cut trace: exit $rc, want 2"
grep -q "cut.npt" "$tmp/err" || { cat "$tmp/err"; fail "message does not name the file"; }
[ -e "$tmp/x.png" ] && fail "PNG written for a bad trace"
printf 'not a trace\n' > "$tmp/txt.npt"
"$V" --screenshot "$tmp/x.png" "$tmp/txt.npt" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "text file: exit $rc, want 2"
grep -q "txt.npt" "$tmp/err" || fail "no message naming the text file"
"$V" --screenshot "$tmp/x.png" "$tmp/none.npt" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "missing file: exit $rc, want 2"
grep -q "none.npt" "$tmp/err" || fail "no message naming the missing file"

# options
"$V" --view nope "$tmp/s.npt" 2>"$tmp/err"; [ $? -eq 2 ] || fail "--view nope"
grep -q "timeline" "$tmp/err" || fail "--view message"
"$V" --group callers "$tmp/s.npt" 2>"$tmp/err"; [ $? -eq 2 ] || fail "--group callers"
grep -q "expected functions, labels, pcs or opcodes" "$tmp/err" || fail "--group message"
"$V" --range 9:3 "$tmp/s.npt" 2>/dev/null; [ $? -eq 2 ] || fail "--range 9:3"
"$V" --size 10x10 "$tmp/s.npt" 2>/dev/null; [ $? -eq 2 ] || fail "--size 10x10"
"$V" --heat warm "$tmp/s.npt" 2>"$tmp/err"; [ $? -eq 2 ] || fail "--heat warm"
grep -q "expected linear or log" "$tmp/err" || fail "--heat message"
"$V" --screenshot "$tmp/hl.png" --heat log "$tmp/s.npt" 2>/dev/null || fail "--heat log"
"$V" --frobnicate "$tmp/s.npt" 2>/dev/null; [ $? -eq 2 ] || fail "unknown option"
"$V" --help | grep -q -- "--screenshot" || fail "--help"
[ "$("$V" --version)" = "npuview $("$NPU_BUILD/bin/npusim" --version | cut -d' ' -f2)" ] || fail "--version: $("$V" --version)"

# the real window, driven through its own event loop ($NPUVIEW_SCRIPT):
# SDL's offscreen driver, and an X server (Xvfb) when xvfb-run is here.
# It starts on the options' tab; K moves the hotspot grouping on, 1 goes to
# the timeline; every step's frame is the window's, read back
window() {  # DRIVER PREFIX [xvfb-run ...]
    drv=$1 pre=$2
    shift 2
    # (leak checking off here: a real window makes SDL dlopen the video
    # and GL libraries, whose own allocations LSan reports from modules
    # already unloaded at exit; npuview's code is leak-checked by the
    # --screenshot, --report and test-viewer runs)
    "$@" env ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" SDL_VIDEODRIVER="$drv" NPUVIEW_SCRIPT="shot:$pre.a.png;key:k;shot:$pre.b.png;key:1;shot:$pre.c.png" \
        "$V" --view hotspots --group pcs "$tmp/s.npt" 2>"$tmp/err" || { cat "$tmp/err"; fail "window ($drv)"; }
    for f in a b c; do
        [ "$(png_size "$pre.$f.png")" = "1280 800" ] || fail "window ($drv) $f: size $(png_size "$pre.$f.png")"
    done
    ! cmp -s "$pre.a.png" "$pre.b.png" || fail "window ($drv): K changed nothing"
    ! cmp -s "$pre.b.png" "$pre.c.png" || fail "window ($drv): 1 changed nothing"
}
window offscreen "$tmp/wo"
if command -v xvfb-run >/dev/null 2>&1; then
    window x11 "$tmp/wx" timeout 60 xvfb-run -a -s "-screen 0 1400x900x24"
else
    echo "xvfb-run not found: the X11 window case is skipped"
fi
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" NPUVIEW_SCRIPT="jump:3" SDL_VIDEODRIVER=offscreen "$V" "$tmp/s.npt" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "unknown step 'jump:3'" "$tmp/err" || fail "a bad script step: $(cat "$tmp/err")"
echo "t_npuview: ok"
