package images

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/compression"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/zstd"
)

// gzipFile writes gzip(in) to out, as `gzip -c in > out`.
func gzipFile(t *testing.T, in, out string) {
	t.Helper()
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// multiPlatformLayout writes an OCI layout directory holding an index of
// an amd64 and an arm64 image, nested as docker and buildkit write it.
func multiPlatformLayout(t *testing.T, fx *fixtureBinaries) (string, v1.ImageIndex) {
	amd := azureLikeImage(t, fx)
	arm := image(t, "arm64", layer(t, file("only-on-arm", fx.cStatic)))
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
	)
	dir := filepath.Join(t.TempDir(), "layout")
	if _, err := layout.Write(dir, empty.Index); err != nil {
		t.Fatal(err)
	}
	p, _ := layout.FromPath(dir)
	if err := p.AppendIndex(idx); err != nil {
		t.Fatal(err)
	}
	return dir, idx
}

// TestInspectOCILayoutForms reads one multi-platform layout as a
// directory, as a tarball and as a gzip-compressed tarball, for each
// platform, and refuses a platform the index does not have.
func TestInspectOCILayoutForms(t *testing.T) {
	fx := fixtures(t)
	dir, idx := multiPlatformLayout(t, fx)
	tmp := t.TempDir()
	tarFile, gzFile := filepath.Join(tmp, "oci.tar"), filepath.Join(tmp, "oci.tar.gz")
	tarDir(t, dir, tarFile)
	gzipFile(t, tarFile, gzFile)
	want := map[string][]string{
		"linux/amd64": {"/bin/app", "/dropgz", "/old/kept", "/usr/bin/cdyn", "/usr/bin/cgo", "/usr/lib/spie"},
		"linux/arm64": {"/only-on-arm"},
	}
	id, _ := idx.Digest()
	for _, src := range []string{dir, tarFile, gzFile} {
		for plat, wantPaths := range want {
			t.Run(filepath.Base(src)+"/"+plat, func(t *testing.T) {
				r, err := InspectTarball(context.Background(), src, plat, testOptions(t))
				if err != nil {
					t.Fatal(err)
				}
				if got := paths(r); !slices.Equal(got, wantPaths) {
					t.Errorf("executables = %v, want %v", got, wantPaths)
				}
				if plat == "linux/amd64" {
					checkAzureLike(t, r, fx)
				}
				if r.IndexDigest != id.String() || r.Platform != plat {
					t.Errorf("index %s platform %s, want %s %s", r.IndexDigest, r.Platform, id, plat)
				}
			})
		}
		_, err := InspectTarball(context.Background(), src, "linux/s390x", testOptions(t))
		if err == nil || !strings.Contains(err.Error(), "no image for linux/s390x") || !strings.Contains(err.Error(), "linux/arm64") {
			t.Errorf("%s for linux/s390x: err = %v, want one naming the platforms offered", src, err)
		}
	}
}

// TestInspectDockerSaveForms reads docker-save tarballs as docker writes
// them (uncompressed layers), as go-containerregistry writes them (gzip
// layers) and piped through gzip.
func TestInspectDockerSaveForms(t *testing.T) {
	fx := fixtures(t)
	img := azureLikeImage(t, fx)
	tmp := t.TempDir()
	withGzipLayers := filepath.Join(tmp, "ggcr.tar")
	tag, _ := name.NewTag("example.com/cni/azure-cni:v2")
	if err := tarball.WriteToFile(withGzipLayers, tag, img); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(tmp, "docker.tar")
	writePlainDockerSave(t, img, plain)
	gz := filepath.Join(tmp, "docker.tar.gz")
	gzipFile(t, plain, gz)
	cfg, _ := img.ConfigName()
	for _, f := range []string{withGzipLayers, plain, gz} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := InspectTarball(context.Background(), f, "", testOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			checkAzureLike(t, r, fx)
			if r.Digest != cfg.String() {
				t.Errorf("digest %s, want the config digest %s (docker's image ID)", r.Digest, cfg)
			}
		})
	}
}

