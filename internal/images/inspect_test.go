package images

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// azureLikeImage mirrors the founding incident: a lower base layer and an
// upper layer with an installer carrying a dynamic binary, plus files that
// upper layers delete so the whiteout handling is exercised.
func azureLikeImage(t testing.TB, fx *fixtureBinaries) v1.Image {
	base := layer(t,
		dir("bin/"),
		file("bin/app", fx.goStatic),
		symlink("bin/link", "app"),
		dir("usr/bin/"),
		file("usr/bin/cdyn", fx.cDynamic),
		file("usr/bin/deleted", fx.cDynamic),
		file("usr/lib/spie", fx.cStaticPIE),
		dir("old/"),
		file("old/gone", fx.cDynamic),
		file("etc/os-release", []byte("ID=test\n")),
	)
	top := layer(t,
		whiteout("usr/bin/.wh.deleted"),
		dir("old/"),
		whiteout("old/.wh..wh..opq"),
		file("old/kept", fx.cStatic),
		file("dropgz", fx.installer),
		file("usr/bin/cgo", fx.goCgo),
	)
	return image(t, "amd64", base, top)
}

// checkAzureLike asserts what every source (registry, docker save, OCI
// layout) must report for azureLikeImage.
func checkAzureLike(t *testing.T, r *Report, fx *fixtureBinaries) {
	t.Helper()
	want := []string{"/bin/app", "/dropgz", "/old/kept", "/usr/bin/cdyn", "/usr/bin/cgo", "/usr/lib/spie"}
	if got := paths(r); !slices.Equal(got, want) {
		t.Fatalf("executables = %v, want %v (whiteouts and symlinks honoured)", got, want)
	}
	classes := map[string]string{
		"/bin/app":      ClassGoStatic,
		"/dropgz":       ClassGoStatic,
		"/old/kept":     LinkStatic,
		"/usr/bin/cdyn": LinkGlibc,
		"/usr/bin/cgo":  ClassGoCgo,
		"/usr/lib/spie": LinkStaticPIE,
	}
	for p, c := range classes {
		if e := byPath(r, p); e.Class != c {
			t.Errorf("%s: class %s, want %s", p, e.Class, c)
		}
	}
	d := byPath(r, "/dropgz")
	if len(d.Payloads) != 1 || d.Payloads[0].Name != "azure-vnet" {
		t.Fatalf("/dropgz payloads = %+v, want one named azure-vnet", d.Payloads)
	}
	if b := d.Payloads[0].Binary; b == nil || b.Class != LinkGlibc || b.MinGlibc != fx.cDynamicNeed {
		t.Errorf("azure-vnet analysis = %+v, want %s needing GLIBC_%s", b, LinkGlibc, fx.cDynamicNeed)
	}
	wantMax := fx.cDynamicNeed
	if CompareVersions(fx.goCgoNeed, wantMax) > 0 {
		wantMax = fx.goCgoNeed
	}
	if got := r.MaxGlibc(); got != wantMax {
		t.Errorf("MaxGlibc = %s, want %s", got, wantMax)
	}
	if r.Layers != 2 {
		t.Errorf("Layers = %d, want 2", r.Layers)
	}
}

