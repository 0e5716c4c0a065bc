package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/zstd"
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
	// Nested: gzip in gzip, and a tar header in a gzip member.
	var inner, outer, tarred bytes.Buffer
	w := gzip.NewWriter(&inner)
	w.Write([]byte("\x7fELF\x02\x01\x01"))
	w.Close()
	w = gzip.NewWriter(&outer)
	w.Write(inner.Bytes())
	w.Close()
	f.Add(outer.Bytes())
	tw := tar.NewWriter(&tarred)
	tw.WriteHeader(&tar.Header{Name: "x", Size: 4, Mode: 0o755, Typeflag: tar.TypeReg})
	tw.Write([]byte("\x7fELF"))
	tw.Close()
	w = gzip.NewWriter(&outer)
	w.Write(tarred.Bytes())
	w.Close()
	f.Add(outer.Bytes())
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
			// Payloads nested in one member share its offset.
			if p.Offset < last || p.Offset >= int64(len(data)) {
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

// FuzzParseBuildInfo feeds the Go build-information decoder, which reads
// lengths and strings straight from the file.
func FuzzParseBuildInfo(f *testing.F) {
	f.Add([]byte(buildInfoMagic + "\x08\x02" + strings.Repeat("\x00", 16) + "\x08go1.26.8\x00"))
	f.Add([]byte(buildInfoMagic + "\x08\x00" + strings.Repeat("\x00", 16)))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, ok := parseBuildInfo(data)
		if ok != (g != nil) {
			t.Fatalf("ok %v with %+v", ok, g)
		}
		if g != nil && strings.IndexFunc(g.Version+g.Path+g.CGO+g.Experiment, unicode.IsControl) >= 0 {
			t.Fatalf("control character leaked: %+v", g)
		}
	})
}

// FuzzInspectLayer runs a whole inspection over one layer of arbitrary
// bytes: the gzip and zstd decoders chosen by sniffing, the tar reader,
// the streaming ELF reader and the payload scan, under small limits.
func FuzzInspectLayer(f *testing.F) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	elfHead := []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00")
	tw.WriteHeader(&tar.Header{Name: "bin/x", Mode: 0o755, Size: int64(len(elfHead)), Typeflag: tar.TypeReg})
	tw.Write(elfHead)
	tw.Close()
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(tarBuf.Bytes())
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(tarBuf.Bytes())
	zw.Close()
	f.Add(tarBuf.Bytes())
	f.Add(gz.Bytes())
	f.Add(zs.Bytes())
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 20 << 3, 0x09, 0x00, 0x00, 'x'})
	opts := Options{MaxImageBytes: 1 << 20, MaxFiles: 64, MaxFileBytes: 64 << 10, MaxPayloadBytes: 1 << 20, MaxPayloads: 4, Timeout: 10 * time.Second}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := mutate.AppendLayers(empty.Image, static.NewLayer(data, types.OCILayer))
		if err != nil {
			t.Skip()
		}
		r, err := Inspect(context.Background(), img, opts)
		if err != nil {
			return
		}
		if r.BytesRead > opts.MaxImageBytes {
			t.Fatalf("read %d bytes, limit %d", r.BytesRead, opts.MaxImageBytes)
		}
		for _, e := range r.Executables {
			if e.Class == "" || len(e.Payloads) > opts.MaxPayloads*(opts.MaxPayloadDepth+1)*maxTarPayloadEntries {
				t.Fatalf("bad executable %+v", e)
			}
		}
	})
}

// FuzzInspectTarball feeds the tarball readers — docker save and OCI
// layout, plain or gzip-compressed — with arbitrary files.
func FuzzInspectTarball(f *testing.F) {
	tarOfFiles := func(files map[string]string) []byte {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for n, c := range files {
			tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(c)), Typeflag: tar.TypeReg})
			tw.Write([]byte(c))
		}
		tw.Close()
		return b.Bytes()
	}
	layerTar := string(tarOfFiles(map[string]string{"bin/x": "\x7fELF\x02\x01\x01"}))
	docker := tarOfFiles(map[string]string{
		"manifest.json": `[{"Config":"c.json","Layers":["l/layer.tar"]}]`,
		"c.json":        `{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`,
		"l/layer.tar":   layerTar,
	})
	oci := tarOfFiles(map[string]string{"index.json": `{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:` + strings.Repeat("a", 64) + `","size":2}]}`})
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(docker)
	w.Close()
	f.Add(docker)
	f.Add(oci)
	f.Add(gz.Bytes())
	opts := Options{MaxImageBytes: 1 << 20, MaxFiles: 64, MaxPayloadBytes: 1 << 20, Timeout: 10 * time.Second}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "image.tar")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := InspectTarball(context.Background(), file, "", opts)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(err.Error(), "layer") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if r.BytesRead > opts.MaxImageBytes {
			t.Fatalf("read %d bytes, limit %d", r.BytesRead, opts.MaxImageBytes)
		}
	})
}
