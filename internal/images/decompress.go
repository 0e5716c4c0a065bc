package images

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// zstdMagic starts a zstd frame (RFC 8878).
const zstdMagic = "\x28\xb5\x2f\xfd"

// maxZstdWindow caps the window a zstd layer may ask the decoder to keep.
// zstd's format lets a frame declare windows up to 3.75 TiB, which a
// decoder would allocate; encoders default to at most 8 MiB (levels up to
// 19) and --long to 128 MiB. 32 MiB keeps peak memory within the
// inspection's budget; a layer needing more is refused with an error.
const maxZstdWindow = 32 << 20

// openLayer returns a layer's tar stream. The stored bytes are sniffed,
// not trusted to the media type: registries and tools label layers
// loosely, and an uncompressed docker-save layer reports a gzip type.
// gzip and zstd are decoded with klauspost/compress: its inflate is what
// let inspection outrun gunzip in bench/images (see docs/images.md),
// where compress/gzip, which kubegap used before, merely kept up.
func openLayer(l v1.Layer) (io.ReadCloser, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(rc, 64<<10)
	magic, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		rc.Close()
		return nil, err
	}
	return decompressed(br, magic, rc)
}

// decompressed wraps br by what its first bytes say it holds; closing the
// result closes c.
func decompressed(br *bufio.Reader, magic []byte, c io.Closer) (io.ReadCloser, error) {
	switch {
	case len(magic) >= 3 && string(magic[:3]) == gzipMagic:
		zr, err := gzip.NewReader(br)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return readCloser{zr, closers{zr, c}}, nil
	case len(magic) >= 4 && string(magic[:4]) == zstdMagic:
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return readCloser{zstdErrors{zr}, closers{zstdCloser{zr}, c}}, nil
	}
	return readCloser{br, c}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

type zstdCloser struct{ d *zstd.Decoder }

func (z zstdCloser) Close() error { z.d.Close(); return nil }

// zstdErrors names the flag-free limit when a frame asks for a larger
// window than maxZstdWindow.
type zstdErrors struct{ d *zstd.Decoder }

func (z zstdErrors) Read(p []byte) (int, error) {
	n, err := z.d.Read(p)
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		err = fmt.Errorf("%w: zstd frame needs a window over %d MiB: %w", errLimit, maxZstdWindow>>20, err)
	}
	return n, err
}
