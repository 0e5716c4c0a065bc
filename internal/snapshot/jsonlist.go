package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A JSON document that is an object is read member by member. Its items
// array is read item by item as soon as the document is known to be a List
// (or a kubegap snapshot): its kind came first, as in a typed list
// (kube-apiserver, kubectl cluster-info dump), or its items before the kind
// outgrew streamAfter, as in `kubectl get -o json`, which prints apiVersion,
// items, kind and metadata in that order. Each item is then bounded by
// documentLimit on its own, and only a chunk of items is held as JSON at
// once. Anything else (a document without an items array, a List smaller
// than streamAfter whose kind follows its items, an object whose kind is
// not a List's) is put back together and read whole by addDocument,
// exactly as before, within documentLimit.

// jsonHead is what a document read item by item keeps of its other
// members, each read as it comes.
type jsonHead struct {
	tm                     typeMeta
	hasKind, hasAPIVersion bool
	tmErr                  error
	paged                  bool // metadata.continue is set
	metaErr                error
	snap                   snapshotFile // formatVersion, source, coverage
	snapErr                error
}

func (h *jsonHead) note(name string, v jsontext.Value) {
	keep := func(dst *error, err error) {
		if err != nil && *dst == nil {
			*dst = err
		}
	}
	switch name {
	case "apiVersion":
		keep(&h.tmErr, json.Unmarshal(v, &h.tm.APIVersion))
		h.hasAPIVersion = true
	case "kind":
		keep(&h.tmErr, json.Unmarshal(v, &h.tm.Kind))
		h.hasKind = true
	case "metadata":
		var m struct {
			Continue string `json:"continue"`
		}
		keep(&h.metaErr, json.Unmarshal(v, &m))
		h.paged = m.Continue != ""
	case "formatVersion":
		keep(&h.snapErr, json.Unmarshal(v, &h.snap.FormatVersion))
	case "source":
		keep(&h.snapErr, json.Unmarshal(v, &h.snap.Source))
	case "coverage":
		keep(&h.snapErr, json.Unmarshal(v, &h.snap.Coverage))
	}
}

// isSnapshot: the document is a snapshot this kubegap writes.
func (h *jsonHead) isSnapshot() bool {
	return h.tm.Kind == SnapshotKind && h.tm.APIVersion == SnapshotAPIVersion
}

// itemsKnown: the kind read so far settles how the items are read, so
// they can be read one by one now: those of an untyped List name their
// own kind, those of a typed List default to its kind and apiVersion.
func (h *jsonHead) itemsKnown() bool {
	if h.tmErr != nil || !h.hasKind {
		return false
	}
	if h.isSnapshot() {
		return true
	}
	return h.tm.Kind == "List" || strings.HasSuffix(h.tm.Kind, "List") && h.hasAPIVersion && h.tm.APIVersion != ""
}

// notAList: the kind read so far is one whose document is read whole.
func (h *jsonHead) notAList() bool {
	return h.hasKind && (h.tmErr != nil || !strings.HasSuffix(h.tm.Kind, "List") && h.tm.Kind != SnapshotKind)
}

// jsonDoc reads one JSON object document.
type jsonDoc struct {
	l      *loader
	name   string
	doc    int
	dec    *jsontext.Decoder
	budget *valueBudget
	// whole is the document read so far, put back together, while it may
	// be read whole; spans are where its items lie in it.
	whole []byte
	spans [][2]int
	// streaming is set once the items are read one by one.
	streaming bool
	head      jsonHead
	item      int // items read
	chunk     []jsontext.Value
	added     int // items added
	before    map[Resource]int
	nss       []string // the namespaces the items name, for ciStream
	prevType  typeMeta
}

// loadJSONObject reads the document that starts at the decoder's next
// token, an object.
func (l *loader) loadJSONObject(name string, doc int, dec *jsontext.Decoder, budget *valueBudget) error {
	d := &jsonDoc{l: l, name: name, doc: doc, dec: dec, budget: budget, prevType: l.itemType}
	defer func() { l.itemType = d.prevType }()
	if err := d.read(); err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			return err
		}
		return withPlace(err, name, doc)
	}
	var err error
	if d.streaming {
		err = d.finish()
	} else {
		err = l.addDocument(d.whole) // whole is only the document: done with here
	}
	if err != nil {
		return withPlace(err, name, doc)
	}
	return nil
}

func (d *jsonDoc) malformed(err error, item int) error {
	return &InputError{File: d.name, Document: d.doc, Item: item, Err: malformed(err)}
}

// markWhole bounds what is read next together with what whole holds by
// documentLimit, as one document.
func (d *jsonDoc) markWhole() { d.budget.mark = d.dec.InputOffset() - int64(len(d.whole)) }

func (d *jsonDoc) read() error {
	dec := d.dec
	if _, err := dec.ReadToken(); err != nil {
		return d.malformed(err, 0)
	}
	d.whole = append(d.whole, '{')
	for dec.PeekKind() == '"' {
		if d.streaming {
			d.budget.mark = dec.InputOffset()
		} else {
			d.markWhole()
		}
		rawName, err := dec.ReadValue()
		if err != nil {
			return d.malformed(err, 0)
		}
		if !d.streaming {
			if len(d.whole) > 1 {
				d.whole = append(d.whole, ',')
			}
			d.whole = append(append(d.whole, rawName...), ':')
		}
		name, _ := jsontext.AppendUnquote(nil, rawName) // valid: the decoder read it
		if string(name) == "items" && dec.PeekKind() == '[' {
			if err := d.readItems(); err != nil {
				return err
			}
			continue
		}
		if d.streaming {
			d.budget.mark = dec.InputOffset()
		} else {
			d.markWhole()
		}
		v, err := dec.ReadValue()
		if err != nil {
			return d.malformed(err, 0)
		}
		d.head.note(string(name), v)
		if !d.streaming {
			d.whole = append(d.whole, v...)
		}
	}
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '}' {
		return d.malformed(orMissing(err, "end of object"), 0)
	}
	d.whole = append(d.whole, '}')
	return nil
}

