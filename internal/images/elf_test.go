package images

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"2.34", "2.4", 1},
		{"2.4", "2.34", -1},
		{"2.2.5", "2.2", 1},
		{"2.17", "2.17", 0},
		{"2.31", "2.32", -1},
		{"3.0", "2.99", 1},
		{"", "2.2.5", -1},
	}
	for _, c := range cases {
		t.Run(c.a+"_vs_"+c.b, func(t *testing.T) {
			if got := CompareVersions(c.a, c.b); got != c.want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}

func TestAnalyzeELFBuilds(t *testing.T) {
	fx := fixtures(t)
	cases := []struct {
		name      string
		data      []byte
		class     string
		linkage   string
		minGlibc  string
		interp    bool
		needed    []string
		goBinary  bool
		cgo       string
		sysCrypto bool
	}{
		{name: "go CGO_ENABLED=0", data: fx.goStatic, class: ClassGoStatic, linkage: LinkStatic, goBinary: true, cgo: "0"},
		{name: "go cgo", data: fx.goCgo, class: ClassGoCgo, linkage: LinkGlibc, minGlibc: fx.goCgoNeed, interp: true, needed: []string{"libc.so.6"}, goBinary: true, cgo: "1"},
		{name: "go pie without cgo", data: fx.goPIE, class: ClassGoDynamic, linkage: LinkDynamicNoLibs, interp: true, goBinary: true, cgo: "0"},
		{name: "go systemcrypto", data: fx.goSysCrypto, class: ClassGoSystemCrypto, linkage: LinkStatic, goBinary: true, cgo: "0", sysCrypto: true},
		{name: "c dynamic glibc", data: fx.cDynamic, class: LinkGlibc, linkage: LinkGlibc, minGlibc: fx.cDynamicNeed, interp: true, needed: []string{"libc.so.6"}},
		{name: "c static", data: fx.cStatic, class: LinkStatic, linkage: LinkStatic},
		{name: "c static-pie", data: fx.cStaticPIE, class: LinkStaticPIE, linkage: LinkStaticPIE},
		{name: "c musl", data: fx.muslDynamic, class: LinkMusl, linkage: LinkMusl, interp: true, needed: []string{"libc.so"}},
		{name: "c++ glibc", data: fx.cxxDynamic, class: LinkGlibc, linkage: LinkGlibc, minGlibc: mustObjdump(t, fx.cxxDynamic, "GLIBC"), interp: true, needed: []string{"libstdc++.so.6", "libc.so.6"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := AnalyzeELF(c.data, "bin")
			if err != nil {
				t.Fatal(err)
			}
			if b.Class != c.class || b.Linkage != c.linkage {
				t.Errorf("class/linkage = %s/%s, want %s/%s", b.Class, b.Linkage, c.class, c.linkage)
			}
			if b.MinGlibc != c.minGlibc {
				t.Errorf("MinGlibc = %q, want %q (objdump -T)", b.MinGlibc, c.minGlibc)
			}
			if (b.Interpreter != "") != c.interp {
				t.Errorf("Interpreter = %q, want present=%v", b.Interpreter, c.interp)
			}
			for _, n := range c.needed {
				found := false
				for _, got := range b.Needed {
					found = found || got == n
				}
				if !found {
					t.Errorf("Needed = %v, want it to include %s", b.Needed, n)
				}
			}
			if c.needed == nil && len(b.Needed) > 0 {
				t.Errorf("Needed = %v, want none", b.Needed)
			}
			if (b.Go != nil) != c.goBinary {
				t.Fatalf("Go = %+v, want Go binary %v", b.Go, c.goBinary)
			}
			if b.Go != nil && (b.Go.CGO != c.cgo || b.Go.SystemCrypto != c.sysCrypto) {
				t.Errorf("Go = %+v, want CGO %q systemcrypto %v", b.Go, c.cgo, c.sysCrypto)
			}
			if b.Arch != "amd64" {
				t.Errorf("Arch = %q, want amd64 (tests build for the host)", b.Arch)
			}
		})
	}
}

func TestNeedsFromObjdumpAreRecent(t *testing.T) {
	// The founding incident is about GLIBC_2.32/2.34 needs; the fixtures
	// must actually exercise such a need on this host.
	fx := fixtures(t)
	if CompareVersions(fx.cDynamicNeed, "2.32") < 0 {
		t.Skipf("host glibc too old to produce a 2.32+ need (got %s)", fx.cDynamicNeed)
	}
	b, err := AnalyzeELF(fx.cDynamic, "cdyn")
	if err != nil {
		t.Fatal(err)
	}
	if CompareVersions(b.MinGlibc, "2.32") < 0 {
		t.Errorf("MinGlibc = %s, want >= 2.32", b.MinGlibc)
	}
}

func TestAnalyzeELFMalformed(t *testing.T) {
	fx := fixtures(t)
	rnd := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(rnd)
	withMagic := append([]byte("\x7fELF"), rnd...)
	cases := []struct {
		name   string
		data   []byte
		notELF bool
	}{
		{"empty", nil, true},
		{"random", rnd, true},
		{"magic then random", withMagic, false},
		{"truncated header", fx.cDynamic[:20], false},
		{"truncated after header", fx.cDynamic[:200], false},
		{"truncated mid-file", fx.cDynamic[:len(fx.cDynamic)/2], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := AnalyzeELF(c.data, "x")
			if err == nil {
				t.Fatalf("AnalyzeELF = %+v, want an error", b)
			}
			if errors.Is(err, ErrNotELF) != c.notELF {
				t.Errorf("err = %v, want ErrNotELF %v", err, c.notELF)
			}
		})
	}
}

func TestSystemCryptoExperiment(t *testing.T) {
	cases := []struct {
		list string
		want bool
	}{
		{"systemcrypto", true},
		{"opensslcrypto", true},
		{"ms_nocgo_opensslcrypto", true},
		{"boringcrypto", false},
		{"systemcrypto,nosystemcrypto", false},
		{"", false},
		{goVersionExperiments("go1.25.0 X:opensslcrypto"), true},
		{goVersionExperiments("go1.26.8-X:boringcrypto"), false},
	}
	for _, c := range cases {
		t.Run(c.list, func(t *testing.T) {
			if got := systemCryptoExperiment(c.list); got != c.want {
				t.Errorf("systemCryptoExperiment(%q) = %v, want %v", c.list, got, c.want)
			}
		})
	}
}

func TestCleanPath(t *testing.T) {
	cases := []struct {
		in, want string
		ok, err  bool
	}{
		{"usr/bin/x", "usr/bin/x", true, false},
		{"./usr/bin/x", "usr/bin/x", true, false},
		{"/usr/bin/x", "usr/bin/x", true, false},
		{"./", "", false, false},
		{"../etc/passwd", "", false, true},
		{"a/../../b", "", false, true},
		{"/../x", "", false, true},
		{"a/../b", "b", true, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			p, ok, err := cleanPath(c.in)
			if (err != nil) != c.err || ok != c.ok || p != c.want {
				t.Errorf("cleanPath(%q) = %q, %v, %v; want %q, %v, err %v", c.in, p, ok, err, c.want, c.ok, c.err)
			}
		})
	}
}