func pushImage(t testing.TB, reg *testRegistry, repo string, img v1.Image) string {
	t.Helper()
	ref := reg.host + "/" + repo
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestInspectReference(t *testing.T) {
	fx := fixtures(t)
	reg := newRegistry(t)
	img := azureLikeImage(t, fx)
	ref := pushImage(t, reg, "cni/azure-cni:v2", img)
	r, err := InspectReference(context.Background(), ref, "linux/amd64", testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	checkAzureLike(t, r, fx)
	d, _ := img.Digest()
	if r.Digest != d.String() || r.IndexDigest != "" {
		t.Errorf("digest = %s (index %q), want %s and no index", r.Digest, r.IndexDigest, d)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes = %v, want none", r.Notes)
	}
}

func TestInspectReferenceIndex(t *testing.T) {
	fx := fixtures(t)
	reg := newRegistry(t)
	amd := azureLikeImage(t, fx)
	arm := image(t, "arm64", layer(t, file("only-on-arm", fx.cStatic)))
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}}},
	)
	ref := reg.host + "/multi:1"
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}
	idxDigest, _ := idx.Digest()
	cases := []struct {
		platform string
		want     v1.Image
		paths    []string
		err      bool
	}{
		{platform: "linux/amd64", want: amd, paths: []string{"/bin/app", "/dropgz", "/old/kept", "/usr/bin/cdyn", "/usr/bin/cgo", "/usr/lib/spie"}},
		{platform: "linux/arm64", want: arm, paths: []string{"/only-on-arm"}},
		{platform: "linux/arm64/v8", want: arm, paths: []string{"/only-on-arm"}},
		{platform: "linux/s390x", err: true},
		{platform: "nonsense", err: true},
	}
	for _, c := range cases {
		t.Run(c.platform, func(t *testing.T) {
			rep, err := InspectReference(context.Background(), ref, c.platform, testOptions(t))
			if c.err {
				if err == nil {
					t.Fatalf("InspectReference(%s) succeeded, want an error", c.platform)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, _ := c.want.Digest()
			if rep.Digest != d.String() || rep.IndexDigest != idxDigest.String() {
				t.Errorf("digest %s index %s, want %s index %s", rep.Digest, rep.IndexDigest, d, idxDigest)
			}
			if got := paths(rep); !slices.Equal(got, c.paths) {
				t.Errorf("executables = %v, want %v", got, c.paths)
			}
		})
	}
}

func TestInspectPlatformMismatchNoted(t *testing.T) {
	fx := fixtures(t)
	reg := newRegistry(t)
	ref := pushImage(t, reg, "armonly:1", image(t, "arm64", layer(t, file("x", fx.cStatic))))
	r, err := InspectReference(context.Background(), ref, "linux/amd64", testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "linux/arm64") {
		t.Errorf("notes = %v, want a note that the image is for linux/arm64", r.Notes)
	}
}

func TestInspectDockerSaveTarball(t *testing.T) {
	fx := fixtures(t)
	img := azureLikeImage(t, fx)
	file := filepath.Join(t.TempDir(), "image.tar")
	tag, _ := name.NewTag("example.com/cni/azure-cni:v2")
	if err := tarball.WriteToFile(file, tag, img); err != nil {
		t.Fatal(err)
	}
	r, err := InspectTarball(context.Background(), file, "", testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	checkAzureLike(t, r, fx)
	if r.Reference != file || r.Platform != "linux/amd64" {
		t.Errorf("reference %q platform %q", r.Reference, r.Platform)
	}
}

func TestInspectOCILayoutTarball(t *testing.T) {
	fx := fixtures(t)
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
	// Nested as docker and buildkit write it: index.json -> index -> images.
	if err := p.AppendIndex(idx); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "oci.tar")
	tarDir(t, dir, file)
	for _, c := range []struct {
		platform string
		want     []string
	}{
		{"linux/amd64", []string{"/bin/app", "/dropgz", "/old/kept", "/usr/bin/cdyn", "/usr/bin/cgo", "/usr/lib/spie"}},
		{"linux/arm64", []string{"/only-on-arm"}},
	} {
		t.Run(c.platform, func(t *testing.T) {
			r, err := InspectTarball(context.Background(), file, c.platform, testOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			if c.platform == "linux/amd64" {
				checkAzureLike(t, r, fx)
			}
			if got := paths(r); !slices.Equal(got, c.want) {
				t.Errorf("executables = %v, want %v", got, c.want)
			}
			if id, _ := idx.Digest(); r.IndexDigest != id.String() {
				t.Errorf("IndexDigest = %s, want %s", r.IndexDigest, id)
			}
		})
	}
}

// tarDir writes dir's files into a tar file, as `tar -C dir -cf file .`.
func tarDir(t *testing.T, dir, out string) {
	t.Helper()
	var entries []entry
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		entries = append(entries, file(filepath.ToSlash(rel), b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, tarBytes(t, entries...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInspectHostile(t *testing.T) {
	fx := fixtures(t)
	junk := make([]byte, 64<<10)
	rand.Read(junk)
	zeros := bytes.Repeat([]byte{0}, 64<<20)
	cases := []struct {
		name    string
		layers  func() []v1.Layer
		opts    Options
		limit   bool   // error must be a limit error
		errHas  string // error must contain
		skipped string // or: no error, and this path is skipped
	}{
		{name: "gzip bomb", layers: func() []v1.Layer { return []v1.Layer{layer(t, file("zeros", zeros))} }, opts: Options{MaxImageBytes: 8 << 20}, limit: true, errHas: "--max-image-bytes"},
		{name: "dot-dot path", layers: func() []v1.Layer { return []v1.Layer{layer(t, file("../../etc/cron.d/x", fx.cStatic))} }, errHas: "escapes the image root"},
		{name: "random layer bytes", layers: func() []v1.Layer { return []v1.Layer{static.NewLayer(junk, types.DockerLayer)} }, errHas: "reading tar"},
		{name: "truncated ELF", layers: func() []v1.Layer { return []v1.Layer{layer(t, file("bin/cut", fx.cDynamic[:300]))} }, skipped: "/bin/cut"},
		// cdyn's dynamic string table starts at about 1.2 KiB.
		{name: "ELF tables over keep cap", layers: func() []v1.Layer { return []v1.Layer{layer(t, file("bin/big", fx.cDynamic))} }, opts: Options{MaxFileBytes: 1 << 10}, skipped: "/bin/big"},
		{name: "too many files", layers: func() []v1.Layer {
			return []v1.Layer{layer(t, file("a", nil), file("b", nil), file("c", nil))}
		}, opts: Options{MaxFiles: 2}, limit: true, errHas: "--max-files"},
		{name: "layer over size cap", layers: func() []v1.Layer { return []v1.Layer{layer(t, file("bin/x", fx.goStatic))} }, opts: Options{MaxLayerBytes: 1 << 10}, limit: true, errHas: "--max-layer-bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := image(t, "amd64", c.layers()...)
			opts := c.opts
			opts.Timeout = 30 * time.Second
			start := time.Now()
			r, err := Inspect(context.Background(), img, opts)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s; a hostile input must be cut short", d)
			}
			if c.skipped != "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Skipped) != 1 || r.Skipped[0].Path != c.skipped || len(r.Executables) != 0 {
					t.Errorf("skipped = %+v executables = %v, want only %s skipped", r.Skipped, paths(r), c.skipped)
				}
				return
			}
			if err == nil {
				t.Fatalf("Inspect succeeded (%v), want an error", paths(r))
			}
			if IsLimit(err) != c.limit || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("err = %v (limit %v), want limit %v containing %q", err, IsLimit(err), c.limit, c.errHas)
			}
		})
	}
}

func TestInspectTarballBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := make([]byte, 10000)
	rand.Read(junk)
	write := func(n string, b []byte) string {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, file, errHas string
	}{
		{"missing", filepath.Join(dir, "nope.tar"), "no such file"},
		{"random bytes", write("junk.tar", junk), "not a readable tar"},
		{"tar without image", write("plain.tar", tarBytes(t, file("hello.txt", []byte("hi")))), "not an image tarball"},
		{"bad manifest", write("badmanifest.tar", tarBytes(t, file("manifest.json", []byte("{")))), "docker-save"},
		{"bad index", write("badindex.tar", tarBytes(t, file("index.json", []byte("[]")))), "OCI layout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := InspectTarball(context.Background(), c.file, "", Options{})
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("err = %v, want one containing %q", err, c.errHas)
			}
		})
	}
}

