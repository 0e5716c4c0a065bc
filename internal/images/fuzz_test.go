package images

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// Seeds in testdata/fuzz/ are small real binaries (gcc -nostdlib, glibc,
// musl, static-pie) and gzip streams carrying them; plain `go test` runs
// them as regression cases.

func FuzzAnalyzeELF(f *testing.F) {
	f.Add([]byte("\x7fELF"))
	f.Add([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := AnalyzeELF(data, "fuzz")
		if err != nil {
			if strings.Contains(err.Error(), "parser panic") {
				// The recover keeps kubegap alive, but a panic in the
				// standard library's parser is worth knowing about.
				t.Fatalf("debug/elf or debug/buildinfo panicked: %v", err)
			}
			return
		}
		if b.Class == "" || b.Type == "" {
			t.Fatalf("analysis without class or type: %+v", b)
		}
		if b.MinGlibc != "" && b.MinGlibc != b.GlibcVersions[len(b.GlibcVersions)-1] {
			t.Fatalf("MinGlibc %s is not the highest of %v", b.MinGlibc, b.GlibcVersions)
		}
		if !slices.IsSortedFunc(b.GlibcVersions, CompareVersions) {
			t.Fatalf("GlibcVersions not ascending: %v", b.GlibcVersions)
		}
		if b.Linkage == LinkGlibc && b.MinGlibc == "" {
			t.Fatalf("dynamic-glibc without a version: %+v", b)
		}
		for _, s := range append([]string{b.Interpreter, b.SONAME}, b.Needed...) {
			if strings.IndexFunc(s, unicode.IsControl) >= 0 {
				t.Fatalf("control character leaked from the file: %q", s)
			}
		}
	})
}

func FuzzScanEmbedded(f *testing.F) {
	f.Add([]byte("\x1f\x8b\x08\x08\x00\x00\x00\x00\x00\x03name\x00"))
	opts := Options{MaxPayloadBytes: 1 << 20, MaxPayloads: 4}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, _, err := ScanEmbedded(context.Background(), data, opts)
		if err != nil {
			t.Fatalf("ScanEmbedded without a deadline returned %v", err)
		}
		if len(ps) > opts.MaxPayloads {
			t.Fatalf("%d payloads, cap %d", len(ps), opts.MaxPayloads)
		}
		last := int64(-1)
		for _, p := range ps {
			if p.Offset <= last || p.Offset >= int64(len(data)) {
				t.Fatalf("payload offset %d out of order or range (last %d, len %d)", p.Offset, last, len(data))
			}
			last = p.Offset
			if p.Size > opts.MaxPayloadBytes+1 {
				t.Fatalf("payload of %d bytes passed the %d cap", p.Size, opts.MaxPayloadBytes)
			}
			if p.Name == "" || strings.IndexFunc(p.Name, unicode.IsControl) >= 0 {
				t.Fatalf("bad payload name %q", p.Name)
			}
			if (p.Binary == nil) == (p.Error == "") {
				t.Fatalf("payload must have exactly one of analysis and error: %+v", p)
			}
		}
	})
}
