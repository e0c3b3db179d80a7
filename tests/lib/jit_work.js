// Test workload for the runtimes: heavy() calls spin() twice and light()
// once, in a loop, so samples in spin() split heavy:light = 2:1. Runs for
// SECS seconds (default 3). TurboFan would inline them into main: the test
// asks it not to, so each keeps a frame to name.
//   node --perf-basic-prof --interpreted-frames-native-stack --no-turbo-inlining jit_work.js [SECS]
'use strict';

function spin() {
	let x = 0;
	for (let i = 0; i < 200000; i++)
		x = (x + i * i) % 1000003;
	return x;
}

function heavy() {
	return spin() + spin();
}

function light() {
	return spin();
}

function main() {
	const end = Date.now() + 1000 * (process.argv[2] ? Number(process.argv[2]) : 3);
	let sum = 0;
	while (Date.now() < end) {
		sum += heavy();
		sum += light();
	}
	return sum;
}

main();
