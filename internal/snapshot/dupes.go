package snapshot

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// objectSpan is where one file's objects of one kind lie in the
// snapshot's lists before Finish sorts them: kinds[kind] (or the custom
// list custom when kind is -1), from start to end.
type objectSpan struct {
	file       string
	kind       int
	custom     string
	start, end int
}

// objectMark is how many objects of each kind the snapshot held before a
// file was read.
type objectMark struct {
	typed  []int
	custom map[string]int
}

func (l *loader) markObjects() objectMark {
	m := objectMark{typed: make([]int, len(kinds)), custom: make(map[string]int, len(l.snap.Custom))}
	for i, k := range kinds {
		m.typed[i] = k.count(l.snap)
	}
	for key, objs := range l.snap.Custom {
		m.custom[key] = len(objs)
	}
	return m
}

// spanObjects records where the objects file added since m lie.
func (l *loader) spanObjects(file string, m objectMark) {
	for i, k := range kinds {
		if n := k.count(l.snap); n > m.typed[i] {
			l.spans = append(l.spans, objectSpan{file: file, kind: i, start: m.typed[i], end: n})
		}
	}
	// In key order, not the map's: warnDuplicates names the first
	// duplicates it meets, and the warning must not change between runs.
	for _, key := range slices.Sorted(maps.Keys(l.snap.Custom)) {
		if objs := l.snap.Custom[key]; len(objs) > m.custom[key] {
			l.spans = append(l.spans, objectSpan{file: file, kind: -1, custom: key, start: m.custom[key], end: len(objs)})
		}
	}
}

// maxNamed bounds the objects one duplicate warning names.
const maxNamed = 3

// warnDuplicates reports every object that two files define: Finish
// keeps the copy read last (files are read in the order given, a
// directory's in name order), so the warning names both files and says
// which copy is read. Copies within one file are kubectl's own business
// (a namespace dumped twice) and not reported. Only kinds that more than
// one file holds are looked at.
func (l *loader) warnDuplicates() {
	type pair struct{ earlier, later string }
	type dups struct {
		n     int
		named []string
	}
	found := map[pair]*dups{}
	var order []pair
	byKind := map[string][]objectSpan{}
	var kindOrder []string
	for _, sp := range l.spans {
		id := sp.custom
		if sp.kind >= 0 {
			id = kinds[sp.kind].res.String()
		}
		if _, ok := byKind[id]; !ok {
			kindOrder = append(kindOrder, id)
		}
		byKind[id] = append(byKind[id], sp)
	}
	for _, id := range kindOrder {
		spans := byKind[id]
		if len(spans) < 2 {
			continue
		}
		seen := map[[2]string]string{}
		for _, sp := range spans {
			label := id
			keyAt := func(i int) (string, string) {
				o := &l.snap.Custom[sp.custom][i]
				return o.GetNamespace(), o.GetName()
			}
			if sp.kind >= 0 {
				k := kinds[sp.kind]
				label = k.res.Kind
				keyAt = func(i int) (string, string) { return k.keyAt(l.snap, i) }
			} else {
				label = id[strings.LastIndex(id, "/")+1:] // apiVersion/Kind
			}
			for i := sp.start; i < sp.end; i++ {
				ns, name := keyAt(i)
				k := [2]string{ns, name}
				if prev, ok := seen[k]; ok && prev != sp.file {
					p := pair{prev, sp.file}
					d := found[p]
					if d == nil {
						d = &dups{}
						found[p] = d
						order = append(order, p)
					}
					d.n++
					if len(d.named) < maxNamed {
						d.named = append(d.named, label+" "+qualified(ns, name))
					}
				}
				seen[k] = sp.file
			}
		}
	}
	for _, p := range order {
		d := found[p]
		objs := strings.Join(d.named, ", ")
		if d.n > len(d.named) {
			objs += fmt.Sprintf(" and %d more", d.n-len(d.named))
		}
		what := "an object"
		if d.n > 1 {
			what = fmt.Sprintf("%d objects", d.n)
		}
		l.opts.warn(Warning{File: p.later, Message: fmt.Sprintf(
			"defines %s that %s defines too (%s): the copy in %s is read, as it comes later", what, p.earlier, objs, p.later)})
	}
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
