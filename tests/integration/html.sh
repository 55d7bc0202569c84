#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# html.sh -- `gauntlet report --format html` on a real sweep of the fixture server, opened
# in headless Chromium: a screenshot kept at $BUILD/report-screenshot.png, and the DOM
# checked for markup that came from a server's answer (it must stay text).
set -euo pipefail
tmp=$(mktemp -d)
cleanup() {
        local f p
        # the test's own safety net: fixture servers a failed run left, and any chromium
        # process of ours (found by our own profile folder, never by name)
        for f in "$tmp"/pids-*; do
                if [ -f "$f" ]; then xargs -r kill -9 <"$f" 2>/dev/null || true; fi
        done
        local cmd
        for p in /proc/[0-9]*; do
                cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
                case "$cmd" in
                *"--user-data-dir=$tmp/profile"*) kill -9 "${p#/proc/}" 2>/dev/null || true ;;
                esac
        done
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$SRCDIR/tests/assert.sh"

case "$BUILD" in
/*) out_dir=$BUILD ;;
*) out_dir=$SRCDIR/$BUILD ;;
esac
shot=$out_dir/report-screenshot.png

browser=$(command -v chromium || true)
[ -n "$browser" ] || fail "chromium is not installed: run .ci/install-deps (as root) to install Debian's chromium"

# The answer a hostile or broken model might give: markup that would run if pasted raw.
hostile='<img src=x onerror="document.title='"''"'pwned'"''"'"><script>document.title='"''"'pwned'"''"'</script>'
cat >"$tmp/m.yaml" <<YAML
engine: generic
model: fixture/tiny-chat
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}"]
env: {HF_TOKEN: "hf_do_not_show_me_42", NCCL_P2P_DISABLE: "1"}
startup_timeout: 4s
request_timeout: 2s
stop_timeout: 1s
axes:
  answer:
    values:
      - {name: correct}
      - {name: hostile, args: [--answer, '$hostile']}
      - {name: oom, args: [--die-after-requests, "1", --log, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]}
      - {name: arch, args: [--die-at-load, --log, "loading weights\\nRuntimeError: CUDA error: no kernel image is available for execution on the device"]}
  delay:
    values:
      - {name: none}
      - {name: 2ms, args: [--token-delay-ms, "2"]}
exclude: [{answer: arch, delay: 2ms}]
bench: {concurrency: [1, 4], input_tokens: 32, output_tokens: 16, requests: 8}
YAML
cat >"$tmp/gpus.json" <<'JSON'
{"driver": "570.86.15", "cuda": "12.8", "gpus": [
 {"name": "NVIDIA H200", "uuid": "GPU-0", "arch": "sm_90", "memory_total_mib": 143771, "memory_used_mib": 0, "utilization": 0, "processes": []},
 {"name": "NVIDIA H200", "uuid": "GPU-1", "arch": "sm_90", "memory_total_mib": 143771, "memory_used_mib": 0, "utilization": 0, "processes": []}]}
JSON

cd "$tmp"
set +e
GAUNTLET_FAKE_GPUS=$tmp/gpus.json "$GAUNTLET" run m.yaml --journal j.db >run.out 2>run.err
status=$?
set -e
[ "$status" -eq 0 ] || { cat run.out run.err; fail "gauntlet run: exit status $status, want 0"; }
"$GAUNTLET" report --format json j.db >r.json
[ "$(jq -r '[.cells[] | select(.axes.answer == "hostile") | .verdict] | unique | join(",")' r.json)" = wrong ] ||
        fail "the hostile cells are not 'wrong': $(jq -c '[.cells[] | {a: .axes, v: .verdict}]' r.json)"
# gauntlet run recorded the simulated GPUs with the sweep: the page must name them.
[ "$(jq -r '.host.gpus | length' r.json)" = 2 ] || fail "the sweep did not record the host's GPUs"

"$GAUNTLET" report --format html j.db >report.html
head -c 15 report.html | grep -x '<!DOCTYPE html>' >/dev/null || fail "not an HTML page: $(head -c 80 report.html)"
# The page itself: the answer is there as text, never as markup; the secret nowhere.
grep -qF '&lt;img src=x onerror=&quot;document.title=&#39;pwned&#39;&quot;&gt;&lt;script&gt;' report.html ||
        fail "the hostile answer is not shown as escaped text"
! grep -q '<img' report.html || fail "raw <img> in the page"
[ "$(grep -o '<script' report.html | wc -l)" -eq 1 ] || fail "a <script> other than the page's own"
! grep -qF hf_do_not_show_me_42 report.html || fail "the HF_TOKEN value is on the page"
grep -qF 'HF_TOKEN=***' report.html || fail "the masked HF_TOKEN is not shown"
grep -qF '<table class="heat"' report.html || fail "two axes but no heatmap"
grep -qF '2 × <b>NVIDIA H200</b> (sm_90, 140 GiB)' report.html || fail "the GPUs are not in the header"
# the two oom cells and the arch one: the log lines around the evidence line, marked
[ "$(grep -c 'around line [0-9]* (the evidence, marked)' report.html)" -eq 3 ] || fail "no log excerpts around the evidence"
grep -qF '<mark><span class="ln">' report.html || fail "the evidence line is not marked in the log excerpt"

chrome() { # the flags every run needs: no sandbox (root), nothing fetched, a fresh profile
        timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
                --disable-background-networking --disable-component-update --disable-sync \
                --user-data-dir="$tmp/profile" "$@" 2>>chrome.err
}
export HOME=$tmp
chrome --screenshot="$tmp/shot.png" --window-size=1366,900 "file://$tmp/report.html" >/dev/null ||
        { tail -20 chrome.err; fail "chromium could not take the screenshot"; }
[ -s shot.png ] || { tail -20 chrome.err; fail "no screenshot written"; }
# A PNG of 1366x900 with something on it (a blank page compresses to a few KiB).
[ "$(od -An -tx1 -N8 shot.png | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
[ "$(od -An -tu1 -j16 -N8 shot.png | tr -s ' ' | sed 's/^ //')" = "0 0 5 86 0 0 3 132" ] ||
        fail "the screenshot is not 1366x900: $(od -An -tu1 -j16 -N8 shot.png)"
size=$(stat -c %s shot.png)
[ "$size" -gt 40000 ] || fail "the screenshot is nearly empty ($size bytes)"
mkdir -p "$out_dir"
cp shot.png "$shot"

# The DOM after scripts had their chance: the title is ours, no element came from the answer.
chrome --dump-dom --virtual-time-budget=2000 "file://$tmp/report.html" >dom.html ||
        { tail -20 chrome.err; fail "chromium could not dump the DOM"; }
title=$(grep -o '<title>[^<]*</title>' dom.html | head -1)
case "$title" in
*pwned*) fail "the page's title was changed by the model's answer: $title" ;;
"<title>gauntlet: generic · fixture/tiny-chat · 2 of 8 pass</title>") ;;
*) fail "unexpected title: '$title'" ;;
esac
! grep -q '<img' dom.html || fail "an <img> element in the DOM"
[ "$(grep -o '<script' dom.html | wc -l)" -eq 1 ] || fail "a <script> element other than the page's own in the DOM"
grep -qF '&lt;script&gt;document.title=' dom.html || fail "the answer is not in the DOM as text"
[ "$(grep -o '<details class="cell v-crash" id="c-[0-9a-f]*" open' dom.html | wc -l)" -eq 3 ] ||
        fail "the three crashed cells are not open"
echo "html.sh: all good (screenshot: $shot, $size bytes)"
