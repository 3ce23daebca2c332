#!/bin/sh
# What kcat (librdkafka 2.0.2, Debian 12's kcat package) sent for
# librdkafka.pcap: two producers of five records each, uncompressed and
# zstd, with a header, then a consumer reading them back.
set -e
for c in none zstd; do
  python3 -c "
for i in range(5): print('key-%d:' % i + ('librdkafka $c record %d ' % i) * 20)" |
    kcat -P -b 127.0.0.1:29092 -t t1 -p 1 -z $c -K: -H origin=kcat
done
kcat -C -b 127.0.0.1:29092 -t t1 -p 1 -o beginning -e -f '%k\n'
