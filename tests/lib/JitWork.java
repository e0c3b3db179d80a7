// Test workload for the runtimes: heavy() calls spin() twice and light()
// once, in a loop, so samples in spin() split heavy:light = 2:1. Runs for
// SECS seconds (default 3). The JIT would inline spin into heavy and light
// and those into main: the test asks it not to (dontinline), so each keeps
// a frame to name.
//   java -XX:+UnlockDiagnosticVMOptions -XX:+PreserveFramePointer
//        -XX:+DumpPerfMapAtExit -XX:CompileCommand=quiet
//        -XX:CompileCommand=dontinline,JitWork::* JitWork [SECS]
public class JitWork {
	static long spin() {
		long x = 0;
		for (int i = 0; i < 20000; i++)
			x = (x + (long)i * i) % 1000003;
		return x;
	}

	static long heavy() {
		return spin() + spin();
	}

	static long light() {
		return spin();
	}

	public static void main(String[] args) {
		long end = System.nanoTime() + (long)(1e9 * (args.length > 0 ? Double.parseDouble(args[0]) : 3));
		long sum = 0;
		while (System.nanoTime() < end) {
			sum += heavy();
			sum += light();
		}
		if (sum == 42) /* used, so not optimised away; stdout is the tracer's */
			System.err.println(sum);
	}
}
