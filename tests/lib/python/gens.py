# Test workload: a generator expression resumed 1000 times a call, so the
# eval loop is entered and left ~1000 times a call: samples land in its
# entry and exit, where its own record is not made yet or given up.
#   gens.py SECONDS
import sys
import time


def squares():
    return sum(i * i for i in range(1000))


def main(secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        squares()


main(float(sys.argv[1]))
