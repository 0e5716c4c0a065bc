package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// writeTree writes files (slash-separated paths under dir) without ever
// writing through a link that is already there: a symbolic link planted
// at DIR, or at a file or directory the site writes under it (say, in a
// shared /tmp), would otherwise aim kubegap's writes at any file the user
// can write. Every path is checked before anything is written, so a
// refused run writes nothing. Each file is then written fresh: created
// exclusively under a temporary name (O_EXCL follows no link) and renamed
// over its path, which replaces a directory entry and writes into no
// existing file, hard links included. All of it goes through an os.Root
// for dir, so not even a link made during the run reaches outside it.
func writeTree(dir string, files map[string][]byte) error {
	if st, err := os.Lstat(dir); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: kubegap site writes only into a real directory (give the link's target, or remove the link)", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing the site: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("writing the site: %w", err)
	}
	defer root.Close()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, filepath.FromSlash(p))
	}
	sort.Strings(paths)
	for _, p := range paths {
		// From the top down, so that a linked directory is named itself.
		var subs []string
		for sub := p; sub != "." && sub != string(filepath.Separator); sub = filepath.Dir(sub) {
			subs = append([]string{sub}, subs...)
		}
		for _, sub := range subs {
			st, err := root.Lstat(sub)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("writing the site: %w", err)
			}
			if st.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("%s is a symbolic link: kubegap site does not write through links (remove it, or write the site to a new directory)", filepath.Join(dir, sub))
			}
			if sub != p && !st.IsDir() {
				return fmt.Errorf("%s is not a directory: kubegap site needs it for %s", filepath.Join(dir, sub), filepath.Join(dir, p))
			}
		}
	}
	for _, p := range paths {
		if err := writeFresh(root, p, files[filepath.ToSlash(p)]); err != nil {
			return fmt.Errorf("writing the site: %w", err)
		}
	}
	return nil
}

// writeFresh writes data to a new file beside name and renames it over
// name.
func writeFresh(root *os.Root, name string, data []byte) error {
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	tmp := filepath.Join(filepath.Dir(name), ".kubegap-"+hex.EncodeToString(b))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}
