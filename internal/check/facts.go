package check

import (
	"fmt"
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
