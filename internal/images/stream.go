package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// A file is read once, as a stream, in windows of streamWindow bytes. Of
// an ELF file only the headers and the tables the analysis reads are kept
// (see kept); every byte of it is also searched for the Go build
// information and for embedded gzip members. Memory per file is therefore
// the window plus at most Options.MaxFileBytes, whatever the file's size.
const (
	streamWindow = 256 << 10
	// headBytes is read before anything else; the program headers must
	// lie within it (linkers put them right after the 64-byte file header).
	headBytes = 64 << 10
	// maxBuildInfoCandidates caps the aligned build-info magics kept per
	// file; the real one is the first in a writable segment.
	maxBuildInfoCandidates = 8
	// probeOutput is what a probe decompresses: enough to see a tar
	// header's "ustar" magic at offset 257.
	probeOutput = 262
)

// tracker is the position in one file's stream. Every byte consumed, by
// the scan or by a decompressor reading an embedded member, passes through
// observe, which keeps the prefix and the captured regions.
type tracker struct {
	br   *bufio.Reader
	pos  uint64
	keep uint64 // bytes [0, keep) go to k.prefix
	k    *kept
	one  [1]byte
}

func (t *tracker) observe(b []byte) {
	start := t.pos
	if start < t.keep {
		n := min(uint64(len(b)), t.keep-start)
		t.k.prefix = append(t.k.prefix, b[:n]...)
	}
	end := start + uint64(len(b))
	for _, r := range t.k.regions {
		lo, hi := max(start, r.off+uint64(len(r.data))), min(end, r.end)
		if lo < hi {
			r.data = append(r.data, b[lo-start:hi-start]...)
		}
	}
	t.pos = end
}

// Read and ReadByte make the tracker an io.ByteReader, so that a gzip
// decompressor reading an embedded member consumes exactly the member.
func (t *tracker) Read(p []byte) (int, error) {
	n, err := t.br.Read(p)
	t.observe(p[:n])
	return n, err
}

func (t *tracker) ReadByte() (byte, error) {
	c, err := t.br.ReadByte()
	if err == nil {
		t.one[0] = c
		t.observe(t.one[:])
	}
	return c, err
}

// discard consumes n bytes that are already buffered.
func (t *tracker) discard(n int) {
	if n <= 0 {
		return
	}
	b, _ := t.br.Peek(n)
	t.observe(b)
	_, _ = t.br.Discard(len(b))
}

// capture asks for [off, end) to be kept as it streams past.
func (t *tracker) capture(off, end uint64) {
	if end > off && off >= t.pos {
		t.k.regions = append(t.k.regions, &keptRegion{off: off, end: end})
	}
}

// analyzer holds the buffers reused across the files of one inspection,
// one set per nesting depth, so that reading a layer allocates little.
type analyzer struct {
	ctx  context.Context
	opts Options
	// payloads false skips the embedded-payload scan (AnalyzeELF).
	payloads bool
	readers  []*bufio.Reader
	prefixes [][]byte
	probe    *gzip.Reader
	gz       []*gzip.Reader
}

func newAnalyzer(ctx context.Context, opts Options, payloads bool) *analyzer {
	n := opts.MaxPayloadDepth + 2
	return &analyzer{ctx: ctx, opts: opts, payloads: payloads,
		readers: make([]*bufio.Reader, n), prefixes: make([][]byte, n), gz: make([]*gzip.Reader, n)}
}

// windows recycles stream windows between analyzers: AnalyzeELF and
// ScanEmbedded make one analyzer per call, and a fresh 256 KiB window per
// call would dominate the cost of analysing a small file.
var windows = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamWindow) }}

// reader returns the stream window for depth, reading from r. The
// window's size never changes: scan relies on it exceeding probeInput.
func (a *analyzer) reader(depth int, r io.Reader) *bufio.Reader {
	if a.readers[depth] == nil {
		a.readers[depth] = windows.Get().(*bufio.Reader)
	}
	a.readers[depth].Reset(r)
	return a.readers[depth]
}