func TestShippedGlibc(t *testing.T) {
	// The host's own libc.so.6 stands in for a distro base layer; getconf
	// says independently which glibc release it is.
	out, err := exec.Command("getconf", "GNU_LIBC_VERSION").Output()
	if err != nil {
		t.Skip("getconf GNU_LIBC_VERSION not available")
	}
	want := strings.TrimPrefix(strings.TrimSpace(string(out)), "glibc ")
	libc, err := exec.Command("gcc", "-print-file-name=libc.so.6").Output()
	if err != nil {
		t.Skip("gcc not available")
	}
	data, err := os.ReadFile(strings.TrimSpace(string(libc)))
	if err != nil {
		t.Skipf("reading libc.so.6: %v", err)
	}
	b, err := AnalyzeELF(data, "libc.so.6")
	if err != nil {
		t.Fatal(err)
	}
	if b.Class != ClassSharedLibrary || b.ProvidesGlibc != want {
		t.Errorf("libc.so.6: class %s provides %q, want %s providing %s", b.Class, b.ProvidesGlibc, ClassSharedLibrary, want)
	}
	r, err := Inspect(context.Background(), image(t, "amd64", layer(t, file("lib/x86_64-linux-gnu/libc.so.6", data))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ShippedGlibc != want || r.Libraries != 1 || len(r.Executables) != 0 {
		t.Errorf("report: shipped %q, %d libraries, %d executables; want %s, 1, 0", r.ShippedGlibc, r.Libraries, len(r.Executables), want)
	}
}

// mustObjdump writes data to a file and asks objdump for its highest
// PREFIX_ version.
func mustObjdump(t *testing.T, data []byte, prefix string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(f, data, 0o755); err != nil {
		t.Fatal(err)
	}
	v, err := objdumpVersion(f, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNeedsBeyondGlibc: a g++ program's libstdc++ versions, a musl
// program's loader and a static-pie program's lack of needs, each checked
// against binutils and carried into the audit's facts.
func TestNeedsBeyondGlibc(t *testing.T) {
	fx := fixtures(t)
	cxx, err := AnalyzeELF(fx.cxxDynamic, "cxx")
	if err != nil {
		t.Fatal(err)
	}
	if fx.cxxNeed == "" || cxx.MinGlibcxx != fx.cxxNeed || cxx.MinCxxabi != fx.cxxabiNeed {
		t.Errorf("GLIBCXX %q CXXABI %q, objdump says %q %q", cxx.MinGlibcxx, cxx.MinCxxabi, fx.cxxNeed, fx.cxxabiNeed)
	}
	if !strings.Contains(strings.Join(cxx.HostNeeds, "; "), "libstdc++.so.6 with GLIBCXX_"+fx.cxxNeed) {
		t.Errorf("host needs %v do not name libstdc++", cxx.HostNeeds)
	}
	musl, err := AnalyzeELF(fx.muslDynamic, "musl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(musl.Interpreter, "/lib/ld-musl-") || !strings.Contains(strings.Join(musl.HostNeeds, "; "), "glibc hosts do not have") {
		t.Errorf("musl: interpreter %q host needs %v", musl.Interpreter, musl.HostNeeds)
	}
	img := image(t, "amd64", layer(t,
		file("opt/cni/bin/cxx", fx.cxxDynamic),
		file("opt/cni/bin/musl", fx.muslDynamic),
		file("opt/cni/bin/spie", fx.cStaticPIE),
		file("opt/cni/bin/static", fx.cStatic),
	))
	r, err := Inspect(context.Background(), img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := r.Facts()
	if f.MaxGlibcxx != fx.cxxNeed || f.MaxCxxabi != fx.cxxabiNeed {
		t.Errorf("facts GLIBCXX %q CXXABI %q, want %q %q", f.MaxGlibcxx, f.MaxCxxabi, fx.cxxNeed, fx.cxxabiNeed)
	}
	if len(f.Musl) != 1 || !strings.HasPrefix(f.Musl[0], "/opt/cni/bin/musl: musl, loader /lib/ld-musl-") {
		t.Errorf("facts musl %v", f.Musl)
	}
	if !slices.Contains(f.Interpreters, musl.Interpreter) || !slices.Contains(f.Interpreters, cxx.Interpreter) || len(f.Interpreters) != 2 {
		t.Errorf("facts interpreters %v, want the musl and glibc loaders", f.Interpreters)
	}
	for _, e := range f.Executables {
		if strings.Contains(e, "spie") || strings.Contains(e, "static") {
			t.Errorf("static program listed with needs: %s", e)
		}
	}
	if e := byPath(r, "/opt/cni/bin/spie"); e == nil || e.Linkage != LinkStaticPIE {
		t.Errorf("static-pie program: %+v", e)
	}
}
