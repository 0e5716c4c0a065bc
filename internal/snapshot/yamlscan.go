package snapshot

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// streamYAMLAfter is the size past which a YAML document with a top-level
// items sequence is read item by item instead of whole. Converting YAML
// builds a tree of every value: a whole 104 MB List of 20k pods took
// 2.1 GB. Below it, a document is converted whole, exactly as before.
const streamYAMLAfter = 8 << 20

// yamlDoc is one YAML document of a file. A large List's items are not in
// text: they were handed out one by one as they were read (see next).
type yamlDoc struct {
	text []byte // the document; when streamed, all of it but the items
	// line is the file line before text's first line. When streamed, the
	// items block was cut out after the first split lines of text, and
	// jump lines are missing there.
	line, split, jump int
	wasStreamed       bool
}

// fileLine turns a line of text (1-based) into a line of the file.
func (d *yamlDoc) fileLine(l int) int {
	if d.wasStreamed && l > d.split {
		return d.line + l + d.jump
	}
	return d.line + l
}

// yamlPiece is one item of a streamed List: its text, the sequence entry
// as written ("- apiVersion: v1\n  kind: Pod\n..."), and where it is.
type yamlPiece struct {
	text []byte
	line int // file line before text's first line
	item int // 1-based index in the List
}

// docScanner cuts a YAML stream into documents at "---" lines, as
// k8s.io/apimachinery's YAMLReader does, and counts lines so that
// messages can name them.
//
// A document whose top level is a block mapping with an "items:" block
// sequence (what "kubectl get -o yaml" prints: "items:" at column 0, each
// entry starting "- " at one fixed indentation) and that grows past
// streamAfter is cut into items by lines: an entry is a line at the
// sequence's indentation starting "- ", with every following line that
// is deeper, blank or a comment. YAML allows a line at that indentation
// inside an entry only within a quoted or flow scalar spread over lines,
// which leaves the piece before it unterminated: its parse fails, and the
// load reports it, never a wrong reading. Anchors used across items fail
// the same way (their piece has no definition).
type docScanner struct {
	br          *bufio.Reader
	line        int // lines consumed
	streamAfter int
	long        []byte // a line longer than br's buffer
}

// scan states within one document.
const (
	inHead     = iota // top-level keys before or without items
	inItems           // the items block sequence
	afterItems        // top-level keys after it
	noStream          // a shape the line cutter does not read; converted whole
)

