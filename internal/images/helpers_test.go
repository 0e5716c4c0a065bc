package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// fixtureBinaries are real executables built once per test run with the
// installed Go toolchain, gcc and (if present) musl-gcc.
type fixtureBinaries struct {
	goStatic     []byte // CGO_ENABLED=0
	goCgo        []byte // CGO_ENABLED=1, dynamic against glibc
	goPIE        []byte // CGO_ENABLED=0 -buildmode=pie: loader but no libraries
	goSysCrypto  []byte // goStatic with its build info patched to a Microsoft systemcrypto build
	cDynamic     []byte // gcc, calls pthread_create: GLIBC_2.34 on glibc >= 2.34
	cStatic      []byte // gcc -static
	cStaticPIE   []byte // gcc -static-pie
	muslDynamic  []byte // musl-gcc (Debian musl-tools)
	cxxDynamic   []byte // g++: needs GLIBCXX_ and CXXABI_ versions from libstdc++
	cxxNeed      string // highest GLIBCXX_ version of cxxDynamic per objdump -T
	cxxabiNeed   string // highest CXXABI_ version of cxxDynamic per objdump -T
	installer    []byte // goStatic + a gzip member holding cDynamic, FNAME azure-vnet
	cDynamicNeed string // highest GLIBC_ version of cDynamic per objdump -T
	goCgoNeed    string // same for goCgo
}

var (
	fixturesOnce sync.Once
	fixturesVal  *fixtureBinaries
	fixturesErr  error
	fixturesDir  string
)

// TestMain removes the fixture build directory after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if fixturesDir != "" {
		os.RemoveAll(fixturesDir)
	}
	os.Exit(code)
}

// fixtures builds the binaries once; tests that need them skip when the
// toolchain is missing rather than fail for an environmental reason.
func fixtures(t testing.TB) *fixtureBinaries {
	t.Helper()
	fixturesOnce.Do(func() { fixturesVal, fixturesErr = buildFixtures() })
	if fixturesErr != nil {
		t.Fatalf("building fixture binaries: %v", fixturesErr)
	}
	return fixturesVal
}

const goMain = `package main

import "fmt"

func main() { fmt.Println("kubegap fixture") }
`

const goCgoMain = `package main

// #include <stdlib.h>
import "C"

import "fmt"

func main() { C.free(C.malloc(1)); fmt.Println("kubegap cgo fixture") }
`

// cxxMain uses the C++ runtime the way real programs do: strings, streams
// and exceptions, so it needs versioned libstdc++ symbols.
const cxxMain = `#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>
int main(int argc, char **argv) {
  std::vector<std::string> v(argv, argv + argc);
  try { if (v.size() > 5) throw std::runtime_error(v[1]); } catch (const std::exception &e) { std::cerr << e.what() << std::endl; }
  std::cout << "fixture " << v.size() << std::endl;
  return 0;
}
`

const cMain = `#include <pthread.h>
#include <stdio.h>
static void *run(void *a) { return a; }
int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_join(t, 0); puts("fixture"); return 0; }
`

