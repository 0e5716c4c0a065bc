package images

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
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
	// schema1 marks a Docker schema 1 manifest; img is then nil and
	// mediaType says which of the two schema 1 types it is.
	schema1   bool
	mediaType types.MediaType
}

// isSchema1 reports whether mt is a Docker image manifest v2, schema 1.
func isSchema1(mt types.MediaType) bool {
	return mt == types.DockerManifestSchema1 || mt == types.DockerManifestSchema1Signed
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
		remote.WithTransport(opts.transport),
	}
	desc, err := remote.Get(r, ropts...)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", r, err)
	}
	res := &resolved{}
	if isSchema1(desc.MediaType) {
		res.schema1, res.mediaType, res.digest = true, desc.MediaType, desc.Digest
		return res, nil
	}
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

// openTarball opens a docker-save tarball, an OCI image layout tarball
// (either of them gzip-compressed, as `docker save | gzip` writes them) or
// an OCI image layout directory. Layers are read in place on demand,
// never extracted.
func openTarball(ctx context.Context, file string, plat *v1.Platform) (*resolved, error) {
	st, err := openStore(ctx, file)
	if err != nil {
		return nil, err
	}
	res := &resolved{}
	switch {
	case st.has("manifest.json"):
		if res.img, res.digest, err = dockerSaveImage(st); err != nil {
			return nil, fmt.Errorf("%s: docker-save tarball: %w", file, err)
		}
		return res, nil
	case st.has("index.json"):
		if res.img, res.indexDigest, err = ociImage(st, plat); err != nil {
			return nil, fmt.Errorf("%s: OCI layout: %w", file, err)
		}
	default:
		return nil, fmt.Errorf("%s: not an image tarball or layout (no manifest.json or index.json; docker save or an OCI layout is expected)", file)
	}
	if res.digest, err = res.img.Digest(); err != nil {
		return nil, fmt.Errorf("%s: image digest: %w", file, err)
	}
	return res, nil
}

// maxMetadataBytes caps an index, manifest or config read from a tarball.
const maxMetadataBytes = 8 << 20

