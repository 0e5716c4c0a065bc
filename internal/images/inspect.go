package images

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubegap/kubegap/internal/check"
)

// Report kinds for JSON output.
const (
	// APIVersion is the apiVersion of a JSON image report.
	APIVersion = "kubegap.dev/v1alpha1"
	// Kind is the kind of a JSON image report.
	Kind = "ImageReport"
)

// Report is the result of inspecting one image.
type Report struct {
	// APIVersion and Kind identify the JSON document: APIVersion, Kind.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Reference is the image reference or tarball path inspected.
	Reference string `json:"reference"`
	// Platform is the platform requested, os/arch[/variant].
	Platform string `json:"platform"`
	// Digest is the image manifest digest, the cache key.
	Digest string `json:"digest"`
	// IndexDigest is the digest of the index the image was resolved from.
	IndexDigest string `json:"indexDigest,omitempty"`
	// Layers, Files and BytesRead say how much was read.
	Layers    int   `json:"layers"`
	Files     int   `json:"files"`
	BytesRead int64 `json:"bytesRead"`
	// ShippedGlibc is the glibc version the image itself carries (from its
	// libc.so.6), which is what binaries run inside the container get;
	// binaries copied to a host get the host's instead.
	ShippedGlibc string `json:"shippedGlibc,omitempty"`
	// Executables lists every ELF program found, by path.
	Executables []Executable `json:"executables"`
	// Libraries counts the shared libraries seen (not listed).
	Libraries int `json:"libraries"`
	// Skipped lists ELF files that were not analysed, with the reason.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Notes say what a limit cut short or what looked odd.
	Notes []string `json:"notes,omitempty"`
	// MediaType is the manifest's media type. A Docker schema 1 manifest
	// (application/vnd.docker.distribution.manifest.v1+prettyjws) is
	// reported with its layers unread.
	MediaType string `json:"mediaType,omitempty"`
	// LayersRead is false when only the manifest was read (schema 1, or
	// an audit that asked for the manifest alone): nothing is known of
	// the files then.
	LayersRead bool `json:"layersRead"`
	// Java lists the JDKs and JREs found, from their `release` files.
	Java []check.JavaRuntime `json:"java,omitempty"`
}

// Executable is one ELF program in an image.
type Executable struct {
	// Path is the absolute path in the image filesystem.
	Path string `json:"path"`
	// Size is the file size in bytes.
	Size int64 `json:"size"`
	Binary
	// Payloads are the ELF files embedded in it as gzip members.
	Payloads []Payload `json:"payloads,omitempty"`
}

// Skipped is an ELF file that was seen but not analysed.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// GlibcNeed is one executable's glibc requirement, payloads included.
type GlibcNeed struct {
	// Path is the file, with "!name" appended for an embedded payload.
	Path string
	// Version is the highest GLIBC_x.y needed, or "" for a glibc binary
	// without versioned symbols.
	Version string
}

