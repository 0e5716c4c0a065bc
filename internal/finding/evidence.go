package finding

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// EvidenceItem is evidence that quotes objects' fields: every object it
// names has, in the input the checks read, every field at the value given.
// A finding carries its items in EvidenceItems and each item's String as a
// line of Evidence, so that a reader of either sees the same quote; a test
// resolves every item against the input documents (internal/evidence).
//
// Objects with different values are different items: evidence about many
// objects groups them by distinct value rather than quoting one object's
// values for all.
type EvidenceItem struct {
	// Objects are the objects that have these values, up to
	// MaxItemObjects of them.
	Objects []ObjectRef `json:"objects"`
	// More is how many further objects have the same values but are not
	// listed.
	More   int     `json:"more,omitempty"`
	Fields []Field `json:"fields"`
}

// Field is one field of an object and its value as read.
//
// Path is a dotted field path from the object's root, as `kubectl explain`
// names fields: "status.nodeInfo.kubeletVersion". A list element is
// selected by its index, "spec.containers[0].image", or, for lists keyed
// by a field, by that field's value: "spec.containers[name=app].image"
// (kubectl's JSONPath filter [?(@.name=="app")]). A map key holding dots
// or slashes is bracketed: "metadata.labels[kubernetes.io/os]".
//
// Value is the value as `kubectl get -o jsonpath` prints it: strings as
// they are, numbers and booleans in decimal and lowercase. Absent is true
// (and Value empty) when the evidence is that the field is not there.
type Field struct {
	Path   string `json:"path"`
	Value  string `json:"value"`
	Absent bool   `json:"absent,omitempty"`
}

// MaxItemObjects is how many objects one evidence item lists; More counts
// the rest.
const MaxItemObjects = 50

// maxNamedInLine is how many object names an item's evidence line spells
// out; the JSON item lists them all (up to MaxItemObjects).
const maxNamedInLine = 10

// Quote is an evidence item about one object.
func Quote(obj ObjectRef, fields ...Field) EvidenceItem {
	return EvidenceItem{Objects: []ObjectRef{obj}, Fields: fields}
}

// Value is a field read at a value. An empty string is Absent: the API
// omits empty string fields, so "" in a typed object means not there.
func Value(path string, value any) Field {
	text := valueText(value)
	if _, isString := value.(string); isString && text == "" {
		return Absent(path)
	}
	return Field{Path: path, Value: text}
}

// Absent is a field that is not there.
func Absent(path string) Field { return Field{Path: path, Absent: true} }

// Entry is a map entry (a label, an annotation, a ConfigMap key) read at
// value. Unlike a string field, a map keeps an entry whose value is empty,
// and node-role.kubernetes.io/control-plane: "" is as present as any
// label, so an empty value stays a value here and prints as "".
func Entry(path, value string) Field { return Field{Path: path, Value: value} }

// JSONText prints v as kubectl's JSONPath output prints a list or map
// field, and as internal/evidence reads one back: compact JSON with object
// keys sorted and HTML characters unescaped (a probe command may hold
// "2>&1"). A value that does not encode prints in fmt's form.
func JSONText(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return string(raw)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return string(raw)
	}
	return strings.TrimSpace(b.String())
}

// valueText prints a value as kubectl's JSONPath output does.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// Count is how many objects the item is about.
func (e EvidenceItem) Count() int { return len(e.Objects) + e.More }

// String is the item's evidence line: the objects, then path=value for
// each field. "Node/aks-1: status.nodeInfo.kubeletVersion=v1.34.3";
// "3 Nodes (a, b, c): ...".
func (e EvidenceItem) String() string {
	var b strings.Builder
	b.WriteString(e.subject())
	b.WriteString(": ")
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		if f.Absent {
			b.WriteString(f.Path + " absent")
			continue
		}
		if f.Value == "" {
			b.WriteString(f.Path + `=""`)
			continue
		}
		b.WriteString(f.Path + "=" + f.Value)
	}
	return b.String()
}

func (e EvidenceItem) subject() string {
	if e.Count() == 1 && len(e.Objects) == 1 {
		return e.Objects[0].String()
	}
	kind := ""
	for i, o := range e.Objects {
		if i == 0 {
			kind = o.Kind
		} else if o.Kind != kind {
			kind = ""
			break
		}
	}
	names := make([]string, 0, min(len(e.Objects), maxNamedInLine))
	for i, o := range e.Objects {
		if i == maxNamedInLine {
			break
		}
		switch {
		case kind == "":
			names = append(names, o.String())
		case o.Namespace != "":
			names = append(names, o.Namespace+"/"+o.Name)
		default:
			names = append(names, o.Name)
		}
	}
	list := strings.Join(names, ", ")
	if left := e.Count() - len(names); left > 0 {
		list += fmt.Sprintf(" and %d more", left)
	}
	what := "objects"
	if kind != "" {
		what = pluralKind(kind)
	}
	return fmt.Sprintf("%d %s (%s)", e.Count(), what, list)
}

// pluralKind is "Nodes", "Ingresses", "NetworkPolicies".
func pluralKind(kind string) string {
	switch {
	case strings.HasSuffix(kind, "s"), strings.HasSuffix(kind, "x"):
		return kind + "es"
	case strings.HasSuffix(kind, "y"):
		return kind[:len(kind)-1] + "ies"
	}
	return kind + "s"
}

// AddEvidence appends items to the finding: to EvidenceItems, and each
// item's line to Evidence.
func (f *Finding) AddEvidence(items ...EvidenceItem) {
	for _, it := range items {
		f.EvidenceItems = append(f.EvidenceItems, it)
		f.Evidence = append(f.Evidence, it.String())
	}
}

// Grouper builds evidence items from per-object values: objects whose
// fields read the same go into one item. Items come out in the order their
// first object was added, objects in the order added.
type Grouper struct {
	items []EvidenceItem
	index map[string]int // fieldsKey to position in items
	buf   []byte         // fieldsKey's bytes, reused between Adds
}

// Add records one object's fields.
func (g *Grouper) Add(obj ObjectRef, fields ...Field) {
	g.buf = fieldsKey(g.buf[:0], fields)
	key := g.buf
	i, ok := g.index[string(key)] // no string is built for the lookup
	if !ok {
		if g.index == nil {
			g.index = map[string]int{}
		}
		i = len(g.items)
		g.index[string(key)] = i
		g.items = append(g.items, EvidenceItem{Fields: slices.Clone(fields)})
	}
	it := &g.items[i]
	if len(it.Objects) < MaxItemObjects {
		it.Objects = append(it.Objects, obj)
	} else {
		it.More++
	}
}

// Items returns the groups, in the order their first object was added.
func (g *Grouper) Items() []EvidenceItem { return g.items }

// fieldsKey is one key for a list of fields, equal for equal lists.
// Built with plain appends: Grouper.Add calls it for every object a check
// groups (every node of the cluster, for each finding of
// selector-matches-no-node), where fmt was most of the cost.
func fieldsKey(b []byte, fs []Field) []byte {
	for _, f := range fs {
		b = append(b, f.Path...)
		b = append(b, 0)
		b = append(b, f.Value...)
		b = append(b, 0)
		if f.Absent {
			b = append(b, 1)
		} else {
			b = append(b, 2)
		}
	}
	return b
}