// writePlainDockerSave writes img the way `docker save` does: the config,
// uncompressed layer.tar files and manifest.json.
func writePlainDockerSave(t *testing.T, img v1.Image, out string) {
	t.Helper()
	cfg, _ := img.RawConfigFile()
	sum := sha256.Sum256(cfg)
	cfgName := hex.EncodeToString(sum[:]) + ".json"
	entries := []entry{file(cfgName, cfg)}
	layers, _ := img.Layers()
	var names []string
	for i, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		n := filepath.Join(string(rune('a'+i))+"0", "layer.tar")
		names = append(names, n)
		entries = append(entries, file(n, b))
	}
	man, _ := json.Marshal([]map[string]any{{"Config": cfgName, "RepoTags": []string{"x:y"}, "Layers": names}})
	entries = append(entries, file("manifest.json", man))
	if err := os.WriteFile(out, tarBytes(t, entries...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInspectZstdLayers reads an image whose layers are zstd-compressed
// with the OCI zstd media type, from the in-process registry.
func TestInspectZstdLayers(t *testing.T) {
	fx := fixtures(t)
	var layers []v1.Layer
	for _, es := range [][]entry{
		{file("usr/bin/cdyn", fx.cDynamic), file("bin/app", fx.goStatic)},
		{file("dropgz", fx.installer)},
	} {
		b := tarBytes(t, es...)
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
			tarball.WithCompression(compression.ZStd), tarball.WithMediaType(types.OCILayerZStd))
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, l)
	}
	img := image(t, "amd64", layers...)
	ref := pushImage(t, newRegistry(t), "zstd/image", img)
	r, err := InspectReference(context.Background(), ref, "", testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(r); !slices.Equal(got, []string{"/bin/app", "/dropgz", "/usr/bin/cdyn"}) {
		t.Fatalf("executables %v", got)
	}
	if e := byPath(r, "/usr/bin/cdyn"); e.MinGlibc != fx.cDynamicNeed {
		t.Errorf("cdyn needs %s, want %s", e.MinGlibc, fx.cDynamicNeed)
	}
	if d := byPath(r, "/dropgz"); len(d.Payloads) != 1 || d.Payloads[0].Binary == nil {
		t.Errorf("dropgz payloads %+v", d.Payloads)
	}
}

// allocDuring returns the bytes allocated while f runs.
func allocDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestDecompressionBombs: a layer that decompresses far beyond the image
// budget, gzip or zstd, ends in an error naming the flag, with memory
// bounded by the decoders' windows rather than by the layer; so does a
// zstd frame that declares a huge window.
func TestDecompressionBombs(t *testing.T) {
	zeros := tarBytes(t, file("zeros", make([]byte, 256<<20)))
	var zgz, zzst bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&zgz, gzip.BestCompression)
	gw.Write(zeros)
	gw.Close()
	zw, _ := zstd.NewWriter(&zzst, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	zw.Write(zeros)
	zw.Close()
	zeros = nil
	// A zstd frame header declaring a 1 GiB window (window descriptor
	// exponent 20: 2^30), then one raw block of one byte.
	window := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 20 << 3, 0x09, 0x00, 0x00, 'x'}
	cases := []struct {
		name   string
		blob   []byte
		mt     types.MediaType
		errHas string
	}{
		{"gzip", zgz.Bytes(), types.OCILayer, "--max-image-bytes"},
		{"zstd", zzst.Bytes(), types.OCILayerZStd, "--max-image-bytes"},
		{"zstd window", window, types.OCILayerZStd, "window over 32 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.blob) > 2<<20 {
				t.Fatalf("bomb is %d bytes compressed; not a bomb", len(c.blob))
			}
			img := image(t, "amd64", static.NewLayer(c.blob, c.mt))
			var err error
			alloc := allocDuring(func() {
				_, err = Inspect(context.Background(), img, Options{MaxImageBytes: 16 << 20})
			})
			if err == nil || !IsLimit(err) || !strings.Contains(err.Error(), c.errHas) {
				t.Fatalf("err = %v, want a limit error containing %q", err, c.errHas)
			}
			if alloc > 64<<20 {
				t.Errorf("allocated %d MiB reading a bomb; memory must not follow the stream", alloc>>20)
			}
		})
	}
}
