package snapshot

import (
	"encoding/binary"
	"strings"
	"testing"
	utf16enc "unicode/utf16"
)

// utf16 encodes UTF-8 text as UTF-16 with a byte-order mark, little-endian
// (what Windows PowerShell 5.1's ">" writes) or big-endian.
func utf16(text []byte, bigEndian bool) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if bigEndian {
		order = binary.BigEndian
	}
	out := order.AppendUint16(nil, 0xfeff)
	for _, u := range utf16enc.Encode([]rune(string(text))) {
		out = order.AppendUint16(out, u)
	}
	return out
}

// TestByteOrderMarks: kubectl reads UTF-16 (either order) and UTF-8 files
// that start with a byte-order mark; the loader refused them with exit 2.
func TestByteOrderMarks(t *testing.T) {
	list := kubectlList(t, listObjects()...)
	// PowerShell writes CRLF line ends; "kubectl get" of several
	// resource types by name prints one document each.
	crlf := func(s string) []byte { return []byte(strings.ReplaceAll(s, "\n", "\r\n")) }
	twoNodes := crlf(nodeYAML + "---\n" + strings.Replace(nodeYAML, "n1", "n2", 1))
	json := []byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"zone":"süd"}}}`)
	cases := []struct {
		name        string
		data        []byte
		pods, nodes int
	}{
		{"UTF-16LE YAML List (PowerShell 5.1)", utf16(crlf(string(list)), false), 7, 0},
		{"UTF-16LE two documents", utf16(twoNodes, false), 0, 2},
		{"UTF-16BE YAML List", utf16(list, true), 7, 0},
		{"UTF-8 with BOM, YAML", append([]byte{0xef, 0xbb, 0xbf}, list...), 7, 0},
		{"UTF-16LE JSON", utf16(json, false), 0, 1},
		{"UTF-8 with BOM, JSON", append([]byte{0xef, 0xbb, 0xbf}, json...), 0, 1},
		{"gzipped UTF-16LE", gz(t, utf16(twoNodes, false)), 0, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, t.TempDir(), "dump.yaml", tc.data)
			s, err := LoadPaths([]string{p})
			if err != nil {
				t.Fatal(err)
			}
			// Every object, not only the first document's.
			if len(s.Pods) != tc.pods || len(s.Nodes) != tc.nodes {
				t.Errorf("%d pods and %d nodes, want %d and %d", len(s.Pods), len(s.Nodes), tc.pods, tc.nodes)
			}
			if tc.name == "UTF-16LE JSON" && s.Nodes[0].Labels["zone"] != "süd" {
				t.Errorf("label %q, want süd", s.Nodes[0].Labels["zone"])
			}
		})
	}
	// Streamed item by item, a UTF-16 List reads as it does whole.
	whole, _, err := loadWith(t, "l.yaml", utf16(list, false), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	streamed, _, err := loadWith(t, "l.yaml", utf16(list, false), 0)
	if err != nil {
		t.Fatal(err)
	}
	if written(t, whole) != written(t, streamed) || len(whole.Pods) != 7 {
		t.Errorf("UTF-16 List streamed differs from whole (%d pods)", len(whole.Pods))
	}
}
