package images

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStreamMatchesDebugELF compares the streaming parser, which reads
// only program headers and the tables they lead to, with the standard
// library's section-based debug/elf and debug/buildinfo on the real ELF
// files of this machine: system programs and libraries and the Go
// toolchain.
func TestStreamMatchesDebugELF(t *testing.T) {
	roots := []string{"/usr/lib/x86_64-linux-gnu", "/usr/bin"}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		goroot := strings.TrimSpace(string(out))
		roots = append(roots, filepath.Join(goroot, "bin"), filepath.Join(goroot, "pkg", "tool"))
	}
	// Per root, so that each kind of file is represented.
	const maxFiles, maxBytes = 150, 80 << 20
	all, allBytes := 0, int64(0)
	a := newAnalyzer(context.Background(), Options{}.withDefaults(), false)
	for _, root := range roots {
		files, total := 0, int64(0)
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || files >= maxFiles || total >= maxBytes {
				return nil
			}
			f, err := elf.Open(p)
			if err != nil {
				return nil
			}
			defer f.Close()
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			files++
			total += int64(len(data))
			fr, err := a.analyzeELF(a.reader(0, strings.NewReader(string(data))), p, 0, &payloadBudget{})
			if err != nil {
				t.Errorf("%s: %v", p, err)
				return nil
			}
			compareWithDebugELF(t, p, f, fr.bin)
			return nil
		})
		all, allBytes = all+files, allBytes+total
	}
	if all < 20 {
		t.Skipf("only %d ELF files found on this machine", all)
	}
	t.Logf("compared %d files, %d MiB", all, allBytes>>20)
}

func compareWithDebugELF(t *testing.T, p string, f *elf.File, b *Binary) {
	t.Helper()
	if f.SectionByType(elf.SHT_DYNAMIC) != nil {
		want, _ := f.ImportedLibraries()
		if !slices.Equal(b.Needed, want) {
			t.Errorf("%s: needed %v, debug/elf %v", p, b.Needed, want)
		}
		if so, _ := f.DynString(elf.DT_SONAME); len(so) > 0 && so[0] != b.SONAME {
			t.Errorf("%s: soname %q, debug/elf %q", p, b.SONAME, so[0])
		}
		var names []string
		if needs, err := f.DynamicVersionNeeds(); err == nil {
			for _, n := range needs {
				for _, d := range n.Needs {
					names = append(names, d.Dep)
				}
			}
		}
		if want := versionsWithPrefix(names, "GLIBC_"); !slices.Equal(b.GlibcVersions, want) {
			t.Errorf("%s: glibc %v, debug/elf %v", p, b.GlibcVersions, want)
		}
		if want := versionsWithPrefix(names, "GLIBCXX_"); !slices.Equal(b.GlibcxxVersions, want) {
			t.Errorf("%s: glibcxx %v, debug/elf %v", p, b.GlibcxxVersions, want)
		}
	}
	for _, pr := range f.Progs {
		if pr.Type == elf.PT_INTERP {
			buf := make([]byte, pr.Filesz)
			_, _ = pr.ReadAt(buf, 0)
			if want := strings.TrimRight(string(buf), "\x00"); want != b.Interpreter {
				t.Errorf("%s: interpreter %q, debug/elf %q", p, b.Interpreter, want)
			}
		}
	}
	bi, err := buildinfo.ReadFile(p)
	switch {
	case err == nil && (b.Go == nil || b.Go.Version != bi.GoVersion || b.Go.Path != bi.Path):
		t.Errorf("%s: go %+v, debug/buildinfo %s %s", p, b.Go, bi.GoVersion, bi.Path)
	case err != nil && b.Go != nil:
		t.Errorf("%s: go %+v, but debug/buildinfo: %v", p, b.Go, err)
	}
}