// release hands the windows back; the analyzer must not be used after.
func (a *analyzer) release() {
	for i, br := range a.readers {
		if br != nil {
			br.Reset(nil)
			windows.Put(br)
			a.readers[i] = nil
		}
	}
}

// keepCap is the bytes of one file kept at a depth: the full
// MaxFileBytes for a file in a layer, halving per level of nesting.
func (a *analyzer) keepCap(depth int) uint64 {
	return max(uint64(a.opts.MaxFileBytes)>>depth, 1024)
}

// payloadBudget is the decompressed bytes the payloads of one top-level
// file may still produce, across every level of nesting.
type payloadBudget struct{ left, limit int64 }

// fileResult is what streaming one file found.
type fileResult struct {
	bin      *Binary
	payloads []Payload
	notes    []string
}

// analyzeELF reads an ELF file from br (positioned at its first byte) to
// its end. A malformed file is an error; so is one whose tables lie
// beyond the bytes kept (the caller lists it as skipped).
func (a *analyzer) analyzeELF(br *bufio.Reader, name string, depth int, pb *payloadBudget) (*fileResult, error) {
	head, err := br.Peek(headBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &streamError{err}
	}
	h, err := parseELFHeader(head)
	if err != nil {
		return nil, err
	}
	end, ok := h.phdrEnd()
	if !ok || end > uint64(len(head)) {
		return nil, fmt.Errorf("malformed ELF: program headers at offset %d lie outside the first %d bytes", h.phoff, len(head))
	}
	progs := h.parseProgs(head[h.phoff:end])
	capBytes := a.keepCap(depth)
	k := &kept{prefix: a.prefixes[depth][:0]}
	defer func() { a.prefixes[depth] = k.prefix[:0] }()
	t := &tracker{br: br, k: k, keep: end}
	var dyn, interp *progHeader
	var writable []progHeader
	for i := range progs {
		p := &progs[i]
		switch p.typ {
		case elf.PT_DYNAMIC:
			if dyn == nil {
				dyn = p
			}
		case elf.PT_INTERP:
			if interp == nil {
				interp = p
			}
		case elf.PT_LOAD:
			if p.flags&elf.PF_W != 0 {
				writable = append(writable, *p)
			}
		}
	}
	// Keep from the start through the string and version tables. Every
	// linker puts them before the dynamic section, and a linker that
	// separates code (the default of GNU ld since 2.31, and Go's) puts
	// them before the first executable segment too: among the 1,439
	// dynamic ELF files of a Debian /usr/bin and /usr/lib and the Go
	// toolchain, only an .interp lay later, and PT_INTERP is captured on
	// its own. So the prefix ends at whichever comes first; never past
	// capBytes. The dynamic section itself is captured where it lies.
	want := end
	if dyn != nil {
		want = max(want, dyn.end())
		if x, ok := firstExecutable(progs); ok && x > 0 {
			want = max(end, min(want, x))
		}
	}
	t.keep = min(want, capBytes)
	if uint64(cap(k.prefix)) < t.keep {
		k.prefix = make([]byte, 0, t.keep)
	}
	if dyn != nil && dyn.end() > t.keep {
		t.capture(dyn.off, dyn.off+min(dyn.filesz, maxDynamicBytes))
	}
	if interp != nil && interp.end() > t.keep {
		t.capture(interp.off, interp.off+min(interp.filesz, maxStringLen))
	}
	res := &fileResult{}
	scanPayloads := a.payloads && (h.typ == elf.ET_EXEC || h.typ == elf.ET_DYN)
	var biCands []*keptRegion
	onBuildInfo := func(off uint64) {
		if len(biCands) < maxBuildInfoCandidates && (len(writable) == 0 || inSegments(writable, off)) {
			t.capture(off, off+buildInfoWindow)
			biCands = append(biCands, k.regions[len(k.regions)-1])
		}
	}
	if err := a.scan(t, depth, pb, scanPayloads, onBuildInfo, res); err != nil {
		return nil, err
	}
	b, err := a.classify(h, progs, k, dyn, interp, biCands, name, depth)
	if err != nil {
		return nil, err
	}
	res.bin = b
	return res, nil
}

