#!/usr/bin/env bash
# Transport benchmark: boots each kernel (tests/vm/run) and runs
# bench/transport/transport_bench: ns per record written from
# ktrack_test_emit (tight loop, 32-byte payload), the highest rate the mmap
# reader drains with zero loss, and the same for read().  Prints numbers.
#   bench/transport.sh [--kernel 6.1|6.12|all]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kernel=all
[ "${1:-}" = --kernel ] && kernel=$2
out=$root/build/bench
mkdir -p "$out"
cache=$root/build/cache
gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare \
	-D_GNU_SOURCE -pthread -I"$root/include" -I"$root/tests/kernel" \
	-I"$cache/linux-src/tools/testing/selftests" \
	-o "$out/transport_bench" "$root/bench/transport/transport_bench.c"
make -s -C "$root" modules >/dev/null
KTRACK_ROOT=$root "$root/tests/vm/run" --kernel "$kernel" -- env KTRACK_ROOT="$root" "$out/transport_bench"
