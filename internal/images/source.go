package images

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ParsePlatform parses os/arch[/variant]; empty means DefaultPlatform.
func ParsePlatform(s string) (*v1.Platform, error) {
	if s == "" {
		s = DefaultPlatform
	}
	p, err := v1.ParsePlatform(s)
	if err != nil || p.OS == "" || p.Architecture == "" {
		return nil, fmt.Errorf("platform %q: want os/arch[/variant], e.g. linux/amd64", s)
	}
	return p, nil
}

// resolved is an image with where it came from.
type resolved struct {
	img         v1.Image
	digest      v1.Hash
	indexDigest string
}

// openRemote resolves ref to one image for the platform. Only manifests
// are fetched here; layers are pulled lazily by the walk.
func openRemote(ctx context.Context, ref string, plat *v1.Platform, opts Options) (*resolved, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w", printable(ref), err)
	}
	ropts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(opts.Keychain),
		remote.WithPlatform(*plat),
		remote.WithUserAgent("kubegap"),
	}
	desc, err := remote.Get(r, ropts...)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", r, err)
	}
	res := &resolved{}
	if desc.MediaType.IsIndex() {
		res.indexDigest = desc.Digest.String()
	}
	// For an index, Image picks the child matching WithPlatform.
	if res.img, err = desc.Image(); err != nil {
		return nil, fmt.Errorf("resolving %s for %s: %w", r, plat, err)
	}
	if res.digest, err = res.img.Digest(); err != nil {
		return nil, fmt.Errorf("digest of %s: %w", r, err)
	}
	return res, nil
}

// platformNote warns when a single-platform image is not for the platform
// asked for: its binaries would not run on such a node at all.
func platformNote(img v1.Image, want *v1.Platform) string {
	cf, err := img.ConfigFile()
	if err != nil || cf == nil || cf.OS == "" {
		return ""
	}
	if cf.OS != want.OS || cf.Architecture != want.Architecture {
		return fmt.Sprintf("image is built for %s/%s, not %s", printable(cf.OS), printable(cf.Architecture), want)
	}
	return ""
}

// openTarball opens a docker-save tarball or an OCI image layout tarball.
// Layers are read from the file on demand, never extracted.
func openTarball(file string, plat *v1.Platform) (*resolved, error) {
	entries, err := indexTar(file)
	if err != nil {
		return nil, err
	}
	res := &resolved{}
	switch {
	case entries.has("manifest.json"):
		if res.img, err = tarball.ImageFromPath(file, nil); err != nil {
			return nil, fmt.Errorf("%s: docker-save tarball: %w", file, err)
		}
	case entries.has("index.json"):
		if res.img, res.indexDigest, err = ociImage(file, entries, plat); err != nil {
			return nil, fmt.Errorf("%s: OCI layout tarball: %w", file, err)
		}
	default:
		return nil, fmt.Errorf("%s: not an image tarball (no manifest.json or index.json; docker save or an OCI layout is expected)", file)
	}
	if res.digest, err = res.img.Digest(); err != nil {
		return nil, fmt.Errorf("%s: image digest: %w", file, err)
	}
	return res, nil
}

// tarEntry is where a regular file's data lies inside a tar file.
type tarEntry struct{ off, size int64 }

type tarIndex map[string]tarEntry

func (t tarIndex) has(n string) bool { _, ok := t[n]; return ok }

// maxTarIndex caps the entries indexed in an image tarball; an image
// tarball holds a handful of metadata files and one blob per layer.
const maxTarIndex = 100_000

// indexTar records the data offset of every regular file in a tar file.
// archive/tar reads header blocks exactly and seeks over data, so the file
// position after Next is where the entry's data starts.
func indexTar(file string) (tarIndex, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("opening image tarball: %w", err)
	}
	defer f.Close()
	idx := tarIndex{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not a readable tar file: %w", file, err)
		}
		if len(idx) >= maxTarIndex {
			return nil, fmt.Errorf("%s: more than %d entries; not an image tarball", file, maxTarIndex)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		idx[path.Clean(strings.TrimPrefix(hdr.Name, "./"))] = tarEntry{off: off, size: hdr.Size}
	}
	return idx, nil
}

// maxMetadataBytes caps an index, manifest or config read from a tarball.
const maxMetadataBytes = 8 << 20

// ociTar serves blobs of an OCI image layout from inside a tar file.
type ociTar struct {
	file    string
	entries tarIndex
}

