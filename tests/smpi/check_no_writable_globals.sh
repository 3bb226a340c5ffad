#!/bin/sh
# check_no_writable_globals.sh — proves that a static library (libdtnn.a) defines no writable
# global or static variable: no object symbol in .data, .bss or thread-local .tdata/.tbss (nm
# classes D d B b, and TLS). SimGrid's SMPI runs every rank in one process, and dtlab runs it
# with -no-privatize (no per-rank copy of globals), so one such variable would silently be
# shared by all simulated ranks (docs/architecture.md, "No mutable globals in nn/"). Allowed:
# code (OpenMP's outlined *._omp_fn.N are functions), read-only data (.rodata: string literals,
# static const tables), and .data.rel.ro* (static const tables of pointers: written once by the
# dynamic loader under -fPIC, then read-only: RELRO). Not a general linter: it reads symbols,
# not source.
#
# usage: check_no_writable_globals.sh NM LIBRARY.a
# Exit: 0 none found; 1 found (each printed as "writable global: <symbol> (<section>) in
# <object>"); 2 bad usage or an unreadable library.
set -u
[ $# -eq 2 ] || { echo "usage: check_no_writable_globals.sh NM LIBRARY.a" >&2; exit 2; }
NM=$1; LIB=$2
[ -f "$LIB" ] || { echo "check_no_writable_globals: library '$LIB' not found" >&2; exit 2; }

OUT=$("$NM" --format=sysv --defined-only "$LIB" 2>&1) || {
    echo "check_no_writable_globals: '$NM' cannot read '$LIB': $OUT" >&2; exit 2; }

# nm --format=sysv prints "Symbols from lib.a[member.o]:" then rows
#   name | value | class | type | size | line | section
printf '%s\n' "$OUT" | awk -F'|' '
    function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
    /^Symbols from / { obj = $0; sub(/^Symbols from /, "", obj); sub(/:$/, "", obj); next }
    NF >= 7 {
        name = trim($1); cls = trim($3); type = trim($4); sec = trim($7)
        writable = (sec ~ /^\.(data|bss|tdata|tbss)(\.|$)/ && sec !~ /^\.data\.rel\.ro/) ||
                   cls ~ /^[BbDd]$/ && sec !~ /^\.data\.rel\.ro/
        if (writable && (type == "OBJECT" || type == "TLS" || type == "")) {
            printf "writable global: %s (%s, nm class %s) in %s\n", name, sec, cls, obj
            found++
        }
        nsym++
    }
    END {
        if (nsym == 0) { print "check_no_writable_globals: no symbols read"; exit 2 }
        if (found) { printf "FAIL: %d writable globals; nn/ must have none (-no-privatize)\n", found; exit 1 }
        printf "PASS: %d symbols, no writable globals\n", nsym
    }'