// GlibcNeeds lists every executable and embedded payload that needs glibc,
// highest version first, then by path.
func (r *Report) GlibcNeeds() []GlibcNeed {
	var out []GlibcNeed
	add := func(p string, b *Binary) {
		if b != nil && (b.Linkage == LinkGlibc || b.Linkage == LinkGlibcUnversioned) {
			out = append(out, GlibcNeed{Path: p, Version: b.MinGlibc})
		}
	}
	for i := range r.Executables {
		e := &r.Executables[i]
		add(e.Path, &e.Binary)
		for _, p := range e.Payloads {
			add(e.Path+"!"+p.Name, p.Binary)
		}
	}
	slices.SortStableFunc(out, func(a, b GlibcNeed) int {
		if c := CompareVersions(b.Version, a.Version); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out
}

// MaxGlibc is the highest GLIBC_x.y any executable or payload needs.
func (r *Report) MaxGlibc() string {
	if n := r.GlibcNeeds(); len(n) > 0 {
		return n[0].Version
	}
	return ""
}

// Inspect walks img and analyses its ELF files. The caller bounds time
// through ctx; opts bounds everything else.
func Inspect(ctx context.Context, img v1.Image, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	r := &Report{APIVersion: APIVersion, Kind: Kind, Executables: []Executable{}, LayersRead: true}
	d, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("reading image digest: %w", err)
	}
	r.Digest = d.String()
	var st walkStats
	a := newAnalyzer(ctx, opts, true)
	defer a.release()
	err = walkImage(ctx, img, opts, &st, func(p string, hdr *tar.Header, rd io.Reader) error {
		return r.visit(a, "/"+printable(p), hdr, rd)
	})
	r.Layers, r.Files, r.BytesRead = st.layers, st.files, st.bytes
	if err != nil {
		return nil, err
	}
	slices.SortFunc(r.Executables, func(a, b Executable) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(r.Java, func(a, b check.JavaRuntime) int { return strings.Compare(a.Home, b.Home) })
	return r, nil
}

// visit reads one regular file: the magic first, the rest only for ELF,
// and that as a stream (see stream.go).
func (r *Report) visit(a *analyzer, p string, hdr *tar.Header, rd io.Reader) error {
	if isReleaseCandidate(p, hdr.Size) {
		rt, ok, err := readJavaRelease(p, rd)
		if ok {
			r.Java = append(r.Java, rt)
		}
		return err
	}
	if hdr.Size < 4 {
		return nil
	}
	var magic [4]byte
	if _, err := io.ReadFull(rd, magic[:]); err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	if !IsELF(magic[:]) {
		return nil
	}
	br := a.reader(0, io.MultiReader(bytes.NewReader(magic[:]), rd))
	pb := &payloadBudget{left: a.opts.MaxPayloadBytes, limit: a.opts.MaxPayloadBytes}
	fr, err := a.analyzeELF(br, p, 0, pb)
	if isStreamError(err) {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	if err != nil {
		r.Skipped = append(r.Skipped, Skipped{Path: p, Reason: err.Error()})
		return nil
	}
	b := fr.bin
	if b.Class == ClassSharedLibrary {
		r.Libraries++
		if b.ProvidesGlibc != "" && (r.ShippedGlibc == "" || CompareVersions(b.ProvidesGlibc, r.ShippedGlibc) > 0) {
			r.ShippedGlibc = b.ProvidesGlibc
		}
		return nil
	}
	if !b.IsExecutable() {
		return nil
	}
	e := Executable{Path: p, Size: hdr.Size, Binary: *b, Payloads: fr.payloads}
	for _, n := range fr.notes {
		r.Notes = append(r.Notes, p+": "+n)
	}
	r.Executables = append(r.Executables, e)
	return nil
}

// IsLimit reports whether err came from one of the Options limits.
func IsLimit(err error) bool { return errors.Is(err, errLimit) }

// InspectReference pulls ref from its registry for the platform (an index
// is resolved to that platform's image) and inspects it within
// opts.Timeout.
func InspectReference(ctx context.Context, ref, platform string, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	plat, err := ParsePlatform(platform)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	res, err := openRemote(ctx, ref, plat, opts)
	if err != nil {
		return nil, timeoutErr(ctx, opts, err)
	}
	return inspectResolved(ctx, ref, plat, res, opts)
}

// InspectTarball inspects a docker-save tarball or an OCI image layout
// tarball (an index in it is resolved to the platform) within opts.Timeout.
func InspectTarball(ctx context.Context, file, platform string, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	plat, err := ParsePlatform(platform)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	res, err := openTarball(ctx, file, plat)
	if err != nil {
		return nil, timeoutErr(ctx, opts, err)
	}
	return inspectResolved(ctx, file, plat, res, opts)
}

func inspectResolved(ctx context.Context, ref string, plat *v1.Platform, res *resolved, opts Options) (*Report, error) {
	if res.schema1 {
		return schema1Report(ref, plat, res), nil
	}
	r, err := Inspect(ctx, res.img, opts)
	if err != nil {
		return nil, timeoutErr(ctx, opts, fmt.Errorf("%s: %w", printable(ref), err))
	}
	r.Reference = printable(ref)
	// A docker-save image is named by its config digest (docker's image
	// ID); for the others this is the manifest digest Inspect computed.
	r.Digest = res.digest.String()
	r.Platform = plat.String()
	r.IndexDigest = res.indexDigest
	if mt, err := res.img.MediaType(); err == nil {
		r.MediaType = string(mt)
	}
	// Checked after the walk, not when resolving: the config is a blob,
	// and a cache hit should fetch manifests only.
	if note := platformNote(res.img, plat); note != "" {
		r.Notes = append([]string{note}, r.Notes...)
	}
	return r, nil
}

// timeoutErr names the limit when the per-image deadline is what ended
// the work; a bare "context deadline exceeded" would not say which flag.
func timeoutErr(ctx context.Context, opts Options, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: inspection took longer than %s (--timeout): %w", errLimit, opts.Timeout, err)
	}
	return err
}

// manifestReport describes an image from its manifest alone.
func manifestReport(ref string, plat *v1.Platform, res *resolved) *Report {
	r := &Report{APIVersion: APIVersion, Kind: Kind, Reference: printable(ref), Platform: plat.String(),
		Digest: res.digest.String(), IndexDigest: res.indexDigest, Executables: []Executable{}}
	if mt, err := res.img.MediaType(); err == nil {
		r.MediaType = string(mt)
	}
	return r
}

// schema1Report describes a Docker schema 1 image without reading it:
// go-containerregistry does not read such images as v1.Image, and the
// audit needs only the media type to know containerd 2 refuses it.
func schema1Report(ref string, plat *v1.Platform, res *resolved) *Report {
	return &Report{APIVersion: APIVersion, Kind: Kind, Reference: printable(ref), Platform: plat.String(),
		Digest: res.digest.String(), MediaType: string(res.mediaType), Executables: []Executable{},
		Notes: []string{"Docker image manifest v2, schema 1: layers not read (containerd 2.0 and later do not pull this format)"}}
}
