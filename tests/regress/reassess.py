#!/usr/bin/env python3
"""reassess.py OUT.csv QI[,QI...] SEP K: re-check a released table from
the file alone.  Prints the number of records, suppressed records (every
QI '*'), classes among the rest, and the smallest class size; writes the
unsuppressed rows to OUT.csv.released for `cdsgate deid assess`."""
import csv
import sys
from collections import Counter

path, qis, sep = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
with open(path, newline="") as f:
    rows = list(csv.reader(f, delimiter=sep))
header, body = rows[0], rows[1:]
idx = [header.index(q) for q in qis]
kept = [r for r in body if not all(r[i] == "*" for i in idx)]
classes = Counter(tuple(r[i] for i in idx) for r in kept)
with open(path + ".released", "w", newline="") as f:
    w = csv.writer(f, delimiter=sep, lineterminator="\n")
    w.writerow(header)
    w.writerows(kept)
print(len(body), len(body) - len(kept), len(classes),
      min(classes.values()) if classes else 0)
