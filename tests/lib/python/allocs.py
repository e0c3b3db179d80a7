# malloc from nested Python functions, a known split (tests/live/python_test.sh,
# count's user stacks): heavy() calls make() twice, light() once; make()
# allocates a 64 KB bytearray (one malloc: larger than pymalloc's blocks)
# and sleeps 20 ms in it: the frames are read from the live process after
# the sample, and a thread that has left them is not read (python/). ARGV[1]
# rounds (default 50) of heavy() and light(): exactly 2N mallocs under
# heavy;make and N under light;make.
import sys
import time


def make():
    b = bytearray(65536)
    time.sleep(0.02)
    return b


def heavy():
    make()
    make()


def light():
    make()


def outer(n):
    for _ in range(n):
        heavy()
        light()


outer(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
