# Test workload for the runtimes: heavy() calls spin() twice and light()
# once, in a loop, so samples in spin() split heavy:light = 2:1. Runs for
# SECS seconds (default 3). python3.12 -X perf jit_work.py [SECS]
import sys
import time


def spin():
    x = 0
    for i in range(20000):
        x += i
    return x


def heavy():
    return spin() + spin()


def light():
    return spin()


def main():
    end = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
    while time.monotonic() < end:
        heavy()
        light()


main()
