# Shared by tests/live/realprog_test.sh and bench/realprog (issue 22): the
# workloads run on Debian's own python3, perl and gcc, and what a whole
# user stack is.
#
# Whole: the stack reaches _start or __libc_start_call_main, a thread's or
# a spawned child's clone. A file with no symbol at its entry point (gcc's
# driver and as are stripped; Debian's ld.so has no _start symbol) has its
# entry code named _start, so a process sampled before its main program
# runs is _start;_dl_start;... and a stripped program's is
# _start;__libc_start_main;... posix_spawn's child, before its exec, starts
# in libc's clone3, which libc does not export: its root is
# [libc.so.6];__spawni_child. Folded: comm;root;...;leaf N
REALPROG_WHOLE='(;(_start|__libc_start_call_main|__clone3|__clone)[; ]|^[^;]*;\[libc\.so\.6\];__spawni_child[; ])'
# The same for perf, which names no entry code without a symbol there: an
# unnamed root in ld.so, or a stripped program's file right under
# __libc_start_main (which only _start calls), is its _start
REALPROG_WHOLE_PERF="${REALPROG_WHOLE%)}|^[^;]*;\\[ld-linux-x86-64\\.so\\.2\\][; ]|^[^;]*;\\[[^];]*\\];__libc_start_main[; ])"

# realprog_share FOLDED: "WHOLE TOTAL" (summed counts, or offcpu's microseconds)
realprog_share() {
	awk -v re="$REALPROG_WHOLE" '{ t += $NF } $0 ~ re { w += $NF } END { print w + 0, t + 0 }' "$1"
}

# realprog_workloads DIR: writes rec.py (recursive pure-Python with json and
# re), re.pl (a regex and hash loop), big.c (400 chained functions of loops
# and switches: seconds of cc1 at -O2) and naps.py (40 sleeps of 20 ms
# under outer;middle;inner) into DIR
realprog_workloads() {
	cat >"$1/rec.py" <<'EOF'
import json, re, sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def work(d):
    if d:
        return work(d - 1)
    s = json.dumps({"a": [fib(12) for _ in range(3)], "b": "x" * 50})
    return len(re.findall(r"[0-9]+", s)) + len(json.loads(s)["a"])
t = 0
for i in range(int(sys.argv[1])):
    t += work(i % 40)
assert t > 0
EOF
	cat >"$1/re.pl" <<'EOF'
my %h; my $t = 0;
for my $i (1 .. $ARGV[0]) {
	my $s = join(",", map { "k$_=v" . ($i * $_) } 1 .. 20);
	while ($s =~ /k(\d+)=v(\d+)/g) { $h{$1} += $2 % 7; }
	$t += scalar(keys %h);
}
exit($t > 0 ? 0 : 1);
EOF
	awk -v n=400 'BEGIN {
		print "struct s { int a[16]; double d; struct s *next; };";
		for (i = 0; i < n; i++) {
			printf "static int f%d(struct s *p, int x) {\n int r = 0;\n", i;
			printf " for (int i = 0; i < x; i++) { switch ((i * %d) & 7) {\n", i + 3;
			for (k = 0; k < 8; k++)
				printf "  case %d: r += p->a[(i + %d) & 15] * %d; p = p->next ? p->next : p; break;\n", k, k, i + k;
			printf " } if (r > %d) r ^= (int)p->d; }\n", i * 7;
			if (i > 0) printf " return r + f%d(p, x - 1);\n}\n", i - 1; else print " return r;\n}";
		}
		printf "int entry(struct s *p) { return f%d(p, 5); }\n", n - 1;
	}' >"$1/big.c"
	cat >"$1/naps.py" <<'EOF'
import time
def inner(n):
    time.sleep(0.02)
    return n
def middle(n):
    return inner(n) + 1
def outer(k):
    return sum(middle(i) for i in range(k))
outer(40)
EOF
}
