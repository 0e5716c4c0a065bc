package images

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
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

// Payload is one gzip member inside an executable whose content is an ELF
// file, as an installer such as dropgz carries the binaries it copies to
// hosts.
type Payload struct {
	// Name is the original file name from the gzip header (FNAME), or
	// gzip@0xOFFSET when the header has none.
	Name string `json:"name"`
	// Offset is where the gzip member starts in the outer file.
	Offset int64 `json:"offset"`
	// Size is the decompressed size.
	Size int64 `json:"size"`
	// Binary is the analysis of the payload; nil when Error is set.
	Binary *Binary `json:"binary,omitempty"`
	// Error says why the payload could not be analysed.
	Error string `json:"error,omitempty"`
}

// ScanEmbedded looks for gzip members in data whose decompressed content
// is an ELF file and analyses each. Limits come from opts (MaxPayloadBytes,
// MaxPayloads). Payloads that cannot be read are returned with Error set;
// notes says what was cut short by a limit. It returns ctx.Err() only when
// the context ends.
func ScanEmbedded(ctx context.Context, data []byte, opts Options) (payloads []Payload, notes []string, err error) {
	opts = opts.withDefaults()
	var zr *gzip.Reader
	probes := 0
	magic := []byte(gzipMagic)
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], magic)
		if i < 0 {
			break
		}
		off += i
		probes++
		if probes > maxProbes {
			notes = append(notes, fmt.Sprintf("stopped scanning for embedded gzip after %d candidate headers", maxProbes))
			break
		}
		if probes%256 == 0 {
			if err := ctx.Err(); err != nil {
				return payloads, notes, err
			}
		}
		// Reserved FLG bits must be zero; this discards most accidental
		// matches before any allocation.
		if off+3 < len(data) && data[off+3]&0xe0 != 0 {
			off++
			continue
		}
		if !probeELF(&zr, data[off:min(len(data), off+probeInput)]) {
			off++
			continue
		}
		if len(payloads) >= opts.MaxPayloads {
			notes = append(notes, fmt.Sprintf("more than %d embedded ELF payloads; the rest were not analysed", opts.MaxPayloads))
			break
		}
		p, used := readPayload(&zr, data[off:], opts.MaxPayloadBytes)
		p.Offset = int64(off)
		if p.Name == "" {
			p.Name = fmt.Sprintf("gzip@0x%x", off)
		}
		payloads = append(payloads, p)
		if used > 0 {
			off += used
		} else {
			off++
		}
	}
	return payloads, notes, nil
}

// probeELF reports whether window starts a gzip member whose first
// decompressed bytes are the ELF magic. zr is reused across calls.
func probeELF(zr **gzip.Reader, window []byte) bool {
	if err := resetGzip(zr, bytes.NewReader(window)); err != nil {
		return false
	}
	var head [4]byte
	if _, err := io.ReadFull(*zr, head[:]); err != nil {
		return false
	}
	return IsELF(head[:])
}

// resetGzip points *zr at r, allocating it on first use. Multistream is
// off so that one member is read and the next is found by the scan.
func resetGzip(zr **gzip.Reader, r io.Reader) error {
	var err error
	if *zr == nil {
		*zr, err = gzip.NewReader(r)
	} else {
		err = (*zr).Reset(r)
	}
	if err != nil {
		return err
	}
	(*zr).Multistream(false)
	return nil
}

// readPayload decompresses the gzip member at the start of data, up to
// limit bytes, and analyses it. used is how many compressed bytes the
// member took, or 0 when its end is unknown.
func readPayload(zr **gzip.Reader, data []byte, limit int64) (p Payload, used int) {
	// bytes.Reader is an io.ByteReader, so the decompressor reads exactly
	// the member and the reader's position marks its end.
	br := bytes.NewReader(data)
	if err := resetGzip(zr, br); err != nil {
		return Payload{Error: fmt.Sprintf("gzip header: %v", err)}, 0
	}
	p.Name = printable((*zr).Name)
	buf, err := io.ReadAll(io.LimitReader(*zr, limit+1))
	p.Size = int64(len(buf))
	switch {
	case int64(len(buf)) > limit:
		p.Error = fmt.Sprintf("decompresses to more than %d bytes (limit --max-payload-bytes)", limit)
		return p, 0
	case err != nil:
		p.Error = fmt.Sprintf("corrupt gzip stream: %v", err)
		return p, 0
	}
	used = len(data) - br.Len()
	b, err := AnalyzeELF(buf, p.Name)
	if err != nil {
		p.Error = err.Error()
		return p, used
	}
	p.Binary = b
	return p, used
}
