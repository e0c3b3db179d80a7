# malloc from nested Python functions (tests/live/python_test.sh, count's
# user stacks): outer() -> make() allocates a 64 KB bytearray (one malloc
# each: larger than pymalloc's blocks) ARGV[1] times (default 1000), a
# millisecond apart (the frames are read from the live process).
import sys
import time


def make():
    return bytearray(65536)


def outer(n):
    for _ in range(n):
        make()
        time.sleep(0.001)


outer(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
