# A deterministic split for Python frame reading (tests/live/python_test.sh):
# heavy() calls spin() twice, light() once, so spin's samples under heavy
# and light are 2:1. ARGV: seconds to run (default 3), threads (default 1:
# with 2, a second thread runs other() -> spin2() and keeps its own stack).
import sys
# (threading: imported by main() for a second thread, so one needs no stdlib)
import time


def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x


def heavy(n):
    spin(n)
    spin(n)


def light(n):
    spin(n)


def spin2(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


def other(end):
    while time.monotonic() < end:
        spin2(100000)


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    end = time.monotonic() + secs
    if threads > 1:
        import threading
        t = threading.Thread(target=other, args=(end,))
        t.start()
    # each round's work drawn anew (both calls the same): a round as long
    # as the timer's period, or a simple fraction of it, would have every
    # sample land at the same point of it, the split the phase's, not 2:1
    seed = 1
    while time.monotonic() < end:
        seed = (seed * 1103515245 + 12345) % 2147483648
        n = 25000 + (seed >> 8) % 150000  # 100000 on average
        heavy(n)
        light(n)
    if threads > 1:
        t.join()


if __name__ == "__main__":
    main()
