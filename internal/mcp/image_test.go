package mcp

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kubegap/kubegap/internal/images"
)

// pushExecutableImage pushes a one-layer linux/amd64 image holding a real
// ELF executable at /usr/bin/tool to an in-process registry, and returns
// its reference and digest.
func pushExecutableImage(t *testing.T) (ref, digest string) {
	t.Helper()
	exe, err := os.ReadFile("/bin/true")
	if err != nil {
		// Any ELF executable will do; the test binary always exists.
		self, err2 := os.Executable()
		if err2 != nil {
			t.Fatal(err, err2)
		}
		if exe, err = os.ReadFile(self); err != nil {
			t.Fatal(err)
		}
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	if err := tw.WriteHeader(&tar.Header{Name: "usr/bin/tool", Mode: 0o755, Size: int64(len(exe)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(exe); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layer.Bytes())), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ref = u.Host + "/tools/tool:v1"
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref, d.String()
}

func TestInspectImage(t *testing.T) {
	ref, digest := pushExecutableImage(t)
	// No credentials from the machine running the test.
	opts := images.Options{CacheDir: "-", Keychain: authn.NewMultiKeychain()}
	cs := connect(t, Options{AllowRegistry: true, Images: opts})
	var out images.Report
	call(t, cs, ToolInspectImage, map[string]any{"reference": ref}, &out)
	if out.Digest != digest || out.Platform != "linux/amd64" || out.Layers != 1 {
		t.Errorf("report digest %s platform %s layers %d, want %s linux/amd64 1", out.Digest, out.Platform, out.Layers, digest)
	}
	if len(out.Executables) != 1 || out.Executables[0].Path != "/usr/bin/tool" {
		t.Errorf("executables = %+v, want /usr/bin/tool", out.Executables)
	}

	// The same result as 'kubegap image inspect', which calls the same code.
	direct, err := images.InspectReference(context.Background(), ref, "linux/amd64", opts)
	if err != nil {
		t.Fatal(err)
	}
	if direct.Digest != out.Digest || len(direct.Executables) != len(out.Executables) {
		t.Errorf("inspect_image and images.InspectReference disagree: %s/%d vs %s/%d", out.Digest, len(out.Executables), direct.Digest, len(direct.Executables))
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing tag", map[string]any{"reference": strings.TrimSuffix(ref, ":v1") + ":nope"}, "inspecting"},
		{"bad platform", map[string]any{"reference": ref, "platform": "plan9"}, "plan9"},
		{"empty reference", map[string]any{"reference": " "}, "reference is empty"},
		{"no reference", map[string]any{}, "reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := callErr(t, cs, ToolInspectImage, tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not mention %q", msg, tc.want)
			}
		})
	}
}
