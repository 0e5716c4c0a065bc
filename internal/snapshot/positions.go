package snapshot

import (
	"bufio"
	"compress/gzip"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Position is where an object was written in an input file.
type Position struct {
	File string
	Line int // 1-based line of the object's first key
}

// PositionKey names an object for Positions: kind, namespace, name.
type PositionKey struct{ Kind, Namespace, Name string }

// maxPositionFile bounds the files Positions reads: it parses each file a
// second time (with line numbers, which the loader does not keep), and
// that is worth it for manifests, not for a dump of a large cluster.
const maxPositionFile = 16 << 20

// Positions finds the file and line of each object in the plain YAML or
// JSON input files under paths (single objects, multi-document files and
// Lists), for reports that point at source lines (SARIF). It is a separate
// pass so that the loader keeps its speed: only a report that needs lines
// pays for them. Files it cannot parse, kubegap snapshots and files over 16
// MiB are passed over: positions are a convenience, the load already
// reported any bad input.
func Positions(paths []string) PositionMap {
	out := PositionMap{}
	files, err := expand(paths)
	if err != nil {
		return out
	}
	for _, f := range files {
		positionsOf(f.path, out)
	}
	return out
}

func positionsOf(name string, out PositionMap) {
	f, err := openInput(name)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > maxPositionFile {
		return
	}
	var r io.Reader = bufio.NewReader(f)
	if magic, _ := r.(*bufio.Reader).Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return
		}
		defer zr.Close()
		r = io.LimitReader(zr, maxPositionFile)
	}
	// A snapshot, as Write writes it, holds no object with a line worth
	// pointing at, and its gzip file of 16 MiB holds a 100k-pod cluster:
	// parsing it into YAML nodes only to find kind Snapshot at the end
	// held 200 MB and took seconds (issue 29).
	br := bufio.NewReader(r)
	if head, _ := br.Peek(len(snapshotHead)); string(head) == snapshotHead {
		return
	}
	dec := yaml.NewDecoder(br)
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return // io.EOF, or a file the loader judged already
		}
		if len(doc.Content) == 1 {
			addPosition(name, doc.Content[0], out)
		}
	}
}

func addPosition(file string, n *yaml.Node, out PositionMap) {
	if n.Kind != yaml.MappingNode {
		return
	}
	kind := scalar(n, "kind")
	if kind == SnapshotKind {
		return
	}
	if strings.HasSuffix(kind, "List") {
		if items := child(n, "items"); items != nil && items.Kind == yaml.SequenceNode {
			for _, it := range items.Content {
				addPosition(file, it, out)
			}
		}
		return
	}
	meta := child(n, "metadata")
	if kind == "" || meta == nil {
		return
	}
	k := PositionKey{Kind: kind, Namespace: scalar(meta, "namespace"), Name: scalar(meta, "name")}
	if _, seen := out[k]; !seen {
		out[k] = Position{File: file, Line: n.Line}
	}
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node, key string) string {
	if c := child(n, key); c != nil && c.Kind == yaml.ScalarNode {
		return c.Value
	}
	return ""
}

// PositionMap holds the positions Positions found.
type PositionMap map[PositionKey]Position

// Lookup finds an object's position. A namespaced object written without a
// namespace is read into "default", so that is tried as "" too.
func (p PositionMap) Lookup(kind, namespace, name string) (Position, bool) {
	if pos, ok := p[PositionKey{kind, namespace, name}]; ok {
		return pos, true
	}
	if namespace == "default" {
		pos, ok := p[PositionKey{kind, "", name}]
		return pos, ok
	}
	return Position{}, false
}
