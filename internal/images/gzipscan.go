package images

import (
	"bytes"
	"context"
)

// gzipMagic is a gzip member header: ID1 ID2 and CM=8 (deflate).
const gzipMagic = "\x1f\x8b\x08"

const (
	// probeInput caps the compressed bytes a probe may consume to produce
	// the first four decompressed bytes. Real gzip output starts at once;
	// a stream of empty deflate blocks would otherwise make every false
	// hit cost the rest of the file.
	probeInput = 64 << 10
	// maxProbes caps the gzip headers tried per file. A real binary holds a
	// handful of accidental matches; a hostile one may hold millions.
	maxProbes = 10_000
)

// Payload is an ELF file carried inside an executable: in a gzip member,
// or deeper, in a gzip member or tar archive inside one, as an installer
// such as dropgz carries the binaries it copies to hosts.
type Payload struct {
	// Name is the original file name from the gzip header (FNAME), or
	// gzip@0xOFFSET when the header has none; a nested payload's name
	// joins each level with "!", e.g. bundle.tar!opt/cni/bin/azure-vnet.
	Name string `json:"name"`
	// Offset is where the outermost gzip member starts in the file.
	Offset int64 `json:"offset"`
	// Size is the decompressed size of a top-level member (0 for nested
	// payloads).
	Size int64 `json:"size"`
	// Binary is the analysis of the payload; nil when Error is set.
	Binary *Binary `json:"binary,omitempty"`
	// Error says why the payload could not be analysed.
	Error string `json:"error,omitempty"`
}

// ScanEmbedded looks for gzip members in data whose decompressed content
// is an ELF file, another gzip member or a tar archive, and analyses every
// ELF file found, to opts.MaxPayloadDepth levels and opts.MaxPayloadBytes
// decompressed bytes in all. Payloads that cannot be read are returned
// with Error set; notes says what was cut short by a limit. It returns
// ctx.Err() only when the context ends. Inspect runs the same scan while
// it streams each file.
func ScanEmbedded(ctx context.Context, data []byte, opts Options) (payloads []Payload, notes []string, err error) {
	opts = opts.withDefaults()
	a := newAnalyzer(ctx, opts, true)
	defer a.release()
	t := &tracker{br: a.reader(0, bytes.NewReader(data)), k: &kept{}}
	res := &fileResult{}
	pb := &payloadBudget{left: opts.MaxPayloadBytes, limit: opts.MaxPayloadBytes}
	if err := a.scan(t, 0, pb, true, nil, res); err != nil {
		return res.payloads, res.notes, ctx.Err()
	}
	return res.payloads, res.notes, nil
}