func buildFixtures() (*fixtureBinaries, error) {
	dir, err := os.MkdirTemp("", "kubegap-images-fixtures-")
	if err != nil {
		return nil, err
	}
	fixturesDir = dir
	run := func(env []string, name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	write := func(name, body string) error { return os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644) }
	if err := write("main.go", goMain); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "cgo"), 0o755); err != nil {
		return nil, err
	}
	if err := write("cgo/main.go", goCgoMain); err != nil {
		return nil, err
	}
	if err := write("a.c", cMain); err != nil {
		return nil, err
	}
	if err := write("a.cc", cxxMain); err != nil {
		return nil, err
	}
	goEnv := []string{"GOTOOLCHAIN=local", "GOFLAGS=", "GO111MODULE=on"}
	steps := []struct {
		env  []string
		name string
		args []string
	}{
		{append(goEnv, "CGO_ENABLED=0"), "go", []string{"build", "-o", "gostatic", "main.go"}},
		// The tag's length makes "-tags=..." as long as the setting patched in below.
		{append(goEnv, "CGO_ENABLED=0"), "go", []string{"build", "-tags", "abcdefghijklmnopqr", "-o", "gotagged", "main.go"}},
		{append(goEnv, "CGO_ENABLED=1"), "go", []string{"build", "-o", "../gocgo", "main.go"}},
		{append(goEnv, "CGO_ENABLED=0"), "go", []string{"build", "-buildmode=pie", "-o", "gopie", "main.go"}},
		{nil, "gcc", []string{"-O2", "-o", "cdyn", "a.c"}},
		{nil, "gcc", []string{"-O2", "-static", "-o", "cstatic", "a.c"}},
		{nil, "gcc", []string{"-O2", "-static-pie", "-o", "cspie", "a.c"}},
	}
	for i, s := range steps {
		if i == 2 {
			cmd := exec.Command(s.name, s.args...)
			cmd.Dir = filepath.Join(dir, "cgo")
			cmd.Env = append(os.Environ(), s.env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("cgo build: %w\n%s", err, out)
			}
			continue
		}
		if err := run(s.env, s.name, s.args...); err != nil {
			return nil, err
		}
	}
	read := func(n string) []byte {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		return b
	}
	f := &fixtureBinaries{
		goStatic:   read("gostatic"),
		goCgo:      read("gocgo"),
		goPIE:      read("gopie"),
		cDynamic:   read("cdyn"),
		cStatic:    read("cstatic"),
		cStaticPIE: read("cspie"),
	}
	// hack/test.sh installs g++ and musl-tools; without them the C++ and
	// musl cases cannot be tested, which is a failure, not a skip.
	if err := run(nil, "musl-gcc", "-O2", "-o", "cmusl", "a.c"); err != nil {
		return nil, fmt.Errorf("musl-gcc (Debian musl-tools; hack/test.sh installs it): %w", err)
	}
	f.muslDynamic = read("cmusl")
	if err := run(nil, "g++", "-O2", "-o", "cxx", "a.cc"); err != nil {
		return nil, fmt.Errorf("g++ (hack/test.sh installs it): %w", err)
	}
	f.cxxDynamic = read("cxx")
	if f.cxxNeed, err = objdumpVersion(filepath.Join(dir, "cxx"), "GLIBCXX"); err != nil {
		return nil, err
	}
	if f.cxxabiNeed, err = objdumpVersion(filepath.Join(dir, "cxx"), "CXXABI"); err != nil {
		return nil, err
	}
	tagged := read("gotagged")
	if !bytes.Contains(tagged, []byte("-tags=abcdefghijklmnopqr")) {
		return nil, fmt.Errorf("build info of gotagged has no -tags setting to patch")
	}
	f.goSysCrypto = bytes.Replace(tagged, []byte("-tags=abcdefghijklmnopqr"), []byte("microsoft_systemcrypto=1"), -1)
	f.installer = append(slices.Clone(f.goStatic), gzipMember("azure-vnet", f.cDynamic)...)
	if f.cDynamicNeed, err = objdumpGlibc(filepath.Join(dir, "cdyn")); err != nil {
		return nil, err
	}
	if f.goCgoNeed, err = objdumpGlibc(filepath.Join(dir, "gocgo")); err != nil {
		return nil, err
	}
	return f, nil
}

// objdumpGlibc asks binutils, independently of debug/elf, for the highest
// GLIBC_ version a binary needs.
func objdumpGlibc(file string) (string, error) { return objdumpVersion(file, "GLIBC") }

// objdumpVersion is the highest PREFIX_x.y version objdump -T shows.
func objdumpVersion(file, prefix string) (string, error) {
	out, err := exec.Command("objdump", "-T", file).Output()
	if err != nil {
		return "", fmt.Errorf("objdump -T %s: %w", file, err)
	}
	best := ""
	for _, m := range regexp.MustCompile(`\(`+prefix+`_([0-9.]+)\)`).FindAllStringSubmatch(string(out), -1) {
		if best == "" || CompareVersions(m[1], best) > 0 {
			best = m[1]
		}
	}
	return best, nil
}

// gzipMember compresses data as the gzip CLI does, keeping the name.
func gzipMember(name string, data []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Name = name
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// entry is one tar entry of a test layer.
type entry struct {
	name     string
	data     []byte
	typeflag byte
	linkname string
}

func file(name string, data []byte) entry {
	return entry{name: name, data: data, typeflag: tar.TypeReg}
}
func dir(name string) entry      { return entry{name: name, typeflag: tar.TypeDir} }
func whiteout(name string) entry { return file(name, nil) }
func symlink(name, target string) entry {
	return entry{name: name, typeflag: tar.TypeSymlink, linkname: target}
}

func tarBytes(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typeflag, Linkname: e.linkname, Mode: 0o755, Size: int64(len(e.data)), Format: tar.FormatPAX}
		if e.typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write(e.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func layer(t testing.TB, entries ...entry) v1.Layer {
	t.Helper()
	b := tarBytes(t, entries...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func image(t testing.TB, arch string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}

// testRegistry serves an in-memory registry and counts blob fetches, so a
// test can prove that a cached audit pulled no layers.
type testRegistry struct {
	host     string
	blobGets func() int
}

func newRegistry(t testing.TB) *testRegistry {
	t.Helper()
	var mu sync.Mutex
	gets := 0
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			mu.Lock()
			gets++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return &testRegistry{host: u.Host, blobGets: func() int { mu.Lock(); defer mu.Unlock(); return gets }}
}

// testOptions uses no credentials and a private cache.
func testOptions(t testing.TB) Options {
	return Options{Keychain: authn.NewMultiKeychain(), CacheDir: t.TempDir()}
}

// byPath finds an executable in a report.
func byPath(r *Report, p string) *Executable {
	for i := range r.Executables {
		if r.Executables[i].Path == p {
			return &r.Executables[i]
		}
	}
	return nil
}

func paths(r *Report) []string {
	var out []string
	for _, e := range r.Executables {
		out = append(out, e.Path)
	}
	return out
}
