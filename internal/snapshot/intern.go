package snapshot

import (
	"slices"
	"strings"
)

// interner shares equal strings and equal label sets between the objects
// of one snapshot. Decoding gives every object its own copy of each string,
// yet in a large cluster most are repeats: namespaces, node and image
// names, label keys and values, condition types. A pod of a ReplicaSet has
// the same labels as its siblings. Checks never modify objects (see
// Snapshot), so sharing is safe. Not safe for concurrent use: each
// snapshot is filled by one goroutine.
type interner struct {
	strs   map[string]string
	yes    *bool
	no     *bool
	labels map[string]map[string]string
	key    strings.Builder
	keys   []string
}

func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	if in.strs == nil {
		in.strs = map[string]string{}
	}
	if c, ok := in.strs[s]; ok {
		return c
	}
	in.strs[s] = s
	return s
}

// labelSet returns a map equal to m, shared with every earlier equal one.
func (in *interner) labelSet(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	in.keys = in.keys[:0]
	for k := range m {
		in.keys = append(in.keys, k)
	}
	slices.Sort(in.keys)
	in.key.Reset()
	for _, k := range in.keys {
		// NUL cannot occur in label keys or values.
		in.key.WriteString(k)
		in.key.WriteByte(0)
		in.key.WriteString(m[k])
		in.key.WriteByte(0)
	}
	if in.labels == nil {
		in.labels = map[string]map[string]string{}
	}
	key := in.key.String()
	if c, ok := in.labels[key]; ok {
		return c
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[in.str(k)] = in.str(v)
	}
	in.labels[key] = c
	return c
}

// boolPtr returns a shared pointer to *b's value, or nil: owner references
// and container statuses each hold one, and a pointer of their own costs 8
// bytes each.
func (in *interner) boolPtr(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		if in.yes == nil {
			in.yes = new(bool)
			*in.yes = true
		}
		return in.yes
	default:
		if in.no == nil {
			in.no = new(bool)
		}
		return in.no
	}
}