// firstExecutable returns the file offset of the first executable
// PT_LOAD segment.
func firstExecutable(progs []progHeader) (uint64, bool) {
	for _, p := range progs {
		if p.typ == elf.PT_LOAD && p.flags&elf.PF_X != 0 {
			return p.off, true
		}
	}
	return 0, false
}

// inSegments reports whether the file offset lies in one of segs.
func inSegments(segs []progHeader, off uint64) bool {
	for _, s := range segs {
		if off >= s.off && off < s.end() {
			return true
		}
	}
	return false
}

// scan consumes the stream to its end, window by window, reporting
// aligned build-info magics to onBuildInfo (nil: not searched) and
// reading embedded payloads into res when scanPayloads is set.
func (a *analyzer) scan(t *tracker, depth int, pb *payloadBudget, scanPayloads bool, onBuildInfo func(uint64), res *fileResult) error {
	probes := 0
	for iter := 0; ; iter++ {
		if iter%16 == 0 {
			if err := a.ctx.Err(); err != nil {
				return &streamError{err}
			}
		}
		buf, err := t.br.Peek(streamWindow)
		eof := false
		switch {
		case errors.Is(err, io.EOF):
			eof = true
		case err != nil && !errors.Is(err, bufio.ErrBufferFull):
			return &streamError{err}
		}
		// Leave a probe's worth of lookahead unless the stream has ended.
		scanEnd := len(buf)
		if !eof {
			scanEnd = max(0, len(buf)-probeInput)
		}
		cut, hit := scanEnd, false
		if scanPayloads {
			cut, hit = a.findPayload(buf, scanEnd, &probes, res)
			if probes > maxProbes {
				res.notes = append(res.notes, fmt.Sprintf("stopped scanning for embedded gzip after %d candidate headers", maxProbes))
				scanPayloads = false
			}
		}
		if onBuildInfo != nil {
			findAligned(buf[:min(len(buf), cut+len(buildInfoMagic)-1)], cut, t.pos, onBuildInfo)
		}
		t.discard(cut)
		if hit {
			if len(res.payloads) >= a.opts.MaxPayloads {
				note := fmt.Sprintf("more than %d embedded payloads; the rest were not analysed", a.opts.MaxPayloads)
				if !slices.Contains(res.notes, note) {
					res.notes = append(res.notes, note)
				}
				scanPayloads = false
				continue
			}
			a.readMember(t, depth, pb, res)
			continue
		}
		if eof && cut == len(buf) {
			return nil
		}
	}
}

// findAligned reports the 16-byte aligned build-info magics that start
// before limit in b, whose first byte is at file offset base.
func findAligned(b []byte, limit int, base uint64, found func(uint64)) {
	for i := 0; i < limit; {
		j := bytes.Index(b[i:], []byte(buildInfoMagic))
		if j < 0 || i+j >= limit {
			return
		}
		if off := base + uint64(i+j); off%16 == 0 {
			found(off)
		}
		i += j + 1
	}
}

// findPayload returns the index of the first gzip member in buf[:scanEnd]
// that holds an ELF file, a gzip member or a tar archive; or scanEnd.
func (a *analyzer) findPayload(buf []byte, scanEnd int, probes *int, res *fileResult) (int, bool) {
	magic := []byte(gzipMagic)
	for i := 0; i < scanEnd; {
		j := bytes.Index(buf[i:scanEnd], magic)
		if j < 0 {
			break
		}
		i += j
		// Reserved FLG bits must be zero; this discards most accidental
		// matches before any decompression.
		if i+3 < len(buf) && buf[i+3]&0xe0 != 0 {
			i++
			continue
		}
		if *probes++; *probes > maxProbes {
			return scanEnd, false
		}
		if a.probeMember(buf[i:min(len(buf), i+probeInput)]) != contentNone {
			return i, true
		}
		i++
	}
	return scanEnd, false
}

