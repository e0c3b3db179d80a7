# Test workload for the runtimes: heavy() calls spin() twice and light()
# once, in a loop, so samples in spin() split heavy:light = 2:1. Runs for
# SECS seconds (default 3). python3.12 -X perf jit_work.py [SECS]
# Each round's work is drawn anew (both calls the same): a round as long
# as a timer's period, or a simple fraction of it, would have every sample
# land at the same point of it, and the split be the phase's, not 2:1.
import sys
import time


def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x


def heavy(n):
    return spin(n) + spin(n)


def light(n):
    return spin(n)


def main():
    end = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
    seed = 1
    while time.monotonic() < end:
        seed = (seed * 1103515245 + 12345) % 2147483648
        n = 5000 + (seed >> 8) % 30000  # 20000 on average
        heavy(n)
        light(n)


main()
