package cli

import (
	"fmt"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// maxWarnings bounds the warnings printed for one load: a generated dump
// can repeat one mistake in every object.
const maxWarnings = 20

// warnings prints what the loader read differently from how it is
// written, on stderr, whatever --quiet says: it changes what was audited.
type warnings struct {
	app *App
	n   int
}

func (w *warnings) print(warn snapshot.Warning) {
	w.n++
	if w.n <= maxWarnings {
		fmt.Fprintln(w.app.ErrOut, "kubegap: warning: "+warn.String())
	}
}

func (w *warnings) done() {
	if w.n > maxWarnings {
		fmt.Fprintf(w.app.ErrOut, "kubegap: warning: %d more warnings not shown\n", w.n-maxWarnings)
	}
}