// content kinds a payload may hold.
const (
	contentNone = iota
	contentELF
	contentGzip
	contentTar
)

// sniff says what data (the first bytes of a stream) holds.
func sniff(b []byte) int {
	switch {
	case IsELF(b):
		return contentELF
	case len(b) >= 4 && string(b[:3]) == gzipMagic && b[3]&0xe0 == 0:
		return contentGzip
	case len(b) >= 262 && string(b[257:262]) == "ustar":
		return contentTar
	}
	return contentNone
}

// probeMember decompresses the start of the gzip member at the start of
// window and sniffs it.
func (a *analyzer) probeMember(window []byte) int {
	var err error
	if a.probe == nil {
		a.probe, err = gzip.NewReader(bytes.NewReader(window))
	} else {
		err = a.probe.Reset(bytes.NewReader(window))
	}
	if err != nil {
		return contentNone
	}
	a.probe.Multistream(false)
	var head [probeOutput]byte
	n, _ := io.ReadFull(a.probe, head[:])
	return sniff(head[:n])
}

// budgetReader counts a payload's decompressed bytes against the budget.
type budgetReader struct {
	r    io.Reader
	b    *payloadBudget
	read int64
	over bool
}

func (r *budgetReader) Read(p []byte) (int, error) {
	if r.b.left <= 0 {
		r.over = true
		return 0, fmt.Errorf("%w: embedded payloads decompress to more than %d bytes (--max-payload-bytes)", errLimit, r.b.limit)
	}
	if int64(len(p)) > r.b.left {
		p = p[:r.b.left]
	}
	n, err := r.r.Read(p)
	r.b.left -= int64(n)
	r.read += int64(n)
	return n, err
}

// readMember reads the gzip member at the tracker's position: its content
// is analysed (an ELF file, a nested member, a tar archive) and the member
// is consumed to its end, so the scan resumes right after it.
func (a *analyzer) readMember(t *tracker, depth int, pb *payloadBudget, res *fileResult) {
	off := int64(t.pos)
	fail := func(name, msg string) {
		res.payloads = append(res.payloads, Payload{Name: name, Offset: off, Error: msg})
	}
	if depth >= a.opts.MaxPayloadDepth {
		res.notes = append(res.notes, fmt.Sprintf("gzip member at 0x%x is nested deeper than %d levels (--max-payload-depth); not followed", off, a.opts.MaxPayloadDepth))
		t.discard(1)
		return
	}
	if a.gz[depth] == nil {
		a.gz[depth] = new(gzip.Reader)
	}
	zr := a.gz[depth]
	if err := zr.Reset(t); err != nil {
		fail(fmt.Sprintf("gzip@0x%x", off), fmt.Sprintf("gzip header: %v", err))
		if t.pos == uint64(off) {
			t.discard(1) // the scan must move on
		}
		return
	}
	zr.Multistream(false)
	name := printable(zr.Name)
	if name == "" {
		name = fmt.Sprintf("gzip@0x%x", off)
	}
	br := &budgetReader{r: zr, b: pb}
	sub := a.analyzePayload(br, name, depth+1, pb)
	for i := range sub {
		sub[i].Offset = off
	}
	if _, err := io.Copy(io.Discard, br); err != nil && !hasError(sub) {
		msg := fmt.Sprintf("corrupt gzip stream: %v", err)
		if br.over {
			msg = fmt.Sprintf("decompresses to more than %d bytes (limit --max-payload-bytes, all payloads of a file together)", pb.limit)
		}
		// The member's analysis may be incomplete; the error says why.
		sub = append(sub, Payload{Name: name, Offset: off, Size: br.read, Error: msg})
	}
	for i := range sub {
		if sub[i].Name == name && sub[i].Size == 0 {
			sub[i].Size = br.read
		}
	}
	res.payloads = append(res.payloads, sub...)
	if len(res.payloads) > a.opts.MaxPayloads {
		res.payloads = res.payloads[:a.opts.MaxPayloads]
		res.notes = append(res.notes, fmt.Sprintf("more than %d embedded payloads; the rest were not analysed", a.opts.MaxPayloads))
	}
}

