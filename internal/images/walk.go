package images

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// errLimit marks errors caused by an inspection limit, so callers can tell
// a hostile or oversized image from a broken one.
var errLimit = errors.New("limit exceeded")

// fileVisitor is called for every regular file visible in the final image
// filesystem. r yields the file's content and is valid only during the call.
type fileVisitor func(p string, hdr *tar.Header, r io.Reader) error

// overlay tracks what upper layers hide from lower ones, the way overlayfs
// and containerd apply OCI whiteouts.
type overlay struct {
	// tree holds whited-out paths and upper non-directories: they hide the
	// path itself and everything below it.
	tree map[string]bool
	// below holds opaque directories: they hide what lower layers put
	// inside them, but not the directory itself.
	below map[string]bool
	// exact holds upper directories: a lower non-directory at that path is
	// hidden, its children are not.
	exact map[string]bool
}

func newOverlay() *overlay {
	return &overlay{tree: map[string]bool{}, below: map[string]bool{}, exact: map[string]bool{}}
}

// hidden reports whether p (cleaned, relative) is hidden by upper layers.
func (o *overlay) hidden(p string) bool {
	if o.tree[p] || o.exact[p] || o.below[""] {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			if a := p[:i]; o.tree[a] || o.below[a] {
				return true
			}
		}
	}
	return false
}

// merge adds a finished layer's entries; they then hide lower layers.
func (o *overlay) merge(l *overlay) {
	for k := range l.tree {
		o.tree[k] = true
	}
	for k := range l.below {
		o.below[k] = true
	}
	for k := range l.exact {
		o.exact[k] = true
	}
}

// cleanPath turns a tar entry name into a relative slash path. Names that
// climb out of the root are an error: no image builder writes them, and
// they are the classic extraction attack. ok is false for the root itself.
func cleanPath(name string) (p string, ok bool, err error) {
	if strings.ContainsRune(name, 0) {
		return "", false, fmt.Errorf("tar entry %q: NUL in name", printable(name))
	}
	p = path.Clean("/" + name)
	raw := path.Clean(strings.TrimLeft(name, "/"))
	if raw == ".." || strings.HasPrefix(raw, "../") {
		return "", false, fmt.Errorf("tar entry %q: path escapes the image root", printable(name))
	}
	p = strings.TrimPrefix(p, "/")
	return p, p != "", nil
}

// walkStats counts what a walk read.
type walkStats struct {
	layers int
	files  int
	bytes  int64
}

// walkImage visits every regular file of the image's final filesystem,
// reading layers top-down so that a file deleted or replaced in an upper
// layer is never visited. Layers are streamed, never written to disk;
// links are recorded for hiding but never followed.
func walkImage(ctx context.Context, img v1.Image, opts Options, st *walkStats, visit fileVisitor) error {
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("listing layers: %w", err)
	}
	st.layers = len(layers)
	budget := &budget{ctx: ctx, left: opts.MaxImageBytes, limit: opts.MaxImageBytes}
	upper := newOverlay()
	for i := len(layers) - 1; i >= 0; i-- {
		if err := walkLayer(ctx, layers[i], opts, budget, upper, st, visit); err != nil {
			d, _ := layers[i].Digest()
			return fmt.Errorf("layer %d (%s): %w", i+1, d, err)
		}
	}
	st.bytes = budget.limit - budget.left
	return nil
}

func walkLayer(ctx context.Context, l v1.Layer, opts Options, b *budget, upper *overlay, st *walkStats, visit fileVisitor) error {
	size, err := l.Size()
	if err != nil {
		return fmt.Errorf("reading size: %w", err)
	}
	if size > opts.MaxLayerBytes {
		return fmt.Errorf("%w: compressed size %d bytes is over --max-layer-bytes %d", errLimit, size, opts.MaxLayerBytes)
	}
	rc, err := openLayer(l)
	if err != nil {
		return fmt.Errorf("opening: %w", err)
	}
	defer rc.Close()
	tr := tar.NewReader(&boundedReader{r: rc, b: b})
	this := newOverlay()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading tar: %w", err)
		}
		st.files++
		if st.files > opts.MaxFiles {
			return fmt.Errorf("%w: more than %d files (--max-files)", errLimit, opts.MaxFiles)
		}
		p, ok, err := cleanPath(hdr.Name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		dir, base := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		if base == ".wh..wh..opq" {
			this.below[dir] = true
			continue
		}
		if name, ok := strings.CutPrefix(base, ".wh."); ok {
			this.tree[path.Join(dir, name)] = true
			continue
		}
		if upper.hidden(p) {
			continue
		}
		if hdr.Typeflag == tar.TypeDir {
			this.exact[p] = true
			continue
		}
		this.tree[p] = true
		if hdr.Typeflag != tar.TypeReg {
			// Symlinks, hard links, devices: never followed or read.
			continue
		}
		if err := visit(p, hdr, tr); err != nil {
			return err
		}
	}
	upper.merge(this)
	return nil
}

// budget is the decompressed bytes an image may still produce.
type budget struct {
	ctx   context.Context
	left  int64
	limit int64
}

// boundedReader stops a layer stream when the image's budget is spent or
// the context ends, so neither a decompression bomb nor a stalled registry
// can hold an inspection forever.
type boundedReader struct {
	r io.Reader
	b *budget
}

func (br *boundedReader) Read(p []byte) (int, error) {
	if err := br.b.ctx.Err(); err != nil {
		return 0, err
	}
	if br.b.left <= 0 {
		// At the limit exactly, a stream that is also at its end is fine.
		var one [1]byte
		if n, err := br.r.Read(one[:]); n == 0 && errors.Is(err, io.EOF) {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("%w: image decompresses to more than %d bytes (--max-image-bytes)", errLimit, br.b.limit)
	}
	if int64(len(p)) > br.b.left {
		p = p[:br.b.left]
	}
	n, err := br.r.Read(p)
	br.b.left -= int64(n)
	return n, err
}