// readSmall reads a metadata file from a store.
func readSmall(st store, n string) ([]byte, error) {
	rc, size, err := st.open(n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if size > maxMetadataBytes {
		return nil, fmt.Errorf("%s: %d bytes is too large for metadata", n, size)
	}
	return io.ReadAll(io.LimitReader(rc, maxMetadataBytes))
}

func blobPath(h v1.Hash) string { return path.Join("blobs", h.Algorithm, h.Hex) }

// ociImage picks the image for plat from an OCI layout's index.json,
// descending into nested indexes (as docker and buildkit write them).
func ociImage(st store, plat *v1.Platform) (v1.Image, string, error) {
	raw, err := readSmall(st, "index.json")
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
		var offered []string
		for i := range im.Manifests {
			d := &im.Manifests[i]
			if d.Platform != nil {
				offered = append(offered, d.Platform.String())
				if !matchesPlatform(*d.Platform, *plat) {
					continue
				}
			}
			if d.Platform == nil && len(im.Manifests) > 1 && !d.MediaType.IsIndex() && !d.MediaType.IsImage() {
				continue
			}
			pick = d
			break
		}
		if pick == nil {
			return nil, "", fmt.Errorf("no image for %s in index (it has %s)", plat, strings.Join(offered, ", "))
		}
		if raw, err = readSmall(st, blobPath(pick.Digest)); err != nil {
			return nil, "", err
		}
		if pick.MediaType.IsIndex() {
			indexDigest = pick.Digest.String()
			continue
		}
		img, err := partial.CompressedToImage(&storeImage{st: st, manifest: raw, mediaType: pick.MediaType})
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

// storeImage is the minimal image go-containerregistry's partial package
// completes into a v1.Image, its blobs served by a store.
type storeImage struct {
	st       store
	manifest []byte
	// config, when set, is served instead of reading the config blob.
	config    []byte
	mediaType types.MediaType
	// paths maps a layer digest to its file in the store, when the store
	// does not name blobs by digest (docker save).
	paths map[v1.Hash]string
}

func (c *storeImage) RawManifest() ([]byte, error)        { return c.manifest, nil }
func (c *storeImage) MediaType() (types.MediaType, error) { return c.mediaType, nil }

func (c *storeImage) RawConfigFile() ([]byte, error) {
	if c.config != nil {
		return c.config, nil
	}
	m, err := v1.ParseManifest(bytes.NewReader(c.manifest))
	if err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	return readSmall(c.st, blobPath(m.Config.Digest))
}

func (c *storeImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	m, err := v1.ParseManifest(bytes.NewReader(c.manifest))
	if err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	if m.Config.Digest == h {
		return &storeLayer{st: c.st, path: blobPath(h), desc: m.Config}, nil
	}
	for _, l := range m.Layers {
		if l.Digest == h {
			p := blobPath(h)
			if c.paths != nil {
				p = c.paths[h]
			}
			return &storeLayer{st: c.st, path: p, desc: l}, nil
		}
	}
	return nil, fmt.Errorf("blob %s not in manifest", h)
}

// storeLayer is a layer blob in a store.
type storeLayer struct {
	st   store
	path string
	desc v1.Descriptor
}

func (l *storeLayer) Digest() (v1.Hash, error) { return l.desc.Digest, nil }
func (l *storeLayer) Size() (int64, error) {
	// The blob's real size, not the manifest's claim, is what gets read.
	if n, ok := l.st.size(l.path); ok {
		return n, nil
	}
	return l.desc.Size, nil
}
func (l *storeLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }

func (l *storeLayer) Compressed() (io.ReadCloser, error) {
	rc, _, err := l.st.open(l.path)
	return rc, err
}

// dockerManifest is one entry of a docker-save manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// dockerSaveImage reads a docker-save tarball's one image. go-containerregistry's
// tarball package would compute every layer's compressed digest, gzipping
// an uncompressed layer (what docker save writes) to do so; the walk needs
// no layer digests, so the image is built from the files as they are and
// named by its config digest, which is docker's image ID.
func dockerSaveImage(st store) (v1.Image, v1.Hash, error) {
	raw, err := readSmall(st, "manifest.json")
	if err != nil {
		return nil, v1.Hash{}, err
	}
	var ms []dockerManifest
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, v1.Hash{}, fmt.Errorf("parsing manifest.json: %w", err)
	}
	if len(ms) != 1 {
		return nil, v1.Hash{}, fmt.Errorf("manifest.json lists %d images; kubegap reads a tarball of one image", len(ms))
	}
	m := ms[0]
	config, err := readSmall(st, path.Clean(m.Config))
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("config: %w", err)
	}
	cfgDigest, _, err := v1.SHA256(bytes.NewReader(config))
	if err != nil {
		return nil, v1.Hash{}, err
	}
	man := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
		Config: v1.Descriptor{MediaType: types.OCIConfigJSON, Size: int64(len(config)), Digest: cfgDigest}}
	paths := map[v1.Hash]string{}
	for i, lp := range m.Layers {
		lp = path.Clean(lp)
		size, ok := st.size(lp)
		if !ok {
			return nil, v1.Hash{}, fmt.Errorf("layer %s is not in the tarball", printable(lp))
		}
		// A stand-in digest per layer file: it only tells layers apart.
		sum := sha256.Sum256([]byte(fmt.Sprintf("%d:%s", i, lp)))
		h := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
		paths[h] = lp
		man.Layers = append(man.Layers, v1.Descriptor{MediaType: types.OCILayer, Size: size, Digest: h})
	}
	rawMan, err := json.Marshal(man)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	img, err := partial.CompressedToImage(&storeImage{st: st, manifest: rawMan, config: config, mediaType: types.OCIManifestSchema1, paths: paths})
	if err != nil {
		return nil, v1.Hash{}, err
	}
	return img, cfgDigest, nil
}
