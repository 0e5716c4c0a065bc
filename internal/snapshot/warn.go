package snapshot

import (
	"fmt"
	"strings"
)

// Warning is input the loader read, but not as it is written: a key given
// twice in one mapping, say, of which kubectl and the API server keep the
// last value. The load goes on; the CLI prints each warning on stderr, so
// that the user sees what was read.
type Warning struct {
	File     string
	Document int // 1-based; 0 when the whole file is meant
	Item     int // 1-based index in a List; 0 when not in a List
	Message  string
}

// String is the warning as one line: "dump.yaml: document 2, item 7: ...".
func (w Warning) String() string {
	var b strings.Builder
	b.WriteString(w.File)
	if w.Document > 0 {
		fmt.Fprintf(&b, ": document %d", w.Document)
	}
	if w.Item > 0 {
		fmt.Fprintf(&b, ", item %d", w.Item)
	}
	b.WriteString(": ")
	b.WriteString(strings.Join(strings.Fields(w.Message), " "))
	return b.String()
}

// LoadOption configures LoadPaths and LoadFS.
type LoadOption func(*loadOptions)

type loadOptions struct {
	warn func(Warning)
}

// WithWarnings passes each warning to fn as it is found, in input order.
// Without it, warnings are dropped.
func WithWarnings(fn func(Warning)) LoadOption {
	return func(o *loadOptions) { o.warn = fn }
}

func makeLoadOptions(opts []LoadOption) loadOptions {
	o := loadOptions{warn: func(Warning) {}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.warn == nil {
		o.warn = func(Warning) {}
	}
	return o
}
