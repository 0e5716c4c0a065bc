package cli

import "runtime/debug"

// readGCPercent is the GOGC kubegap runs with while it reads a cluster or
// files, unless the user set GOGC. Decoding makes several times as much
// garbage as the snapshot keeps, and the default GOGC of 100 lets the heap
// reach twice what is kept before each collection: at 100k pods, hundreds
// of MB that hold nothing. A live read waits on the network, so collecting
// more often costs little wall time. At 100k pods, 50% left the peak at
// 575-640 MB depending on when the last collection of the read ran, and
// 40% at 545-565 MB for about 15% more CPU (docs/benchmarks.md). It is the
// process's setting, so the commands set it, not the packages they call.
const readGCPercent = 40

// tuneGC sets readGCPercent for the rest of the process unless GOGC is set.
func tuneGC(app *App) {
	if app.Getenv("GOGC") == "" {
		debug.SetGCPercent(readGCPercent)
	}
}
