package snapshot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// StreamWriter writes a kubegap snapshot whose objects are never held
// together: each object is trimmed as the live reader trims it, encoded at
// once into a temporary file of its resource, and counted. SaveFile then
// writes the document Write would write for the same objects (the head
// with the coverage counts, then the items, resource by resource in the
// order Write uses), copying the temporary files in. Memory stays bounded
// by one batch of objects whatever the size of the cluster, which is what
// a generator of multi-million-pod snapshots needs.
//
// Objects are written in the order they were added, not sorted: a loader
// sorts them (Finish) as it sorts the pages of a live read. Custom
// resources are not supported; record them with SetCoverage as not served.
type StreamWriter struct {
	src      Source
	dir      string
	parts    map[Resource]*streamPart
	coverage map[Resource]Coverage
	order    []Resource // resources given coverage, first time first
}

// streamPart is the encoded items of one resource: each one preceded by a
// comma, so that the parts can be concatenated after the first one's.
type streamPart struct {
	f       *os.File
	w       *bufio.Writer
	n       int
	pending []runtime.Object
	scratch *Snapshot
	batches int
}

// streamBatch is how many objects are trimmed and encoded together; a
// fresh scratch snapshot (and interner) every streamScratch batches keeps
// the interner from growing with the cluster. What the interner shares
// does not change what is written, only what the scratch holds: renewed
// every 64 batches (16,384 objects of each resource), its tables made
// bench/cmd/synth peak at 134 MB for 100k pods and 271 MB for 1M; every
// 4, at 71 and 109 MB, the same bytes written in the same time.
const (
	streamBatch   = 256
	streamScratch = 4
)

// NewStreamWriter returns a writer whose temporary files go in dir (the
// system's temporary directory when empty).
func NewStreamWriter(src Source, dir string) *StreamWriter {
	return &StreamWriter{src: src, dir: dir, parts: map[Resource]*streamPart{}, coverage: map[Resource]Coverage{}}
}

// Add queues one object of the typed resource r. The object is trimmed in
// place when its batch is written: do not use it after Add.
func (w *StreamWriter) Add(r Resource, obj runtime.Object) error {
	p := w.parts[r]
	if p == nil {
		if _, ok := kindFor(r); !ok {
			return fmt.Errorf("%s is not a typed resource", r)
		}
		f, err := os.CreateTemp(w.dir, ".kubegap-stream-*")
		if err != nil {
			return err
		}
		p = &streamPart{f: f, w: bufio.NewWriterSize(f, 256<<10)}
		w.parts[r] = p
	}
	p.pending = append(p.pending, obj)
	if len(p.pending) >= streamBatch {
		return w.flush(r, p)
	}
	return nil
}

// flush trims and encodes the pending objects of r through the same
// kind table as a live read (AddList on a scratch snapshot, then the
// objects Write would write).
func (w *StreamWriter) flush(r Resource, p *streamPart) error {
	if len(p.pending) == 0 {
		return nil
	}
	k, _ := kindFor(r)
	list := k.NewList()
	if err := meta.SetList(list, p.pending); err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	clear(p.pending)
	p.pending = p.pending[:0]
	if p.batches%streamScratch == 0 {
		p.scratch = New(Source{})
	}
	p.batches++
	n := k.AddList(p.scratch, list)
	enc := json.NewEncoder(p.w)
	err := k.each(p.scratch, func(o runtime.Object) error {
		p.w.WriteByte(',')
		return enc.Encode(o)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", r, err)
	}
	p.n += n
	// Empty the scratch list, keeping its capacity for the next batch.
	k.restrict(p.scratch, func(string) bool { return false })
	return nil
}

// SetCoverage records how reading r went; the count is the number of
// objects added for r.
func (w *StreamWriter) SetCoverage(r Resource, st Status, message string) {
	if _, ok := w.coverage[r]; !ok {
		w.order = append(w.order, r)
	}
	w.coverage[r] = Coverage{Resource: r.String(), Status: st, Message: message}
}

// Count is the number of objects added for r so far (flushed or not).
func (w *StreamWriter) Count(r Resource) int {
	if p := w.parts[r]; p != nil {
		return p.n + len(p.pending)
	}
	return 0
}

// SaveFile writes the snapshot to path, gzipped when the name ends in .gz,
// through a temporary file as Snapshot.SaveFile does, and removes the
// writer's temporary files. The writer cannot be used afterwards.
func (w *StreamWriter) SaveFile(path string) (err error) {
	defer w.Close()
	for _, k := range kinds {
		if p := w.parts[k.res]; p != nil {
			if err := w.flush(k.res, p); err != nil {
				return err
			}
			if err := p.w.Flush(); err != nil {
				return err
			}
		}
	}
	return writeFileAtomic(path, w.write)
}

func (w *StreamWriter) write(out io.Writer) error {
	bw := bufio.NewWriterSize(out, 256<<10)
	var cov []Coverage
	for _, r := range Known() {
		if c, ok := w.coverage[r]; ok {
			c.Count = w.Count(r)
			cov = append(cov, c)
		}
	}
	head := struct {
		APIVersion    string     `json:"apiVersion"`
		Kind          string     `json:"kind"`
		FormatVersion int        `json:"formatVersion"`
		Source        Source     `json:"source"`
		Coverage      []Coverage `json:"coverage"`
	}{SnapshotAPIVersion, SnapshotKind, SnapshotFormatVersion, w.src, cov}
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	bw.Write(b[:len(b)-1])
	bw.WriteString(`,"items":[`)
	first := true
	for _, k := range kinds {
		p := w.parts[k.res]
		if p == nil || p.n == 0 {
			continue
		}
		if _, err := p.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		r := bufio.NewReaderSize(p.f, 256<<10)
		if first {
			// The first item overall has no comma before it.
			if _, err := r.Discard(1); err != nil {
				return err
			}
			first = false
		}
		if _, err := io.Copy(bw, r); err != nil {
			return err
		}
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// Close removes the temporary files. Safe to call more than once.
func (w *StreamWriter) Close() {
	for r, p := range w.parts {
		p.f.Close()
		os.Remove(p.f.Name())
		delete(w.parts, r)
	}
}
