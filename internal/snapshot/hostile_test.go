package snapshot

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadOrHang runs LoadPaths and fails the test if it has not returned in
// a minute: before the stat checks, a named pipe blocked open for ever.
// (A hang detector, not a speed assertion: a load of these files that
// takes more than a moment is the bug in any case.)
func loadOrHang(t *testing.T, paths ...string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := LoadPaths(paths)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("LoadPaths(%v) did not return", paths)
		return nil
	}
}

// readBytes is this process's count of bytes read by read(2) and
// friends (/proc/self/io rchar), or -1 where there is none.
func readBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// cost measures what fn reads and allocates: bytes read (rchar, -1 where
// /proc/self/io is missing) and bytes allocated (MemStats.TotalAlloc).
func cost(fn func()) (read, alloc int64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r0 := readBytes()
	fn()
	r1 := readBytes()
	runtime.ReadMemStats(&after)
	read = -1
	if r0 >= 0 && r1 >= 0 {
		read = r1 - r0
	}
	return read, int64(after.TotalAlloc - before.TotalAlloc)
}

// TestHostileFilesCostLittle: a 5 GB sparse file (NUL bytes, no newline),
// as a YAML, a JSON and a gzip-named file, fails on the line limit after
// reading a few MB, not after reading and holding a GiB line. The
// acceptance bound is 200 MB read and 200 MB allocated (issue 28: these
// inputs cost 2.2-3.4 GB before).
func TestHostileFilesCostLittle(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a 5 GB sparse file")
	}
	dir := t.TempDir()
	const size = 5 << 30
	const bound = 200 << 20
	for _, tc := range []struct{ name, head string }{
		{"sparse.yaml", ""},
		{"sparse.yaml.gz", ""},
		{"sparse.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"a":"`},
		{"comment.yaml", "# "},
	} {
		name := tc.name
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(tc.head); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(size); err != nil {
				f.Close()
				t.Skipf("no sparse file here: %v", err)
			}
			f.Close()
			var loadErr error
			read, alloc := cost(func() { loadErr = loadOrHang(t, p) })
			t.Logf("%s: read %d bytes, allocated %d bytes: %v", name, read, alloc, loadErr)
			if loadErr == nil || strings.Contains(loadErr.Error(), "\n") || !strings.Contains(loadErr.Error(), name) {
				t.Errorf("error %v, want one line naming %s", loadErr, name)
			}
			if read > bound {
				t.Errorf("read %d bytes of a sparse file, want at most %d", read, bound)
			}
			if alloc > bound {
				t.Errorf("allocated %d bytes, want at most %d", alloc, bound)
			}
		})
	}
}

// TestLongLineNamesTheLimit: a line past maxLine ends the load with the
// limit named; the file is not read on to its end.
func TestLongLineNamesTheLimit(t *testing.T) {
	p := write(t, t.TempDir(), "long.yaml", append([]byte("apiVersion: v1\nkind: ConfigMap\ndata: {a: "), bytes.Repeat([]byte("x"), maxLine+1<<20)...))
	err := loadOrHang(t, p)
	if err == nil || !strings.Contains(err.Error(), "long.yaml") || !strings.Contains(err.Error(), fmt.Sprintf("longer than %d MiB", maxLine>>20)) {
		t.Errorf("error %v, want the line limit named", err)
	}
}

// TestDocumentAndGzipLimits: a JSON value, a YAML document and a gzip
// file past their limits (lowered here) end with the limit named, not
// with "malformed JSON" or a partial load.
func TestDocumentAndGzipLimits(t *testing.T) {
	defer func(d, g int64) { documentLimit, gzipLimit = d, g }(documentLimit, gzipLimit)
	documentLimit, gzipLimit = 64<<10, 256<<10
	dir := t.TempDir()
	pad := strings.Repeat("x", 100<<10)
	var docs strings.Builder // many small documents: within the document limit, not the gzip one
	for docs.Len() < 300<<10 {
		docs.WriteString(nodeYAML + "---\n")
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"big.json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"a":"` + pad + `"}}`), "document 1: a document or List item larger than"},
		{"second.json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}` + "\n" + `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"a":"` + pad + `"}}`), "document 2: a document or List item larger than"},
		{"item.json", []byte(snapshotHead + `"items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"a":"` + pad + `"}}]}`), "a document or List item larger than"},
		{"big.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n" + strings.Repeat("  k: "+strings.Repeat("y", 1000)+"\n", 100)), "document 1: a document or List item larger than"},
		{"bomb.yaml.gz", gz(t, []byte(docs.String())), "decompresses to more than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := loadOrHang(t, write(t, dir, tc.name, tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.name+": ") || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "malformed") {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// Under the limits the same shapes load: the budget is per value.
	documentLimit, gzipLimit = maxDocument, maxDecompressed
	for _, name := range []string{"big.json", "second.json", "item.json", "big.yaml", "bomb.yaml.gz"} {
		if err := loadOrHang(t, filepath.Join(dir, name)); err != nil {
			t.Errorf("%s under the real limits: %v", name, err)
		}
	}
}

