#!/usr/bin/env bash
# kvsim plan and kvsim check end to end: exit codes (0 met, 1 missed, 2 bad input), JUnit XML
# that an XML parser accepts, and a plan's table and HTML report.
# Usage: plan_check_test.sh KVSIM SOURCE_DIR
set -uo pipefail
kvsim=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect_rc() {  # expect_rc WANT DESCRIPTION CMD...
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAIL: $what: exit $rc, want $want"; cat "$tmp/out" "$tmp/err"; fail=1
  else
    echo "ok: $what (exit $rc)"
  fi
}
example=$src/scenarios/examples/rtx4090-llama3.1-8b-multiturn.yaml

cat >"$tmp/pass.yaml" <<YAML
name: pass
scenarios:
  - {name: example, file: $example, slo: "ttft_p90<=30s,request_throughput>=0.1"}
YAML
cat >"$tmp/fail.yaml" <<YAML
name: fail
slo: "request_throughput>=1000,ttft_p90<=30s"
scenarios:
  - {name: example, file: $example}
YAML
cat >"$tmp/bad.yaml" <<YAML
name: bad
scenarios:
  - {name: example, file: $example, slo: "ttft_p99.5<=1s"}
YAML

expect_rc 0 "check: every SLO met" "$kvsim" check -q "$tmp/pass.yaml" --junit "$tmp/pass.xml"
grep -q "PASS example  ttft_ms_p90" "$tmp/out" || { echo "FAIL: no PASS line"; cat "$tmp/out"; fail=1; }
expect_rc 1 "check: an SLO missed" "$kvsim" check -q "$tmp/fail.yaml" --junit "$tmp/fail.xml"
grep -q "FAIL example  requests_per_sec" "$tmp/out" || { echo "FAIL: no FAIL line"; cat "$tmp/out"; fail=1; }
expect_rc 2 "check: unknown metric" "$kvsim" check -q "$tmp/bad.yaml"
grep -q "bad.yaml:3:" "$tmp/err" || { echo "FAIL: no location in the error"; cat "$tmp/err"; fail=1; }
expect_rc 2 "check: missing plan file" "$kvsim" check -q "$tmp/nowhere.yaml"
expect_rc 2 "plan: bad --slo" "$kvsim" plan -q "$example" --slo "ttft<=1s"
grep -q "valid metrics" "$tmp/err" || { echo "FAIL: --slo error lists no metrics"; cat "$tmp/err"; fail=1; }

# JUnit: parsed by a real XML parser; counts as expected.
python3 - "$tmp/pass.xml" "$tmp/fail.xml" <<'PY' || fail=1
import sys, xml.dom.minidom as m
p = m.parse(sys.argv[1]).documentElement
f = m.parse(sys.argv[2]).documentElement
assert p.tagName == "testsuites" and p.getAttribute("tests") == "2" and p.getAttribute("failures") == "0", p.toxml()
assert len(f.getElementsByTagName("testcase")) == 2 and len(f.getElementsByTagName("failure")) == 1, f.toxml()
assert f.getElementsByTagName("testcase")[0].getAttribute("name") == "request_throughput>=1000"
print("ok: JUnit XML parses")
PY

# A small plan: one variant, one seed, a capped search; the table and a self-contained report.
expect_rc 0 "plan with --html" "$kvsim" plan -q "$example" --slo "ttft_p90<=1s" --variant "as-is:" --seeds 1 \
  --max-load 16 -j 2 --html "$tmp/report.html"
grep -q "max clients" "$tmp/out" || { echo "FAIL: no table"; cat "$tmp/out"; fail=1; }
grep -q "<svg" "$tmp/report.html" || { echo "FAIL: no chart in the report"; fail=1; }
if grep -Eq "<script|(src|href)=\"https?:" "$tmp/report.html"; then echo "FAIL: report not self-contained"; fail=1; fi
exit $fail
