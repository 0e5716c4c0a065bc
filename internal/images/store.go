package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// store serves the files of an image on disk by their slash path: a tar
// file (docker save, an OCI layout tarball), the same gzip-compressed, or
// an OCI layout directory.
type store interface {
	has(name string) bool
	size(name string) (int64, bool)
	open(name string) (io.ReadCloser, int64, error)
}

// openStore picks the store for file by what it is. ctx bounds the
// passes over a compressed tarball.
func openStore(ctx context.Context, file string) (store, error) {
	info, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("opening image tarball: %w", err)
	}
	if info.IsDir() {
		if _, err := os.Stat(filepath.Join(file, "index.json")); err != nil {
			return nil, fmt.Errorf("%s: a directory, but not an OCI image layout (no index.json)", file)
		}
		return dirStore(file), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("opening image tarball: %w", err)
	}
	var magic [3]byte
	n, _ := io.ReadFull(f, magic[:])
	f.Close()
	if n == 3 && string(magic[:]) == gzipMagic {
		return indexGzipTar(ctx, file)
	}
	return indexTar(file)
}

// dirStore is an OCI image layout directory.
type dirStore string

func (d dirStore) path(name string) (string, bool) {
	// Names come from index.json and manifests: digests and fixed names.
	// Anything that would leave the directory is refused.
	if !fs.ValidPath(name) {
		return "", false
	}
	return filepath.Join(string(d), filepath.FromSlash(name)), true
}

func (d dirStore) has(name string) bool { _, ok := d.size(name); return ok }

func (d dirStore) size(name string) (int64, bool) {
	p, ok := d.path(name)
	if !ok {
		return 0, false
	}
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		return 0, false
	}
	return info.Size(), true
}

func (d dirStore) open(name string) (io.ReadCloser, int64, error) {
	n, ok := d.size(name)
	if !ok {
		return nil, 0, fmt.Errorf("%s not in the layout (or not a regular file)", printable(name))
	}
	p, _ := d.path(name)
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	return f, n, nil
}

// tarEntry is where a regular file's data lies inside a tar file.
type tarEntry struct{ off, size int64 }

// tarStore serves files from inside an uncompressed tar file by offset.
type tarStore struct {
	file    string
	entries map[string]tarEntry
}

// maxTarIndex caps the entries indexed in an image tarball; an image
// tarball holds a handful of metadata files and one blob per layer.
const maxTarIndex = 100_000

func tarName(n string) string { return path.Clean(strings.TrimPrefix(n, "./")) }

// indexTar records the data offset of every regular file in a tar file.
// archive/tar reads header blocks exactly and seeks over data, so the file
// position after Next is where the entry's data starts.
func indexTar(file string) (*tarStore, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("opening image tarball: %w", err)
	}
	defer f.Close()
	st := &tarStore{file: file, entries: map[string]tarEntry{}}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not a readable tar file: %w", file, err)
		}
		if len(st.entries) >= maxTarIndex {
			return nil, fmt.Errorf("%s: more than %d entries; not an image tarball", file, maxTarIndex)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		st.entries[tarName(hdr.Name)] = tarEntry{off: off, size: hdr.Size}
	}
	return st, nil
}

func (t *tarStore) has(n string) bool { _, ok := t.entries[n]; return ok }

func (t *tarStore) size(n string) (int64, bool) { e, ok := t.entries[n]; return e.size, ok }

func (t *tarStore) open(n string) (io.ReadCloser, int64, error) {
	e, ok := t.entries[n]
	if !ok {
		return nil, 0, fmt.Errorf("%s not in tarball", printable(n))
	}
	f, err := os.Open(t.file)
	if err != nil {
		return nil, 0, fmt.Errorf("opening %s: %w", t.file, err)
	}
	return readCloser{io.NewSectionReader(f, e.off, e.size), f}, e.size, nil
}

// gzipTarStore serves files from a gzip-compressed tar file, which cannot
// be read at an offset. Indexing reads it once and keeps the small files
// (manifests, configs, indexes) in memory; each large file (a layer) is
// then one more pass that decompresses up to it. A one-layer
// `docker save | gzip` costs two decompressions of the file.
type gzipTarStore struct {
	ctx     context.Context
	file    string
	sizes   map[string]int64
	small   map[string][]byte
	maxRead int64
}

const (
	// maxSmallFile is the largest file kept in memory while indexing.
	maxSmallFile = 1 << 20
	// maxSmallTotal caps the memory those files take together.
	maxSmallTotal = 32 << 20
)

// maxGzipTarBytes caps what indexing a compressed tarball decompresses.
const maxGzipTarBytes = DefaultMaxImageBytes * 2

func indexGzipTar(ctx context.Context, file string) (*gzipTarStore, error) {
	st := &gzipTarStore{ctx: ctx, file: file, sizes: map[string]int64{}, small: map[string][]byte{}, maxRead: maxGzipTarBytes}
	kept := 0
	err := st.walk(func(name string, hdr *tar.Header, r io.Reader) (bool, error) {
		if len(st.sizes) >= maxTarIndex {
			return true, fmt.Errorf("more than %d entries; not an image tarball", maxTarIndex)
		}
		st.sizes[name] = hdr.Size
		if hdr.Size <= maxSmallFile && kept+int(hdr.Size) <= maxSmallTotal {
			b, err := io.ReadAll(io.LimitReader(r, hdr.Size))
			if err != nil {
				return true, err
			}
			st.small[name] = b
			kept += len(b)
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable gzip-compressed tar file: %w", file, err)
	}
	return st, nil
}

// walk decompresses the file and calls fn for every regular file until fn
// says stop. The reader is valid only during the call unless fn stops.
func (g *gzipTarStore) walk(fn func(name string, hdr *tar.Header, r io.Reader) (stop bool, err error)) error {
	f, err := os.Open(g.file)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	b := &budget{ctx: g.ctx, left: g.maxRead, limit: g.maxRead}
	tr := tar.NewReader(&boundedReader{r: zr, b: b})
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if stop, err := fn(tarName(hdr.Name), hdr, tr); stop || err != nil {
			return err
		}
	}
}

func (g *gzipTarStore) has(n string) bool { _, ok := g.sizes[n]; return ok }

func (g *gzipTarStore) size(n string) (int64, bool) { s, ok := g.sizes[n]; return s, ok }

func (g *gzipTarStore) open(n string) (io.ReadCloser, int64, error) {
	size, ok := g.sizes[n]
	if !ok {
		return nil, 0, fmt.Errorf("%s not in tarball", printable(n))
	}
	if b, ok := g.small[n]; ok {
		return io.NopCloser(bytes.NewReader(b)), size, nil
	}
	// Stream the entry from a fresh pass: a goroutine walks to it and
	// pipes its data; closing the reader ends the pass.
	pr, pw := io.Pipe()
	go func() {
		found := false
		err := g.walk(func(name string, hdr *tar.Header, r io.Reader) (bool, error) {
			if name != n {
				return false, nil
			}
			found = true
			_, err := io.Copy(pw, r)
			return true, err
		})
		if err == nil && !found {
			err = fmt.Errorf("%s vanished from the tarball", printable(n))
		}
		pw.CloseWithError(err)
	}()
	return pr, size, nil
}
