# Shared by the bench scripts (bench/run, realprog, ustacks, ab): sourced.
# median: the middle of the numbers on stdin, one a line (the lower of the
# two middles for an even count)
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
