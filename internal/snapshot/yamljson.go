package snapshot

import (
	"fmt"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// duplicate is a key given twice in one YAML mapping.
type duplicate struct {
	path        string // dotted path of the key, e.g. spec.template.metadata.labels.app
	first, line int    // 1-based lines, relative to the converted text
}

// yamlToJSON converts one YAML document to JSON as kubectl and the API
// server do (sigs.k8s.io/yaml over YAML 1.1): a key given twice in one
// mapping keeps its last value. Such keys come back in dups, for a
// warning: the file says two things and only one is read.
//
// The strict conversion runs first; only a document it refuses is read
// again leniently, so clean input is parsed once.
func yamlToJSON(y []byte) (j []byte, dups []duplicate, err error) {
	j, err = yaml.YAMLToJSONStrict(y)
	if err == nil {
		return j, nil, nil
	}
	strictErr := err
	j, err = yaml.YAMLToJSON(y)
	if err != nil {
		return nil, nil, err // malformed, not only repeated keys
	}
	// Strict decoding also refuses a key that overrides one merged in
	// with "<<: *anchor", which YAML allows: only keys written twice are
	// reported.
	dups, ok := findDuplicates(y)
	if !ok {
		// The YAML 1.2 parser cannot read what the 1.1 parser did: say
		// what the strict parser saw instead.
		dups = []duplicate{{path: oneLine(strictErr.Error())}}
	}
	return j, dups, nil
}

// findDuplicates lists the keys written twice in one mapping, in document
// order. ok is false when the document cannot be parsed as YAML 1.2.
func findDuplicates(y []byte) (dups []duplicate, ok bool) {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(y, &doc); err != nil {
		return nil, false
	}
	var walk func(n *yamlv3.Node, path string)
	walk = func(n *yamlv3.Node, path string) {
		switch n.Kind {
		case yamlv3.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				walk(c, path+"["+strconv.Itoa(i)+"]")
			}
		case yamlv3.MappingNode:
			seen := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind != yamlv3.ScalarNode || k.Tag == "!!merge" {
					continue
				}
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if first, ok := seen[k.Value]; ok {
					dups = append(dups, duplicate{path: p, first: first, line: k.Line})
				} else {
					seen[k.Value] = k.Line
				}
				walk(v, p)
			}
			// Aliases are not followed: what they point at is walked
			// where it is defined, and following them could multiply
			// the work (the "billion laughs" document).
		}
	}
	walk(&doc, "")
	return dups, true
}

// message says what a duplicate means for the reader; fileLine turns the
// converted text's lines into the file's.
func (d duplicate) message(fileLine func(int) int) string {
	if d.line == 0 {
		return fmt.Sprintf("a key is given twice in one mapping (%s); the last value is used, as kubectl and the API server do", d.path)
	}
	where := fmt.Sprintf("lines %d and %d", fileLine(d.first), fileLine(d.line))
	if d.first == d.line {
		where = fmt.Sprintf("line %d", fileLine(d.line)) // a flow mapping: {a: 1, a: 2}
	}
	return fmt.Sprintf("key %q is given twice (%s); the last value is used, as kubectl and the API server do", d.path, where)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