// threshold is the size past which the items of a document not yet known
// to be a List are read one by one: the YAML reader's, and below the
// document limit with room for the rest of the document.
func (d *jsonDoc) threshold() int {
	return int(min(int64(d.l.streamAfter), documentLimit/4))
}

func (d *jsonDoc) readItems() error {
	dec := d.dec
	if _, err := dec.ReadToken(); err != nil {
		return d.malformed(err, 0)
	}
	if !d.streaming {
		d.whole = append(d.whole, '[')
		if d.head.itemsKnown() {
			if err := d.stream(); err != nil {
				return err
			}
		}
	}
	wholeBound := d.head.notAList()
	first := true
	for dec.PeekKind() != ']' {
		switch {
		case d.streaming || !wholeBound:
			d.budget.mark = dec.InputOffset() // each item on its own
		default:
			d.markWhole()
		}
		v, err := dec.ReadValue()
		if err != nil {
			return d.malformed(err, d.item+1)
		}
		d.item++
		if d.streaming {
			if err := d.add(bytes.Clone(v)); err != nil { // v is only valid until the next read
				return err
			}
			continue
		}
		if !first {
			d.whole = append(d.whole, ',')
		}
		first = false
		start := len(d.whole)
		d.whole = append(d.whole, v...)
		d.spans = append(d.spans, [2]int{start, len(d.whole)})
		if !wholeBound && len(d.whole) > d.threshold() {
			if err := d.stream(); err != nil {
				return err
			}
		}
	}
	if t, err := dec.ReadToken(); err != nil || t.Kind() != ']' {
		return d.malformed(orMissing(err, "end of items"), 0)
	}
	if !d.streaming {
		d.whole = append(d.whole, ']')
		return nil
	}
	return d.flush()
}

// stream starts reading the items one by one: those read so far are added
// now, and the document is no longer held whole.
func (d *jsonDoc) stream() error {
	d.streaming = true
	h := &d.head
	if it := listItemType(h.tm); h.hasKind && it.Kind != "" && !h.isSnapshot() {
		d.l.itemType = it
	}
	if h.isSnapshot() && h.snapErr == nil {
		if err := checkFormatVersion(h.snap.FormatVersion); err != nil {
			return err
		}
		for _, c := range h.snap.Coverage {
			if r, ok := Parse(c.Resource); ok {
				d.l.snap.Reserve(r, c.Count)
			}
		}
	}
	d.before = d.l.itemCounts()
	whole, spans := d.whole, d.spans
	d.whole, d.spans = nil, nil
	for _, s := range spans {
		if err := d.add(whole[s[0]:s[1]]); err != nil {
			return err
		}
	}
	return nil
}

// add adds one item, a chunk at a time (decoded by all CPUs at once).
func (d *jsonDoc) add(item jsontext.Value) error {
	d.chunk = append(d.chunk, item)
	if len(d.chunk) < decodeChunk {
		return nil
	}
	return d.flush()
}

func (d *jsonDoc) flush() error {
	if d.l.ciStream != nil {
		d.nss = appendNamespaces(d.nss, d.chunk)
	}
	err := d.l.addItemsAt(d.chunk, d.added)
	d.added += len(d.chunk)
	d.chunk = d.chunk[:0]
	return err
}

// finish takes the kind of a document whose items were read one by one.
func (d *jsonDoc) finish() error {
	l, h := d.l, &d.head
	held := l.itemCounts()
	for r, n := range d.before {
		held[r] -= n
	}
	if h.tmErr != nil {
		return fmt.Errorf("reading apiVersion and kind: %w", h.tmErr)
	}
	tm := h.tm
	switch {
	case h.isSnapshot():
		if h.snapErr != nil {
			return fmt.Errorf("reading snapshot: %w", h.snapErr)
		}
		l.snapshots++
		return l.snapshotHead(h.snap, held)
	case tm.Kind == SnapshotKind && strings.HasPrefix(tm.APIVersion, "kubegap.dev/"):
		return fmt.Errorf("snapshot version %s is not supported (this kubegap reads %s)", tm.APIVersion, SnapshotAPIVersion)
	case strings.HasSuffix(tm.Kind, "List"):
		if h.metaErr != nil {
			return fmt.Errorf("reading %s items: %w", tm.Kind, h.metaErr)
		}
		l.addListHead(tm)
		l.lastListPaged = h.paged
		if l.ciStream != nil {
			l.ciStream.list(tm, h.paged, d.nss)
		}
		return nil
	case tm.Kind == "":
		return errors.New("object has no kind")
	default:
		// Its items were read as objects, which is right only for a List.
		return fmt.Errorf("%s has a top-level items array larger than %d MiB; kubegap reads one this large only from a List",
			tm.Kind, streamYAMLAfter>>20)
	}
}

// appendNamespaces adds the namespaces items name that nss lacks.
func appendNamespaces(nss []string, items []jsontext.Value) []string {
	for _, it := range items {
		var m struct {
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if json.Unmarshal(it, &m) != nil {
			continue
		}
		if !slices.Contains(nss, m.Metadata.Namespace) {
			nss = append(nss, m.Metadata.Namespace)
		}
	}
	return nss
}
