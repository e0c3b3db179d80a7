// Test workload for the runtimes: heavy() calls spin() twice and light()
// once, in a loop, so samples in spin() split heavy:light = 2:1. Runs for
// SECS seconds (default 3). The JIT would inline spin into heavy and light
// and those into main: the test asks it not to (dontinline), so each keeps
// a frame to name. Each round's work is drawn anew (both calls the
// same): a round as long as a timer's period, or a simple fraction of it,
// would have every sample land at the same point of it, and the split be
// the phase's, not 2:1.
//   java -XX:+UnlockDiagnosticVMOptions -XX:+PreserveFramePointer
//        -XX:+DumpPerfMapAtExit -XX:CompileCommand=quiet
//        -XX:CompileCommand=dontinline,JitWork::* JitWork [SECS]
public class JitWork {
	static long spin(int n) {
		long x = 0;
		for (int i = 0; i < n; i++)
			x = (x + (long)i * i) % 1000003;
		return x;
	}

	static long heavy(int n) {
		return spin(n) + spin(n);
	}

	static long light(int n) {
		return spin(n);
	}

	public static void main(String[] args) {
		long end = System.nanoTime() + (long)(1e9 * (args.length > 0 ? Double.parseDouble(args[0]) : 3));
		long sum = 0, seed = 1;
		while (System.nanoTime() < end) {
			seed = (seed * 1103515245L + 12345) % 2147483648L;
			int n = 5000 + (int)((seed >> 8) % 30000); /* 20000 on average */
			sum += heavy(n);
			sum += light(n);
		}
		if (sum == 42) /* used, so not optimised away; stdout is the tracer's */
			System.err.println(sum);
	}
}
