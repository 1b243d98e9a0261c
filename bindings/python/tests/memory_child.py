"""The client process of the Python memory tests:
    python3 memory_child.py download URL CA
    python3 memory_child.py many URL CA N
prints one JSON line."""

import gc
import json
import os
import sys

import guise  # the parent's: PYTHONPATH in a checkout, the venv's when installed


def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024


def settle():
    gc.collect()
    guise.collect()


def main():
    mode, url, ca = sys.argv[1:4]
    if mode == "download":
        r = guise.get(url, verify=ca, stream=True)
        settle()
        start = peak = rss()
        n = i = 0
        for c in r.iter_content(64 << 10):
            n += len(c)
            i += 1
            if i % 64 == 0:
                peak = max(peak, rss())
        peak = max(peak, rss())
        out = {"bytes": n, "start": start, "peak": peak}
    else:
        count = int(sys.argv[4])
        s = guise.Session(verify=ca)
        for _ in range(min(count // 5, 3000)):
            s.get(url).content
        settle()
        rss0, heap0 = rss(), guise.stats()["heap_bytes"]
        for _ in range(count):
            s.get(url).content
        settle()
        st = guise.stats()
        out = {"rss0": rss0, "rss1": rss(), "heap0": heap0, "heap1": st["heap_bytes"], "calls": st["calls"],
               "handles": st["handles"]}
        s.close()
    print(json.dumps(out))


main()