func (o *ociTar) open(n string) (io.ReadCloser, int64, error) {
	e, ok := o.entries[n]
	if !ok {
		return nil, 0, fmt.Errorf("%s not in tarball", n)
	}
	f, err := os.Open(o.file)
	if err != nil {
		return nil, 0, fmt.Errorf("opening %s: %w", o.file, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, e.off, e.size), f}, e.size, nil
}

func (o *ociTar) blobPath(h v1.Hash) string { return path.Join("blobs", h.Algorithm, h.Hex) }

func (o *ociTar) readSmall(n string) ([]byte, error) {
	rc, size, err := o.open(n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if size > maxMetadataBytes {
		return nil, fmt.Errorf("%s: %d bytes is too large for metadata", n, size)
	}
	return io.ReadAll(rc)
}

// ociImage picks the image for plat from an OCI layout's index.json,
// descending into nested indexes (as docker and buildkit write them).
func ociImage(file string, entries tarIndex, plat *v1.Platform) (v1.Image, string, error) {
	o := &ociTar{file: file, entries: entries}
	raw, err := o.readSmall("index.json")
	if err != nil {
		return nil, "", err
	}
	var indexDigest string
	for depth := 0; depth < 4; depth++ {
		im, err := v1.ParseIndexManifest(bytes.NewReader(raw))
		if err != nil {
			return nil, "", fmt.Errorf("parsing index: %w", err)
		}
		var pick *v1.Descriptor
		for i := range im.Manifests {
			d := &im.Manifests[i]
			if d.Platform != nil && !matchesPlatform(*d.Platform, *plat) {
				continue
			}
			if d.Platform == nil && len(im.Manifests) > 1 && !d.MediaType.IsIndex() && !d.MediaType.IsImage() {
				continue
			}
			pick = d
			break
		}
		if pick == nil {
			return nil, "", fmt.Errorf("no image for %s in index", plat)
		}
		if raw, err = o.readSmall(o.blobPath(pick.Digest)); err != nil {
			return nil, "", err
		}
		if pick.MediaType.IsIndex() {
			indexDigest = pick.Digest.String()
			continue
		}
		img, err := partial.CompressedToImage(&ociImageCore{o: o, manifest: raw, mediaType: pick.MediaType})
		if err != nil {
			return nil, "", err
		}
		return img, indexDigest, nil
	}
	return nil, "", errors.New("indexes nested too deeply")
}

// matchesPlatform mirrors go-containerregistry's rule: OS and architecture
// equal, variant equal when asked for.
func matchesPlatform(given, want v1.Platform) bool {
	return given.OS == want.OS && given.Architecture == want.Architecture &&
		(want.Variant == "" || given.Variant == want.Variant)
}

// ociImageCore is the minimal image go-containerregistry's partial package
// completes into a v1.Image.
type ociImageCore struct {
	o         *ociTar
	manifest  []byte
	mediaType types.MediaType
}

func (c *ociImageCore) RawManifest() ([]byte, error)        { return c.manifest, nil }
func (c *ociImageCore) MediaType() (types.MediaType, error) { return c.mediaType, nil }

func (c *ociImageCore) RawConfigFile() ([]byte, error) {
	m, err := v1.ParseManifest(bytes.NewReader(c.manifest))
	if err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	return c.o.readSmall(c.o.blobPath(m.Config.Digest))
}

func (c *ociImageCore) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	m, err := v1.ParseManifest(bytes.NewReader(c.manifest))
	if err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	if m.Config.Digest == h {
		return &ociLayer{o: c.o, desc: m.Config}, nil
	}
	for _, l := range m.Layers {
		if l.Digest == h {
			return &ociLayer{o: c.o, desc: l}, nil
		}
	}
	return nil, fmt.Errorf("blob %s not in manifest", h)
}

// ociLayer is a layer blob inside the tarball.
type ociLayer struct {
	o    *ociTar
	desc v1.Descriptor
}

func (l *ociLayer) Digest() (v1.Hash, error) { return l.desc.Digest, nil }
func (l *ociLayer) Size() (int64, error) {
	// The blob's real size, not the manifest's claim, is what gets read.
	if e, ok := l.o.entries[l.o.blobPath(l.desc.Digest)]; ok {
		return e.size, nil
	}
	return l.desc.Size, nil
}
func (l *ociLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }

func (l *ociLayer) Compressed() (io.ReadCloser, error) {
	rc, _, err := l.o.open(l.o.blobPath(l.desc.Digest))
	return rc, err
}
