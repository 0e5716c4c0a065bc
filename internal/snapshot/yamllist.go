package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// addYAMLItems adds the items of a streamed YAML List, in order. Each is
// converted to JSON by all CPUs at once (YAML parsing is most of the time
// such a load takes); the JSON then goes the way of a JSON List's items.
func (l *loader) addYAMLItems(name string, doc int, pieces []yamlPiece) error {
	if len(pieces) == 0 {
		return nil
	}
	type converted struct {
		json []byte
		dups []duplicate
		err  error
	}
	out := make([]converted, len(pieces))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(1, runtime.GOMAXPROCS(0)), len(pieces)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(pieces) {
					return
				}
				j, dups, err := yamlToJSON(pieces[i].text)
				if err == nil {
					j, err = soleEntry(j)
				}
				out[i] = converted{j, dups, err}
				pieces[i].text = nil // let the YAML go
			}
		}()
	}
	wg.Wait()
	items := make([]jsontext.Value, 0, len(pieces))
	for i, p := range pieces {
		c := out[i]
		for _, d := range c.dups {
			d.path = strings.TrimPrefix(d.path, "[0].") // the piece is a one-entry sequence
			l.opts.warn(Warning{File: name, Document: doc, Item: p.item,
				Message: d.message(func(n int) int { return p.line + n })})
		}
		if c.err != nil {
			// Add what came before, so that an error in it is the one
			// reported: it is earlier in the file.
			if err := l.addItemsAt(items, pieces[0].item-1); err != nil {
				return withPlace(err, name, doc)
			}
			return &InputError{File: name, Document: doc, Item: p.item, Err: fmt.Errorf("malformed YAML: %w", c.err)}
		}
		items = append(items, c.json)
	}
	held, err := l.heldBy(func() error { return l.addItemsAt(items, pieces[0].item-1) })
	if err != nil {
		return withPlace(err, name, doc)
	}
	if l.streamed == nil {
		l.streamed = map[Resource]int{}
	}
	for r, n := range held {
		l.streamed[r] += n
	}
	return nil
}

// soleEntry returns the one entry of a converted sequence ("[{...}]"):
// an item is cut out as the sequence entry it is written as.
func soleEntry(j []byte) ([]byte, error) {
	j = bytes.TrimSpace(j)
	if len(j) < 2 || j[0] != '[' || j[len(j)-1] != ']' {
		return nil, errors.New("an item is not a sequence entry")
	}
	inner := jsontext.Value(bytes.TrimSpace(j[1 : len(j)-1]))
	if !inner.IsValid() {
		return nil, errors.New("an item is not one sequence entry")
	}
	return inner, nil
}

// addStreamedHead reads what is left of a streamed document once its items
// are added: its apiVersion, kind and, for a snapshot, source and coverage.
func (l *loader) addStreamedHead(name string, doc int, d *yamlDoc) error {
	defer func() { l.streamed = nil }() // the next streamed document counts afresh
	j, dups, err := yamlToJSON(d.text)
	if err != nil {
		return fmt.Errorf("malformed YAML: %w", err)
	}
	for _, dup := range dups {
		l.opts.warn(Warning{File: name, Document: doc, Message: dup.message(d.fileLine)})
	}
	if t := bytes.TrimSpace(j); len(t) == 0 || t[0] != '{' {
		return errors.New("object has no kind")
	}
	var tm typeMeta
	if err := json.Unmarshal(j, &tm); err != nil {
		return fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	switch {
	case tm.Kind == SnapshotKind && tm.APIVersion == SnapshotAPIVersion:
		var sf snapshotFile
		if err := json.Unmarshal(j, &sf); err != nil {
			return fmt.Errorf("reading snapshot: %w", err)
		}
		l.snapshots++
		if err := l.snapshotHead(sf, l.streamed); err != nil {
			return err
		}
	case tm.Kind == SnapshotKind && strings.HasPrefix(tm.APIVersion, "kubegap.dev/"):
		return fmt.Errorf("snapshot version %s is not supported (this kubegap reads %s)", tm.APIVersion, SnapshotAPIVersion)
	case strings.HasSuffix(tm.Kind, "List"):
		l.addListHead(tm)
	case tm.Kind == "":
		return errors.New("object has no kind")
	default:
		// Its items were read as objects, which is right only for a List.
		return fmt.Errorf("%s has a top-level items sequence larger than %d MiB; kubegap reads one this large only from a List",
			tm.Kind, streamYAMLAfter>>20)
	}
	return nil
}
