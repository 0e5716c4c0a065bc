package images

import (
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Default limits. They are generous enough for large real images (a CUDA
// base image decompresses to several GiB; kube-apiserver is ~100 MiB) and
// small enough that a hostile image cannot exhaust memory, disk or time.
const (
	// DefaultMaxLayerBytes caps one layer's compressed size (2 GiB).
	DefaultMaxLayerBytes int64 = 2 << 30
	// DefaultMaxImageBytes caps the decompressed bytes read per image (8 GiB).
	DefaultMaxImageBytes int64 = 8 << 30
	// DefaultMaxFiles caps the tar entries walked per image.
	DefaultMaxFiles = 1_000_000
	// DefaultMaxFileBytes caps the bytes of one ELF file kept in memory
	// (16 MiB): its headers through its dynamic section. Files are
	// streamed, so their size is not limited; one whose tables lie further
	// in is listed as skipped.
	DefaultMaxFileBytes int64 = 16 << 20
	// DefaultMaxPayloadBytes caps the bytes the embedded payloads of one
	// file decompress to, all levels of nesting together (128 MiB).
	DefaultMaxPayloadBytes int64 = 128 << 20
	// DefaultMaxPayloadDepth caps how deeply payloads nest: a gzip member
	// in a file is level 1, a tar or gzip inside it level 2, and so on; a
	// tar.gz inside a tar inside a gzip member is level 4.
	DefaultMaxPayloadDepth = 4
	// DefaultMaxPayloads caps the embedded payloads analysed per executable.
	DefaultMaxPayloads = 64
	// DefaultTimeout bounds the inspection of one image, pull included.
	DefaultTimeout = 5 * time.Minute
	// DefaultPlatform is the platform chosen from a multi-platform index.
	DefaultPlatform = "linux/amd64"
)

// Options bounds and configures an inspection. The zero value is usable:
// every zero field takes its documented default.
type Options struct {
	// MaxLayerBytes caps a layer's compressed size as the manifest states
	// it; a larger layer fails the image. Default DefaultMaxLayerBytes.
	MaxLayerBytes int64
	// MaxImageBytes caps the decompressed bytes read across all layers of
	// one image; it is what stops a decompression bomb. Default
	// DefaultMaxImageBytes.
	MaxImageBytes int64
	// MaxFiles caps the tar entries walked across all layers. Default
	// DefaultMaxFiles.
	MaxFiles int
	// MaxFileBytes caps the bytes of one ELF file kept in memory.
	// Default DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxPayloadBytes caps what the embedded payloads of one file
	// decompress to. Default DefaultMaxPayloadBytes.
	MaxPayloadBytes int64
	// MaxPayloadDepth caps the nesting of payloads. Default
	// DefaultMaxPayloadDepth.
	MaxPayloadDepth int
	// MaxPayloads caps the embedded payloads analysed per executable.
	// Default DefaultMaxPayloads.
	MaxPayloads int
	// Timeout bounds one image, pull included. Default DefaultTimeout.
	Timeout time.Duration
	// Keychain resolves registry credentials. Default authn.DefaultKeychain
	// (the user's docker config, anonymous when there is none).
	Keychain authn.Keychain
	// CacheDir holds results keyed by image digest for InspectForAudit.
	// Default os.UserCacheDir()/kubegap/images; "-" disables the cache.
	CacheDir string
	// Concurrency is how many images InspectForAudit inspects at once.
	// Default 4.
	Concurrency int
	// PerRegistry is how many of those may come from one registry at
	// once. Default 2.
	PerRegistry int
	// CacheMaxBytes caps the cache directory; the least recently used
	// results go first. Default 64 MiB.
	CacheMaxBytes int64

	// transport is shared by every image of one call, so that a
	// registry's Retry-After holds for all of them.
	transport http.RoundTripper
}

// ImageRef names an image and the platform to resolve it for.
type ImageRef struct {
	// Reference is the image as written in the pod spec.
	Reference string
	// Platform is os/arch[/variant], e.g. linux/arm64; empty means
	// DefaultPlatform.
	Platform string
	// ManifestOnly asks for the manifest alone (its media type and
	// digest): no layer is pulled unless the cache already holds a full
	// result. A reference asked for both ways is inspected in full.
	ManifestOnly bool
}

// withDefaults fills zero fields with their defaults.
func (o Options) withDefaults() Options {
	if o.MaxLayerBytes <= 0 {
		o.MaxLayerBytes = DefaultMaxLayerBytes
	}
	if o.MaxImageBytes <= 0 {
		o.MaxImageBytes = DefaultMaxImageBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxPayloadBytes <= 0 {
		o.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if o.MaxPayloadDepth <= 0 {
		o.MaxPayloadDepth = DefaultMaxPayloadDepth
	}
	if o.MaxPayloads <= 0 {
		o.MaxPayloads = DefaultMaxPayloads
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Keychain == nil {
		o.Keychain = authn.DefaultKeychain
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.PerRegistry <= 0 {
		o.PerRegistry = 2
	}
	if o.CacheMaxBytes <= 0 {
		o.CacheMaxBytes = 64 << 20
	}
	if o.transport == nil {
		o.transport = newRetryAfterTransport(remote.DefaultTransport)
	}
	return o
}
