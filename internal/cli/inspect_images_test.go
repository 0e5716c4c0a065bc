package cli

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// build compiles a small program: C with the system gcc (dynamically linked
// against this machine's glibc, so it needs GLIBC_2.34 or later), or Go with
// cgo off (static).
func build(t *testing.T, lang string) []byte {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "bin")
	var cmd *exec.Cmd
	switch lang {
	case "c", "musl":
		src := filepath.Join(dir, "main.c")
		os.WriteFile(src, []byte("#include <stdio.h>\nint main(void) { puts(\"cni\"); return 0; }\n"), 0o644)
		cc := map[string]string{"c": "gcc", "musl": "musl-gcc"}[lang]
		cmd = exec.Command(cc, "-O1", "-o", out, src)
	default:
		src := filepath.Join(dir, "main.go")
		os.WriteFile(src, []byte("package main\nfunc main() { println(\"cni\") }\n"), 0o644)
		cmd = exec.Command("go", "build", "-o", out, src)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the %s binary: %v\n%s", lang, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pushImage puts one executable at /opt/cni/bin/plugin in an image and
// pushes it to the registry, returning its reference.
func pushImage(t *testing.T, host, repo string, exe []byte) string {
	t.Helper()
	return pushFileImage(t, host+"/"+repo+":v1", "opt/cni/bin/plugin", 0o755, exe)
}

// pushFileImage pushes a one-layer linux/amd64 image holding one file and
// returns ref.
func pushFileImage(t *testing.T, ref, path string, mode int64, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: path, Mode: mode, Size: int64(len(content)), Typeflag: tar.TypeReg})
	tw.Write(content)
	tw.Close()
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "linux", Architecture: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	return ref
}

const inspectFixture = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: old-2004}
  status: {nodeInfo: {osImage: Ubuntu 20.04.6 LTS, kernelVersion: 5.15.0-1079-azure, kubeletVersion: v1.35.4, operatingSystem: linux, architecture: amd64}}
- apiVersion: v1
  kind: Node
  metadata: {name: new-2404}
  status: {nodeInfo: {osImage: Ubuntu 24.04.1 LTS, kernelVersion: 6.8.0-1017-azure, kubeletVersion: v1.35.4, operatingSystem: linux, architecture: amd64}}
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: cni-installer, namespace: kube-system}
  spec:
    selector: {matchLabels: {app: cni}}
    template:
      metadata: {labels: {app: cni}}
      spec:
        tolerations: [{operator: Exists}]
        initContainers:
        - name: install
          image: IMAGE
          volumeMounts: [{name: bin, mountPath: /host/opt/cni/bin}]
        containers: [{name: pause, image: registry.k8s.io/pause:3.10}]
        volumes: [{name: bin, hostPath: {path: /opt/cni/bin}}]
`

// TestAuditInspectImages: with --inspect-images, host-binary-glibc judges an
// unknown installer image by what it really installs: a dynamically linked
// binary needing a newer glibc than Ubuntu 20.04 has is high and names that
// node only; a static one is silent.
func TestAuditInspectImages(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatal("gcc is needed to build the dynamically linked test binary")
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the digest cache, per test

	// A glibc binary fails only on the old node; a musl one on both, since
	// neither glibc node has the musl loader.
	for _, tc := range []struct {
		lang      string
		wantHigh  bool
		wantNodes []string
	}{{"c", true, []string{"old-2004"}}, {"musl", true, []string{"old-2004", "new-2404"}}, {"go", false, nil}} {
		t.Run(tc.lang, func(t *testing.T) {
			ref := pushImage(t, host, "cni-"+tc.lang, build(t, tc.lang))
			fixture := filepath.Join(t.TempDir(), "cluster.yaml")
			os.WriteFile(fixture, []byte(strings.Replace(inspectFixture, "IMAGE", ref, 1)), 0o644)

			_, without, _ := runKubegap(t, "audit", "--from", fixture, "--checks", "host-binary-glibc", "-o", "json")
			code, out, errOut := runKubegap(t, "audit", "--from", fixture, "--checks", "host-binary-glibc", "--inspect-images", "-o", "json", "-q")
			var rep struct {
				Findings []struct {
					Severity string
					Objects  []struct{ Kind, Name string }
					Evidence []string
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\nstderr: %s", err, errOut)
			}
			high := false
			for _, f := range rep.Findings {
				if f.Severity != "high" {
					continue
				}
				high = true
				names := map[string]bool{}
				for _, o := range f.Objects {
					names[o.Name] = true
				}
				for _, n := range []string{"old-2004", "new-2404"} {
					if names[n] != slices.Contains(tc.wantNodes, n) {
						t.Errorf("high finding names %v, want nodes %v", names, tc.wantNodes)
					}
				}
				if !strings.Contains(strings.Join(f.Evidence, "\n"), "inspect") {
					t.Errorf("evidence does not say the need comes from inspection: %v", f.Evidence)
				}
			}
			if high != tc.wantHigh {
				t.Errorf("high finding = %v, want %v (exit %d)\n%s", high, tc.wantHigh, code, out)
			}
			if strings.Contains(without, `"severity": "high"`) {
				t.Error("without --inspect-images an unknown image was judged high")
			}
		})
	}
}
