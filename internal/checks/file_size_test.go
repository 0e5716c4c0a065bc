package checks

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxCheckFileLines is where a check's file is split by rule into
// <check>_<part>.go files of its package (issue 26; README, "Add a check").
const maxCheckFileLines = 500

// TestNoCheckFileOverLimit: no non-test .go file of the packages below
// internal/checks (the area packages, and realmanifests; testdata skipped)
// has more than maxCheckFileLines lines, counted as wc -l counts them.
func TestNoCheckFileOverLimit(t *testing.T) {
	lines, err := goFileLines(".")
	if err != nil {
		t.Fatal(err)
	}
	// The walk reaches every area a registered check is defined in.
	dirs := map[string]bool{}
	for path := range lines {
		dirs[filepath.Dir(path)] = true
	}
	for _, c := range All() {
		if a := Area(c); !dirs[a] {
			t.Errorf("%s: area %q has no non-test .go file in the walk", c.ID, a)
		}
	}
	var over []string
	for _, path := range slices.Sorted(maps.Keys(lines)) {
		if n := lines[path]; n > maxCheckFileLines {
			over = append(over, fmt.Sprintf("%s %d", path, n))
		}
	}
	if len(over) > 0 {
		t.Errorf("files over %d lines (split each by rule into <check>_<part>.go, as dataplane_node_compat*.go is):\n%s",
			maxCheckFileLines, strings.Join(over, "\n"))
	}
}

// TestGoFileLinesCounts: the walk counts lines as wc -l does, skips test
// files, testdata and the root's own files, and so finds a file of 501
// lines and not one of 500.
func TestGoFileLinesCounts(t *testing.T) {
	root := t.TempDir()
	write := func(path string, n int) {
		t.Helper()
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(strings.Repeat("//\n", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("root.go", 900)
	write("area/long.go", 501)
	write("area/limit.go", 500)
	write("area/long_test.go", 900)
	write("area/testdata/x.go", 900)
	got, err := goFileLines(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"area/long.go": 501, "area/limit.go": 500}
	if len(got) != len(want) || got["area/long.go"] != 501 || got["area/limit.go"] != 500 {
		t.Errorf("goFileLines = %v, want %v", got, want)
	}
}

// goFileLines counts the lines of every non-test .go file in the
// directories below root, testdata skipped, by path relative to root with
// forward slashes.
func goFileLines(root string) (map[string]int, error) {
	out := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !strings.Contains(rel, "/") || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[rel] = bytes.Count(data, []byte("\n"))
		return nil
	})
	return out, err
}
