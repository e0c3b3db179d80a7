# A fixed amount of Python work for bench/python: split.py's heavy() and
# light() ARGV[1] times (default 20); prints the CPU seconds the loop took
# (process_time: user + system, so a sample's cost in the kernel counts and
# other processes' load does not), measured inside, so start-up and the
# tracer's own start do not count.
import sys
import time

from split import heavy, light


def main(n):
    t0 = time.process_time()
    for _ in range(n):
        heavy()
        light()
    print("%.6f" % (time.process_time() - t0))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
