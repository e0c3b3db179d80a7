# Off-CPU time in nested Python functions (tests/live/python_test.sh):
# outer() -> middle() -> nap() sleeps 20 ms, ARGV[1] times (default 50).
import sys
import time


def nap():
    time.sleep(0.02)


def middle():
    nap()


def outer(n):
    for _ in range(n):
        middle()


outer(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
