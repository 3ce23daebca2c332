#!/usr/bin/env bash
# Connection-scale benchmark of kdissect on generated captures.
#
#   internal/testtools/bench/scale.sh [--cases "synflood:50000 synflood:500000 ..."] [--dir DIR] [--bin KDISSECT]
#   internal/testtools/bench/scale.sh --tls    # the TLS cases below instead
#
# internal/testtools/bench/scalegen writes each capture once (see its doc comment):
#   synflood     SYN + a 40-byte request head claiming a 1 MiB frame, never closed
#   churn        SYN, one CreateAcls v3 request, client FIN
#   holes        84 KiB of out-of-order data after a 1-byte hole
#   tlshello     SYN + a 517-byte TLS 1.3 ClientHello, never closed
#   tlsrecords   both hellos and three encrypted records each way, never closed
#   tlspending   ClientHello + 1 MB of records waiting for a ServerHello
#   tlsbighello  a 250 KB ClientHello, 6 KB short of its end
# then each is read once into the page cache and timed once with
# `kdissect --summary --port 9092` under /usr/bin/time (no key log: TLS is
# followed, not decrypted). A case KIND:CONNS:MAXCONNS also passes
# --max-conns MAXCONNS. Prints a Markdown table: connections, elapsed
# seconds, CPU seconds (user+system: the fairer figure on a shared
# machine), peak RSS and peak RSS per connection.
# --bin measures another build (e.g. an older commit) on the same files.
set -euo pipefail
cd "$(dirname "$0")/../../.."

cases="synflood:50000 synflood:500000 synflood:2000000 churn:300000 holes:10000"
tlscases="tlshello:100000 tlshello:300000 tlshello:300000:10000 tlsrecords:100000 tlsrecords:300000 tlsrecords:300000:10000 tlspending:300 tlsbighello:1000"
dir=${TMPDIR:-/tmp}/kdissect-scale
bin=
while [ $# -gt 0 ]; do
  case $1 in
    --cases) cases=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --tls) cases=$tlscases; shift ;;
    *) echo "usage: $0 [--tls | --cases \"CASE:CONNS[:MAXCONNS]...\"] [--dir DIR] [--bin KDISSECT]" >&2; exit 1 ;;
  esac
done
mkdir -p "$dir"

if [ ! -x /usr/bin/time ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
if [ -z "$bin" ]; then
  bin="$dir/kdissect"
  go build -o "$bin" ./cmd/kdissect
fi
go build -o "$dir/scalegen" ./internal/testtools/bench/scalegen

echo "| case | connections | --max-conns | capture MB | seconds | CPU seconds | peak RSS MiB | RSS bytes/conn |"
echo "|---|---|---|---|---|---|---|---|"
for c in $cases; do
  IFS=: read -r kind n maxconns <<<"$c"
  extra=()
  [ -z "$maxconns" ] || extra=(--max-conns "$maxconns")
  file="$dir/$kind-$n.pcap"
  [ -f "$file" ] || "$dir/scalegen" -case "$kind" -conns "$n" -o "$file"
  cat "$file" >/dev/null
  bytes=$(stat -c %s "$file")
  # Exit status 2 (malformed Kafka data) is expected: every flood frame is cut.
  /usr/bin/time -f "%e %U %S %M" -o "$dir/time.out" "$bin" --summary --port 9092 "${extra[@]}" "$file" >/dev/null 2>"$dir/stderr.out" || {
    rc=$?; [ $rc = 2 ] || { echo "$kind $n failed ($rc):" >&2; cat "$dir/stderr.out" >&2; exit 1; }; }
  read -r secs user sys rss < <(tail -n 1 "$dir/time.out")
  awk -v k="$kind" -v n="$n" -v m="${maxconns:--}" -v b="$bytes" -v s="$secs" -v u="$user" -v y="$sys" -v r="$rss" \
    'BEGIN { printf "| %s | %d | %s | %.0f | %.2f | %.2f | %.0f | %.0f |\n", k, n, m, b / 1e6, s, u + y, r / 1024, r * 1024 / n }'
done
