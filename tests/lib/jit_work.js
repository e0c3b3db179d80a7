// Test workload for the runtimes: heavy() calls spin() twice and light()
// once, in a loop, so samples in spin() split heavy:light = 2:1. Runs for
// SECS seconds (default 3). TurboFan would inline them into main: the test
// asks it not to, so each keeps a frame to name. Each round's work is
// drawn anew (both calls the same): a round as long as a timer's period, or
// a simple fraction of it, would have every sample land at the same point
// of it, and the split be the phase's, not 2:1.
//   node --perf-basic-prof --interpreted-frames-native-stack --no-turbo-inlining jit_work.js [SECS]
'use strict';

function spin(n) {
	let x = 0;
	for (let i = 0; i < n; i++)
		x = (x + i * i) % 1000003;
	return x;
}

function heavy(n) {
	return spin(n) + spin(n);
}

function light(n) {
	return spin(n);
}

function main() {
	const end = Date.now() + 1000 * (process.argv[2] ? Number(process.argv[2]) : 3);
	let sum = 0, seed = 1;
	while (Date.now() < end) {
		seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
		const n = 50000 + (seed >>> 8) % 300000; /* 200000 on average */
		sum += heavy(n);
		sum += light(n);
	}
	return sum;
}

main();
