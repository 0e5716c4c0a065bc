package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kubegap/kubegap/internal/images"
)

// imageTarball builds a docker-save tarball holding a gcc-built dynamic
// binary and a static one.
func imageTarball(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	if err := os.WriteFile(src, []byte("#include <stdio.h>\nint main(void){puts(\"x\");return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(out string, args ...string) []byte {
		cmd := exec.Command("gcc", append(args, "-o", filepath.Join(dir, out), src)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		b, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dyn, static := build("dyn"), build("static", "-static")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for n, b := range map[string][]byte{"usr/bin/dyn": dyn, "bin/static": static, "etc/motd": []byte("hi\n")} {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o755, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
	}
	tw.Close()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "image.tar")
	tag, _ := name.NewTag("example.com/test:1")
	if err := tarball.WriteToFile(file, tag, img); err != nil {
		t.Fatal(err)
	}
	return file
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	app := &App{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	code = Run(context.Background(), app, args)
	return code, out.String(), errOut.String()
}

func TestImageInspectTarballText(t *testing.T) {
	file := imageTarball(t)
	code, out, errOut := runCLI("image", "inspect", "--tarball", file)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"platform  linux/amd64",
		"2 executables",
		"/bin/static  static",
		"/usr/bin/dyn  dynamic-glibc",
		"interpreter  /lib64/ld-linux-x86-64.so.2",
		"needed       libc.so.6",
		"min glibc    2.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "motd") {
		t.Errorf("a text file was reported:\n%s", out)
	}
}

func TestImageInspectTarballJSON(t *testing.T) {
	file := imageTarball(t)
	code, out, errOut := runCLI("image", "inspect", "--tarball", file, "-o", "json")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var r images.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if r.Kind != images.Kind || r.APIVersion != images.APIVersion || r.Platform != "linux/amd64" || !strings.HasPrefix(r.Digest, "sha256:") {
		t.Errorf("header = %s %s %s %s", r.APIVersion, r.Kind, r.Platform, r.Digest)
	}
	got := map[string]string{}
	for _, e := range r.Executables {
		got[e.Path] = e.Class
	}
	if got["/bin/static"] != images.LinkStatic || got["/usr/bin/dyn"] != images.LinkGlibc || len(got) != 2 {
		t.Errorf("executables = %v", got)
	}
	// The raw JSON keeps the field names the docs promise.
	for _, key := range []string{`"executables"`, `"minGlibc"`, `"interpreter"`, `"needed"`, `"class"`, `"linkage"`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestImageInspectErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.tar")
	os.WriteFile(junk, bytes.Repeat([]byte{0xde, 0xad}, 5000), 0o644)
	cases := []struct {
		name   string
		args   []string
		errHas string
		tar    bool
	}{
		{"missing file", []string{"--tarball", filepath.Join(dir, "nope.tar")}, "no such file", false},
		{"not an image", []string{"--tarball", junk}, "not a readable tar", false},
		{"no reference", nil, "give one image reference", false},
		{"both", []string{"ref", "--tarball", junk}, "not both", false},
		{"bad output", []string{"--tarball", junk, "-o", "yaml"}, "want text or json", false},
		{"bad size", []string{"--tarball", junk, "--max-image-bytes", "lots"}, "positive size", false},
		{"bad platform", []string{"--tarball", junk, "--platform", "linux"}, "platform", false},
		{"bad reference", []string{"UPPER/Case::x"}, "reference", false},
		{"limit", []string{"--max-files", "1"}, "--max-files", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"image", "inspect"}, c.args...)
			if c.tar {
				args = append(args, "--tarball", imageTarball(t))
			}
			code, out, errOut := runCLI(args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.HasPrefix(errOut, "kubegap: ") || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.errHas) {
				t.Errorf("stderr %q, want one line containing %q", errOut, c.errHas)
			}
		})
	}
}

func TestParseByteSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"1048576", 1 << 20, false},
		{"512Mi", 512 << 20, false},
		{"2Gi", 2 << 30, false},
		{"2GiB", 2 << 30, false},
		{"1G", 1e9, false},
		{"10k", 10e3, false},
		{"0", 0, true},
		{"-1", 0, true},
		{"Mi", 0, true},
		{"9999999Ti", 0, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := parseByteSize(c.in)
			if (err != nil) != c.err || got != c.want {
				t.Errorf("parseByteSize(%q) = %d, %v; want %d, err %v", c.in, got, err, c.want, c.err)
			}
		})
	}
	if s := formatByteSize(2 << 30); s != "2Gi" {
		t.Errorf("formatByteSize(2Gi) = %s", s)
	}
}

// TestImageInspectGzippedTarball: `docker save | gzip` output is read as
// it is, with the same result as the plain tarball.
func TestImageInspectGzippedTarball(t *testing.T) {
	file := imageTarball(t)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	gz := file + ".gz"
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, plain, _ := runCLI("image", "inspect", "--tarball", file)
	code, out, errOut := runCLI("image", "inspect", "--tarball", gz)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.Replace(out, gz, file, 1) != plain {
		t.Errorf("gzipped tarball reads differently:\n%s\nplain:\n%s", out, plain)
	}
	code, _, errOut = runCLI("image", "inspect", "--tarball", gz, "--max-payload-depth", "x")
	if code != ExitError || strings.Count(errOut, "\n") != 1 {
		t.Errorf("bad --max-payload-depth: exit %d, stderr %q", code, errOut)
	}
}
