package cli

import "runtime/debug"

// readGCPercent is the GOGC kubegap runs with while it reads a cluster or
// files, unless the user set GOGC. Decoding makes several times as much
// garbage as the snapshot keeps, and the default GOGC of 100 lets the heap
// reach twice what is kept before each collection: at 100k pods, hundreds
// of MB that hold nothing. Collecting at 50% costs little, since a live read
// waits on the network (docs/benchmarks.md). It is the process's setting,
// so the commands set it, not the packages they call.
const readGCPercent = 50

// tuneGC sets readGCPercent for the rest of the process unless GOGC is set.
func tuneGC(app *App) {
	if app.Getenv("GOGC") == "" {
		debug.SetGCPercent(readGCPercent)
	}
}
