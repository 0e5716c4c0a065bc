package checktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what FactsSourced reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func TestFactsSourced(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"sourced rows", "rows:\n- {name: a, sources: [https://example.com/a]}\n", ""},
		{"row without sources", "rows:\n- {name: a}\n", "has no sources"},
		{"http source", "rows:\n- {name: a, sources: [http://example.com/a]}\n", "not an https URL"},
		{"loose fact without sources", "limit: 5\n", "top-level sources"},
		{"unchecked value", "rows:\n- {name: a, note: from memory, sources: [https://example.com/a]}\n", "from memory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "data", "x.yaml"), []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			r := &recorder{TB: t}
			FactsSourced(r)
			got := strings.Join(r.errs, "\n")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("reported %q, want %q", got, tc.want)
			}
		})
	}
}