// analyzePayload analyses what a gzip member or tar entry holds: an ELF
// file (its own payloads included, named NAME!INNER), another gzip member,
// or a tar archive whose entries are analysed in turn.
func (a *analyzer) analyzePayload(r io.Reader, name string, depth int, pb *payloadBudget) []Payload {
	br := a.reader(depth, r)
	head, _ := br.Peek(probeOutput)
	switch sniff(head) {
	case contentELF:
		fr, err := a.analyzeELF(br, name, depth, pb)
		if err != nil {
			return []Payload{{Name: name, Error: err.Error()}}
		}
		out := []Payload{{Name: name, Binary: fr.bin}}
		for _, p := range fr.payloads {
			p.Name = name + "!" + p.Name
			out = append(out, p)
		}
		return out
	case contentGzip:
		if depth >= a.opts.MaxPayloadDepth {
			return []Payload{{Name: name, Error: fmt.Sprintf("gzip nested deeper than %d levels (--max-payload-depth); not followed", a.opts.MaxPayloadDepth)}}
		}
		if a.gz[depth] == nil {
			a.gz[depth] = new(gzip.Reader)
		}
		zr := a.gz[depth]
		if err := zr.Reset(br); err != nil {
			return []Payload{{Name: name, Error: fmt.Sprintf("gzip header: %v", err)}}
		}
		inner := printable(zr.Name)
		if inner == "" {
			inner = "gzip"
		}
		return a.analyzePayload(&budgetReader{r: zr, b: pb}, name+"!"+inner, depth+1, pb)
	case contentTar:
		if depth >= a.opts.MaxPayloadDepth {
			return []Payload{{Name: name, Error: fmt.Sprintf("tar nested deeper than %d levels (--max-payload-depth); not followed", a.opts.MaxPayloadDepth)}}
		}
		return a.analyzeTar(br, name, depth, pb)
	}
	return nil
}

// maxTarPayloadEntries caps the entries walked in a tar inside a payload.
const maxTarPayloadEntries = 10_000

func (a *analyzer) analyzeTar(r io.Reader, name string, depth int, pb *payloadBudget) []Payload {
	tr := tar.NewReader(r)
	var out []Payload
	for n := 0; ; n++ {
		if len(out) > a.opts.MaxPayloads {
			return out // the caller notes the cut
		}
		if n >= maxTarPayloadEntries {
			return append(out, Payload{Name: name, Error: fmt.Sprintf("more than %d tar entries; the rest were not analysed", maxTarPayloadEntries)})
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			return append(out, Payload{Name: name, Error: fmt.Sprintf("reading tar: %v", err)})
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Size < 4 {
			continue
		}
		p, ok, err := cleanPath(hdr.Name)
		if err != nil || !ok {
			continue
		}
		out = append(out, a.analyzePayload(tr, name+"!"+printable(p), depth+1, pb)...)
	}
}

func hasError(ps []Payload) bool {
	return slices.ContainsFunc(ps, func(p Payload) bool { return p.Error != "" })
}

// streamError is a failure to read the stream itself (a limit, a corrupt
// layer, the deadline), as opposed to a file that cannot be understood:
// the first ends the inspection, the second skips the file.
type streamError struct{ err error }

func (e *streamError) Error() string { return e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

func isStreamError(err error) bool {
	var se *streamError
	return errors.As(err, &se)
}