func TestInspectReferenceUnreachable(t *testing.T) {
	// A listener that is closed at once gives a port nobody answers on.
	srv := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(srv.URL)
	srv.Close()
	start := time.Now()
	_, err := InspectReference(context.Background(), u.Host+"/x:1", "", Options{Timeout: 20 * time.Second})
	if err == nil {
		t.Fatal("no error for an unreachable registry")
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s to give up on a refused connection", d)
	}
}

func TestInspectReferenceTimeout(t *testing.T) {
	fx := fixtures(t)
	reg := newRegistry(t)
	ref := pushImage(t, reg, "slow:1", image(t, "amd64", layer(t, file("bin/x", fx.cStatic))))
	// A proxy that serves manifests but stalls forever on blobs.
	target, _ := url.Parse("http://" + reg.host)
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/blobs/") && r.Method == http.MethodGet {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		resp, err := http.DefaultTransport.RoundTrip(r.Clone(r.Context()))
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	defer stall.Close()
	su, _ := url.Parse(stall.URL)
	start := time.Now()
	_, err := InspectReference(context.Background(), strings.Replace(ref, reg.host, su.Host, 1), "", Options{Timeout: 2 * time.Second})
	if err == nil {
		t.Fatal("no error from a stalled registry")
	}
	if !IsLimit(err) || !strings.Contains(err.Error(), "--timeout") {
		t.Errorf("err = %v, want a --timeout limit error", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s, want about the 2s timeout", d)
	}
}

func TestWalkSameLayerOrder(t *testing.T) {
	// A whiteout hides lower layers only, never its own layer's files.
	fx := fixtures(t)
	img := image(t, "amd64",
		layer(t, file("a/x", fx.cStatic)),
		layer(t, whiteout("a/.wh.x"), file("a/x", fx.cStatic), whiteout(".wh.b"), dir("c/"), whiteout("c/.wh..wh..opq"), file("c/y", fx.cStatic)),
	)
	r, err := Inspect(context.Background(), img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(r), []string{"/a/x", "/c/y"}; !slices.Equal(got, want) {
		t.Errorf("executables = %v, want %v", got, want)
	}
}

func TestWalkUpperFileHidesLowerTree(t *testing.T) {
	fx := fixtures(t)
	img := image(t, "amd64",
		layer(t, file("opt/tool/bin", fx.cStatic), file("opt/keep", fx.cStatic)),
		layer(t, symlink("opt/tool", "/elsewhere")),
	)
	r, err := Inspect(context.Background(), img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(r), []string{"/opt/keep"}; !slices.Equal(got, want) {
		t.Errorf("executables = %v, want %v", got, want)
	}
}

func TestIsLimitWrapped(t *testing.T) {
	if IsLimit(errors.New("x")) {
		t.Error("plain error reported as a limit")
	}
	_, err := Inspect(context.Background(), image(t, "amd64", layer(t, file("a", nil), file("b", nil))), Options{MaxFiles: 1})
	if !IsLimit(err) {
		t.Errorf("err = %v, want a limit error", err)
	}
}

// TestInspectStreamsLargeFiles proves that a file far larger than the
// bytes kept per file is still analysed in full: a Go binary's build
// information lies megabytes in, and a payload appended at its end is found.
func TestInspectStreamsLargeFiles(t *testing.T) {
	fx := fixtures(t)
	img := image(t, "amd64", layer(t, file("opt/installer", fx.installer)))
	r, err := Inspect(context.Background(), img, Options{MaxFileBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	e := byPath(r, "/opt/installer")
	if e == nil || len(fx.installer) < 1<<20 {
		t.Fatalf("executables %v (installer %d bytes)", paths(r), len(fx.installer))
	}
	if e.Class != ClassGoStatic || e.Go == nil || !strings.HasPrefix(e.Go.Version, "go1.") {
		t.Errorf("class %s go %+v, want go-static with its toolchain", e.Class, e.Go)
	}
	if len(e.Payloads) != 1 || e.Payloads[0].Binary == nil || e.Payloads[0].Binary.MinGlibc != fx.cDynamicNeed {
		t.Errorf("payloads %+v, want azure-vnet needing GLIBC_%s", e.Payloads, fx.cDynamicNeed)
	}
}
