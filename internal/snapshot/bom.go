package snapshot

import (
	"bufio"
	"bytes"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// decodeBOM reads a file that starts with a byte-order mark as UTF-8.
// Windows PowerShell 5.1 writes UTF-16LE with a mark for
// "kubectl get -o yaml > dump.yaml"; editors add a UTF-8 mark. kubectl
// reads both; JSON and YAML parsers here take UTF-8 only. Files without
// a mark are returned as they are.
func decodeBOM(br *bufio.Reader) *bufio.Reader {
	head, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(head, []byte{0xef, 0xbb, 0xbf}):
		br.Discard(3)
		return br
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}), bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		// The mark says which end comes first, and is dropped.
		dec := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder()
		return bufio.NewReaderSize(transform.NewReader(br, dec), 64<<10)
	}
	return br
}
