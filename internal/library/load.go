package library

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	librarydata "github.com/kubegap/kubegap/library"
)

// Library is a loaded, validated incident library. It is read-only after
// Load and safe for concurrent use.
type Library struct {
	taxonomy Taxonomy
	// cases are sorted by date, newest first, then by ID.
	cases []Case
	byID  map[string]int
	// files maps case IDs to the file each came from, for messages.
	files map[string]string
}

// LoadError lists every problem Load found, each naming its file, so a case
// writer sees them all at once rather than one per run.
type LoadError struct {
	Problems []error
}

func (e *LoadError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return fmt.Sprintf("incident library has %d problem(s):\n%s", len(e.Problems), strings.Join(msgs, "\n"))
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (e *LoadError) Unwrap() []error { return e.Problems }

// Load reads taxonomy.yaml and cases/*.yaml (or .yml) from fsys, the layout
// of the repository's library directory and of librarydata.FS. A case's ID is
// its file name without the extension. Decoding is strict and every case is
// validated; the error, a *LoadError, lists every problem found.
func Load(fsys fs.FS) (*Library, error) {
	var problems []error
	lib := &Library{byID: map[string]int{}, files: map[string]string{}}

	raw, err := fs.ReadFile(fsys, "taxonomy.yaml")
	if err != nil {
		return nil, &LoadError{Problems: []error{fmt.Errorf("reading taxonomy.yaml: %w", err)}}
	}
	if err := decodeStrict(raw, &lib.taxonomy); err != nil {
		return nil, &LoadError{Problems: []error{fmt.Errorf("taxonomy.yaml: %w", err)}}
	}
	if errs := lib.taxonomy.validate(); len(errs) > 0 {
		return nil, &LoadError{Problems: errs}
	}

	entries, err := fs.ReadDir(fsys, "cases")
	if err != nil {
		return nil, &LoadError{Problems: []error{fmt.Errorf("reading cases directory: %w", err)}}
	}
	fileOf := lib.files
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		file := path.Join("cases", name)
		ext := path.Ext(name)
		if ext != ".yaml" && ext != ".yml" {
			problems = append(problems, fmt.Errorf("%s: not a case file (cases are .yaml)", file))
			continue
		}
		id := strings.TrimSuffix(name, ext)
		if !validID(id) {
			problems = append(problems, fmt.Errorf("%s: case ID %q (the file name) must be lowercase letters and digits separated by single hyphens", file, id))
			continue
		}
		if other, dup := fileOf[id]; dup {
			problems = append(problems, fmt.Errorf("%s: case ID %q is already used by %s", file, id, other))
			continue
		}
		fileOf[id] = file
		raw, err := fs.ReadFile(fsys, file)
		if err != nil {
			problems = append(problems, fmt.Errorf("reading %s: %w", file, err))
			continue
		}
		var c Case
		if err := decodeStrict(raw, &c); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", file, err))
			continue
		}
		if err := noComments(raw); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", file, err))
			continue
		}
		c.ID = id
		if errs := validateCase(&c, &lib.taxonomy); len(errs) > 0 {
			for _, e := range errs {
				problems = append(problems, fmt.Errorf("%s: %w", file, e))
			}
			continue
		}
		lib.cases = append(lib.cases, c)
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	sort.Slice(lib.cases, func(i, j int) bool { return newerFirst(&lib.cases[i], &lib.cases[j]) })
	for i, c := range lib.cases {
		lib.byID[c.ID] = i
	}
	return lib, nil
}

// decodeStrict decodes exactly one YAML document into v, refusing unknown
// and duplicate fields: a misspelt key would otherwise drop its text
// silently.
func decodeStrict(raw []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("file is empty")
		}
		return fmt.Errorf("decoding YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("more than one YAML document (one file holds one case)")
	}
	return nil
}

// noComments refuses YAML comments in a case file. A case has no use for
// them, and in a plain scalar " #" starts one: "- Fixed by #123" would load
// as "- Fixed by" and silently drop the issue number.
func noComments(raw []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("decoding YAML: %w", err)
	}
	var found *yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if found != nil {
			return
		}
		if n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
			found = n
			return
		}
		for _, child := range n.Content {
			walk(child)
		}
	}
	walk(&doc)
	if found != nil {
		return fmt.Errorf("line %d has a YAML comment; case files take none, and text containing \" #\" must be quoted or folded (>-), or the rest of the line is lost", found.Line)
	}
	return nil
}

// defaultLibrary loads the embedded library on first use; it is the only
// package-level state and is written once.
var defaultLibrary = sync.OnceValues(func() (*Library, error) {
	return Load(librarydata.FS)
})

// Default returns the incident library embedded in the binary, loaded once.
func Default() (*Library, error) { return defaultLibrary() }

// Cases returns every case, newest first (ties by ID). The slice is a copy;
// the cases' own slices are shared and must not be modified.
func (l *Library) Cases() []Case {
	return append([]Case(nil), l.cases...)
}

// Case returns the case with the given ID.
func (l *Library) Case(id string) (Case, bool) {
	i, ok := l.byID[id]
	if !ok {
		return Case{}, false
	}
	return l.cases[i], true
}

// Taxonomy returns the facets and their values.
func (l *Library) Taxonomy() Taxonomy { return l.taxonomy }

// newerFirst orders cases by date, newest first, then by ID. Dates are
// YYYY-MM-DD or YYYY-MM, so string order is date order.
func newerFirst(a, b *Case) bool {
	if a.Date != b.Date {
		return a.Date > b.Date
	}
	return a.ID < b.ID
}