// next reads the next document. Items of a streamed List are passed to
// emit in order, each text its own copy. io.EOF means no document is left.
func (s *docScanner) next(emit func(yamlPiece) error) (yamlDoc, error) {
	var (
		buf       []byte
		doc       = yamlDoc{line: s.line}
		state     = inHead
		indent    = -1 // of the items' "- ", once seen
		itemsLine = -1 // offset of the "items:" line in buf
		itemsEnd  = -1 // offset in buf of the first line after the items
		lineAt    = 0  // file line of the "items:" line
		endLine   = 0  // file line of the first line after the items
		marks     []struct{ off, line int }
		streaming bool
		cur       []byte // the item being read, when streaming
		curLine   int
		items     int
	)
	flushCur := func() error {
		if cur == nil {
			return nil
		}
		items++
		p := yamlPiece{text: cur, line: curLine, item: items}
		cur = nil
		return emit(p)
	}
	startStreaming := func() error {
		end := len(buf)
		if state == afterItems {
			end = itemsEnd
		}
		for i, m := range marks {
			stop := end
			if i+1 < len(marks) {
				stop = marks[i+1].off
			}
			text := bytes.Clone(buf[m.off:stop])
			if i == len(marks)-1 && state == inItems {
				cur, curLine = text, m.line // still growing
				break
			}
			items++
			if err := emit(yamlPiece{text: text, line: m.line, item: items}); err != nil {
				return err
			}
		}
		head := bytes.Clone(buf[:itemsLine])
		doc.split = bytes.Count(head, []byte("\n"))
		if state == afterItems {
			head = append(head, buf[itemsEnd:]...)
		}
		buf, marks, streaming, doc.wasStreamed = head, nil, true, true
		return nil
	}
	finish := func() (yamlDoc, error) {
		if streaming {
			if state == inItems {
				if err := flushCur(); err != nil {
					return yamlDoc{}, err
				}
			} else {
				doc.jump = endLine - lineAt // the items: line and its entries
			}
		}
		doc.text = buf
		return doc, nil
	}
	for {
		line, err := s.readLine()
		if err != nil && err != io.EOF {
			return yamlDoc{}, err
		}
		if len(line) > 0 {
			s.line++
		}
		if isSeparator(line) {
			rest := bytes.TrimSpace(line[3:])
			if len(rest) > 0 && rest[0] != '#' {
				return yamlDoc{}, fmt.Errorf("line %d: invalid YAML document separator: %s", s.line, excerpt(string(rest)))
			}
			if len(buf) == 0 && !streaming {
				doc.line = s.line // nothing yet: the document starts after it
				if err == io.EOF {
					return yamlDoc{}, io.EOF
				}
				continue
			}
			return finish()
		}
		if len(line) == 0 && err == io.EOF {
			if len(buf) == 0 && !streaming {
				return yamlDoc{}, io.EOF
			}
			return finish()
		}

		// Where the line belongs.
		toItem := false
		switch state {
		case inHead, afterItems:
			if isItemsKey(line) {
				if state == afterItems {
					if streaming {
						return yamlDoc{}, fmt.Errorf("line %d: the document has a second top-level items key", s.line)
					}
					state = noStream
					break
				}
				state, itemsLine, lineAt = inItems, len(buf), s.line
			}
		case inItems:
			if blankOrComment(line) {
				toItem = indent >= 0
				break
			}
			n := indentOf(line)
			switch {
			case (indent < 0 || n == indent) && isEntry(line, n):
				if indent < 0 {
					indent = n
				}
				if streaming {
					if err := flushCur(); err != nil {
						return yamlDoc{}, err
					}
					curLine = s.line - 1
				} else {
					marks = append(marks, struct{ off, line int }{len(buf), s.line - 1})
				}
				toItem = true
			case indent >= 0 && n > indent:
				toItem = true
			case n == 0:
				// A top-level key: the items are over.
				if streaming {
					if err := flushCur(); err != nil {
						return yamlDoc{}, err
					}
				}
				state, itemsEnd, endLine = afterItems, len(buf), s.line
				if isItemsKey(line) && streaming {
					return yamlDoc{}, fmt.Errorf("line %d: the document has a second top-level items key", s.line)
				}
				if indent < 0 || isItemsKey(line) {
					state = noStream // "items:" with no entries, or twice
				}
			default:
				if streaming {
					toItem = true // not YAML; the piece's parse says so
				} else {
					state = noStream
				}
			}
		}
		if streaming && toItem {
			cur = append(cur, line...)
		} else {
			buf = append(buf, line...)
		}
		if int64(len(buf)+len(cur)) > documentLimit {
			return yamlDoc{}, errLargeDoc
		}
		if !streaming && len(buf) > s.streamAfter && len(marks) > 0 && (state == inItems || state == afterItems) {
			// "items:" at column 0 is a top-level key only if what comes
			// before it is whole YAML: not, say, inside a quoted scalar
			// that runs on over lines at column 0.
			if _, err := yaml.YAMLToJSON(buf[:itemsLine]); err != nil {
				state = noStream
			} else if err := startStreaming(); err != nil {
				return yamlDoc{}, err
			}
		}
		if err == io.EOF {
			return finish()
		}
	}
}

// readLine returns the next line with its newline, valid until the next
// call; at the end of input it returns what is left with io.EOF.
func (s *docScanner) readLine() ([]byte, error) {
	line, err := s.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	s.long = append(s.long[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = s.br.ReadSlice('\n')
		s.long = append(s.long, line...)
		if len(s.long) > maxLine {
			return nil, errLongLine
		}
	}
	return s.long, err
}

// isSeparator: a line starting "---" ends a document (YAMLReader's rule).
func isSeparator(line []byte) bool { return bytes.HasPrefix(line, []byte("---")) }

// isItemsKey: "items:" at column 0 with nothing after it but a comment.
func isItemsKey(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("items:"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || (rest[0] == '#' && len(line) > 6 && (line[6] == ' ' || line[6] == '\t'))
}

// isEntry: after n spaces, a block sequence entry: "-" then a space, a
// tab or the end of the line.
func isEntry(line []byte, n int) bool {
	if n >= len(line) || line[n] != '-' {
		return false
	}
	if n+1 == len(line) {
		return true
	}
	switch line[n+1] {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func indentOf(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

func blankOrComment(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\n")
	return len(t) == 0 || t[0] == '#'
}
