package check

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type testFacts struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func TestFactsParsesStrictly(t *testing.T) {
	load := Facts[testFacts]("test facts", []byte("name: a\ncount: 2\n"))
	f, err := load()
	if err != nil || f.Name != "a" || f.Count != 2 {
		t.Fatalf("got %+v, %v", f, err)
	}
	_, err = Facts[testFacts]("test facts", []byte("name: a\ncuont: 2\n"))()
	if err == nil || !strings.HasPrefix(err.Error(), "reading test facts: ") || !strings.Contains(err.Error(), "cuont") {
		t.Fatalf("unknown field: got %v, want a strict-parse error naming it", err)
	}
}

func TestFactsReturnsPrepareError(t *testing.T) {
	bad := errors.New("test facts: count must be positive")
	calls := 0
	load := Facts("test facts", []byte("name: a\ncount: 0\n"),
		func(f *testFacts) error { calls++; return nil },
		func(f *testFacts) error {
			if f.Count <= 0 {
				return bad
			}
			return nil
		})
	if f, err := load(); f != nil || err != bad {
		t.Fatalf("got %+v, %v; want nil, %v", f, err, bad)
	}
	if _, err := load(); err != bad || calls != 1 {
		t.Fatalf("second call: %v after %d parses; want the same error from one parse", err, calls)
	}
}

func TestFactsParsesOnce(t *testing.T) {
	calls := 0
	load := Facts("test facts", []byte("name: a\n"), func(f *testFacts) error {
		calls++
		f.Count = calls
		return nil
	})
	a, _ := load()
	b, _ := load()
	if a != b || calls != 1 || b.Count != 1 {
		t.Fatalf("two calls: %p %p after %d prepares; want one shared result", a, b, calls)
	}
}

func TestStatementsEvidence(t *testing.T) {
	load := Facts[Statements]("statements", []byte(`
facts:
- what: >-
    The kubelet   counts
    attached volumes.
  sources: [https://a.example, https://b.example]
observed:
- what: A case saw it.
  case: some-case
  sources: [https://c.example]
`))
	s, err := load()
	if err != nil {
		t.Fatal(err)
	}
	got := s.Evidence()
	want := []string{
		"The kubelet counts attached volumes. (https://a.example https://b.example)",
		"A case saw it. (https://c.example)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Evidence() = %q, want %q", got, want)
	}
}