// TestGzipPastLimitWithinRatio: a gzip file that inflates past the fixed
// limit (lowered here) loads whole when it stays within maxGzipRatio of
// its compressed size, as a large cluster's snapshot does; the bomb of
// TestDocumentAndGzipLimits, far past the ratio, does not.
func TestGzipPastLimitWithinRatio(t *testing.T) {
	defer func(g int64) { gzipLimit = g }(gzipLimit)
	gzipLimit = 256 << 10
	rng := rand.New(rand.NewPCG(1, 2))
	var docs strings.Builder
	n := 0
	for docs.Len() < 1<<20 { // four times the limit, in ConfigMaps of random hex: gzip halves it
		b := make([]byte, 2000)
		for i := range b {
			b[i] = "0123456789abcdef"[rng.IntN(16)]
		}
		fmt.Fprintf(&docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: default}\ndata: {k: %s}\n---\n", n, b)
		n++
	}
	data := gz(t, []byte(docs.String()))
	if ratio := float64(docs.Len()) / float64(len(data)); ratio >= maxGzipRatio || docs.Len() <= int(gzipLimit) {
		t.Fatalf("fixture: %d bytes inflated, ratio %.1f: want past the limit and within the ratio", docs.Len(), ratio)
	}
	got, err := LoadPaths([]string{write(t, t.TempDir(), "large.yaml.gz", data)})
	if err != nil {
		t.Fatalf("a gzip file past the fixed limit, within the ratio: %v", err)
	}
	if len(got.ConfigMaps) != n || n == 0 {
		t.Errorf("%d ConfigMaps loaded, want all %d", len(got.ConfigMaps), n)
	}
}

// TestTruncatedGzipSnapshot: a gzipped snapshot missing its last bytes
// (its trailer, or more) is a truncated file, not a second document.
func TestTruncatedGzipSnapshot(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "in.yaml", []byte(nodeYAML))
	s, err := LoadPaths([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "whole.json.gz")
	if err := s.SaveFile(whole); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPaths([]string{whole}); err != nil {
		t.Fatalf("the whole file: %v", err)
	}
	for _, cut := range []int{1, 4, 8, 12, 40} {
		name := fmt.Sprintf("cut%d.json.gz", cut)
		p := write(t, dir, name, data[:len(data)-cut])
		_, err := LoadPaths([]string{p})
		if err == nil {
			t.Errorf("%s loaded", name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, name+": ") || !strings.Contains(msg, "truncated") || strings.Contains(msg, "document 2") {
			t.Errorf("%d bytes cut: %q, want the file named as truncated", cut, msg)
		}
	}
}

// TestErrorsQuoteContentBounded: what a file holds reaches an error
// message quoted and cut, however long it is: a 1 MB separator line, a
// YAML alias, a timestamp, a JSON key.
func TestErrorsQuoteContentBounded(t *testing.T) {
	long := strings.Repeat("A", 1<<20)
	cases := []struct {
		name string
		data string
		want string
	}{
		{"separator.yaml", nodeYAML + "---" + long + "\n" + nodeYAML, `invalid YAML document separator: "AAAA`},
		{"alias.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: *" + long + "}\n", "AAAA"},
		{"time.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: \"" + long + "\"}\n", "AAAA"},
		{"key.json", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","labels":{"` + long + `":1}}}`, "AAAA"},
		{"escape.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: a, creationTimestamp: \"\\e[31mred\"}\n", `\x1b[31mred`},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPaths([]string{write(t, dir, tc.name, []byte(tc.data))})
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			t.Logf("%d bytes: %.300s", len(msg), msg)
			if len(msg) > maxMessage+len(dir)+200 {
				t.Errorf("message of %d bytes", len(msg))
			}
			if strings.Contains(msg, "\n") || strings.ContainsRune(msg, 0x1b) || !strings.Contains(msg, tc.want) {
				t.Errorf("message %.400q: want one line, no escape character, with %q", msg, tc.want)
			}
			if len(tc.data) > 1<<20 && tc.name != "key.json" && !strings.Contains(msg, "bytes)") {
				// (jsontext cuts a long JSON pointer itself, to its tail)
				t.Errorf("message %.400q does not say how much it cut", msg)
			}
		})
	}
}

func TestBoundMessage(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes, 2 a rune
	for _, tc := range []struct{ in, want string }{
		{"plain words, it's fine", "plain words, it's fine"},
		{`parsing time "` + long + `" as "2006"`, `parsing time "` + strings.Repeat("é", 60) + `…"(400 bytes) as "2006"`},
		{"unknown anchor '" + long + "' referenced", "unknown anchor '" + strings.Repeat("é", 60) + "…'(400 bytes) referenced"},
		{"bell\a and\nnewline", `bell\a and newline`},
		{`"short"`, `"short"`},
	} {
		if got := boundMessage(tc.in); got != tc.want {
			t.Errorf("boundMessage(%.60q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := boundMessage(strings.Repeat("word ", 1000)); len(got) > maxMessage+100 || !strings.HasSuffix(got, "(message of 4999 bytes)") {
		t.Errorf("a long message: %d bytes, ends %q", len(got), got[len(got)-40:])
	}
	if got := excerpt(strings.Repeat("a", 1000)); got != `"`+strings.Repeat("a", maxQuoted)+`…"(1000 bytes)` {
		t.Errorf("excerpt = %s", got)
	}
}
