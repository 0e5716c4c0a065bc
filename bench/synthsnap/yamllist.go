package synthsnap

import (
	"bufio"
	"bytes"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// yamlList writes objects as one List in the layout of "kubectl get -o
// yaml": keys sorted (sigs.k8s.io/yaml), "items:" at column 0 with each
// entry's lines under "- ", then "kind: List" and an empty
// resourceVersion. Objects are written as they come, so the file never
// has to be held whole.
type yamlList struct {
	f    *os.File
	w    *bufio.Writer
	path string
}

func newYAMLList(path string) (*yamlList, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("apiVersion: v1\nitems:\n")
	return &yamlList{f: f, w: w, path: path}, nil
}

// add writes one object of r with its apiVersion and kind, as kubectl
// prints it.
func (l *yamlList) add(r snapshot.Resource, o runtime.Object) error {
	o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind})
	b, err := yaml.Marshal(o)
	if err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	for i, line := range bytes.SplitAfter(b, []byte("\n")) {
		switch {
		case len(line) == 0:
		case i == 0:
			l.w.WriteString("- ")
		case len(line) > 1:
			l.w.WriteString("  ")
		}
		l.w.Write(line)
	}
	return nil
}

func (l *yamlList) close() error {
	l.w.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	if err := l.w.Flush(); err != nil {
		return err
	}
	f := l.f
	l.f = nil
	return f.Close()
}

// abort removes a file not closed: a half-written List would read as a
// smaller cluster.
func (l *yamlList) abort() {
	if l.f != nil {
		l.f.Close()
		os.Remove(l.path)
	}
}
