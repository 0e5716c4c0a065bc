package check

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"
)

// Facts returns a loader for a check's embedded data file: the first call
// parses data into a T and runs prepare on it (checks that rows are
// complete, parses versions, compiles patterns, builds indexes); later
// calls return the same result, error included.
//
// The parse is strict (sigs.k8s.io/yaml UnmarshalStrict) so that a typo in
// a field name of the data file is an error, not a fact silently left
// empty. It happens once because checks run on every audit and in
// benchmarks, while the data cannot change after build. A parse error reads
// "reading <what>: ..."; prepare's error is returned as it is, so it should
// name the file itself.
func Facts[T any](what string, data []byte, prepare ...func(*T) error) func() (*T, error) {
	return sync.OnceValues(func() (*T, error) {
		var f T
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		for _, p := range prepare {
			if err := p(&f); err != nil {
				return nil, err
			}
		}
		return &f, nil
	})
}

// Statements is the shape of a data file of plain sourced statements: the
// facts a check's rules rest on and what the cases observed. Checks quote
// them whole in their evidence (see Evidence) rather than read values out
// of them.
type Statements struct {
	Facts    []Statement `json:"facts"`
	Observed []Statement `json:"observed"`
}

// Statement is one sourced sentence of a data file, in our words.
type Statement struct {
	What    string   `json:"what"`
	Case    string   `json:"case,omitempty"`
	Sources []string `json:"sources"`
}

// Evidence renders every statement, facts first, as one evidence line:
// the sentence with its whitespace folded, then its sources.
func (s *Statements) Evidence() []string {
	out := make([]string, 0, len(s.Facts)+len(s.Observed))
	for _, r := range slices.Concat(s.Facts, s.Observed) {
		out = append(out, strings.Join(strings.Fields(r.What), " ")+" ("+strings.Join(r.Sources, " ")+")")
	}
	return out
}
