"""Per-request cost of the Python binding: sequential keep-alive GETs on one
Session (certificates not verified). Run by bindings/node/bench/bench.js
next to the Go API's figure (bench/cmd/bindserver -go); by hand:

    PYTHONPATH=bindings/python python3 bindings/python/bench.py URL N
"""

import sys
import time

import guise


def main():
    url, n = sys.argv[1], int(sys.argv[2])
    s = guise.Session(verify=False)
    for _ in range(200):
        s.get(url).content
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(n):
        s.get(url).content
    c, t = time.process_time() - c0, time.perf_counter() - t0
    print("python: %d GETs: %.1f us CPU/req, %.1f us wall/req" % (n, c / n * 1e6, t / n * 1e6))
    s.close()


if __name__ == "__main__":
    main()
