package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSiteNeverWritesThroughLinks: kubegap site -o DIR refuses, with one
// line and exit 2 and before writing anything, a DIR that is a symbolic
// link and a link at any file or directory it writes under DIR; a hard
// link there is replaced, not written through. Before, every one of them
// let the site overwrite the file the link names.
func TestSiteNeverWritesThroughLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	const precious = "do not overwrite\n"
	setup := func(t *testing.T) (base, victim string) {
		base = t.TempDir()
		victim = filepath.Join(base, "victim.txt")
		if err := os.WriteFile(victim, []byte(precious), 0o644); err != nil {
			t.Fatal(err)
		}
		return base, victim
	}
	untouched := func(t *testing.T, victim string) {
		t.Helper()
		if b, err := os.ReadFile(victim); err != nil || string(b) != precious {
			t.Errorf("the link's target now holds %.80q (%v)", b, err)
		}
	}
	refused := func(t *testing.T, dir, want string) {
		t.Helper()
		code, out, errOut := runKubegap(t, "site", "-o", dir)
		if code != ExitError || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errOut, want)
		}
	}
	t.Run("DIR is a link", func(t *testing.T) {
		base, _ := setup(t)
		target := filepath.Join(base, "elsewhere")
		os.Mkdir(target, 0o755)
		dir := filepath.Join(base, "site")
		os.Symlink(target, dir)
		refused(t, dir, "site is a symbolic link")
		if es, _ := os.ReadDir(target); len(es) != 0 {
			t.Errorf("wrote %d entries through the link", len(es))
		}
	})
	t.Run("a page is a link", func(t *testing.T) {
		base, victim := setup(t)
		dir := filepath.Join(base, "site")
		os.MkdirAll(filepath.Join(dir, "cases"), 0o755)
		os.Symlink(victim, filepath.Join(dir, "cases", "index.html"))
		refused(t, dir, filepath.Join("cases", "index.html")+" is a symbolic link")
		untouched(t, victim)
		if _, err := os.Stat(filepath.Join(dir, "index.html")); !os.IsNotExist(err) {
			t.Errorf("a refused run wrote index.html: %v", err)
		}
	})
	t.Run("a directory is a link", func(t *testing.T) {
		base, _ := setup(t)
		target := filepath.Join(base, "elsewhere")
		os.Mkdir(target, 0o755)
		dir := filepath.Join(base, "site")
		os.Mkdir(dir, 0o755)
		os.Symlink(target, filepath.Join(dir, "assets"))
		refused(t, dir, "assets is a symbolic link")
		if es, _ := os.ReadDir(target); len(es) != 0 {
			t.Errorf("wrote %d entries through the link", len(es))
		}
	})
	t.Run("a page is a hard link", func(t *testing.T) {
		base, victim := setup(t)
		dir := filepath.Join(base, "site")
		os.MkdirAll(filepath.Join(dir, "assets"), 0o755)
		if err := os.Link(victim, filepath.Join(dir, "assets", "style.css")); err != nil {
			t.Skip(err)
		}
		code, _, errOut := runKubegap(t, "site", "-o", dir)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		untouched(t, victim)
		if b, err := os.ReadFile(filepath.Join(dir, "assets", "style.css")); err != nil || string(b) == precious || len(b) == 0 {
			t.Errorf("style.css not written fresh: %.40q (%v)", b, err)
		}
		// A second run into the same directory works, and leaves no
		// temporary files behind.
		if code, _, errOut := runKubegap(t, "site", "-o", dir); code != ExitOK {
			t.Fatalf("second run: exit %d: %s", code, errOut)
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), ".kubegap-") {
				t.Errorf("temporary file left: %s", p)
			}
			return nil
		})
	})
}
