# Frames read late would name the wrong caller (tests/live/python_test.sh):
# heavy() calls spin_h() twice, light() calls spin_l() once, each about a
# millisecond; spin_l's loop xors (the native leaf long_xor), spin_h's
# adds, so a sample whose native leaf is long_xor was taken under light(),
# whatever the frames read afterwards say. ARGV[1]: seconds (default 6).
import sys
import time


def spin_h(n):
    x = 0
    for i in range(n):
        x += i
    return x


def spin_l(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


def heavy():
    spin_h(20000)
    spin_h(20000)


def light():
    spin_l(20000)


end = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 6.0)
while time.monotonic() < end:
    heavy()
    light()
