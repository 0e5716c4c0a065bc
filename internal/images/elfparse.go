package images

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// The parsers here read an ELF file the way the dynamic loader does: from
// the file header and the program headers, never from the section headers.
// Section headers sit at the end of a file and are optional; the program
// headers sit at the start, so a file can be understood from a stream
// while keeping only its first bytes and a few tables (see stream.go).
// Every offset and count comes from a hostile file, so every read is
// bounds-checked and every loop is capped.

// errNotKept marks a table that lies outside the bytes kept of a file.
var errNotKept = errors.New("not kept")

// elfHeader is the part of the ELF file header the analysis needs.
type elfHeader struct {
	is64      bool
	bo        binary.ByteOrder
	typ       elf.Type
	machine   elf.Machine
	phoff     uint64
	phentsize uint64
	phnum     uint64
}

// parseELFHeader reads the file header from b, the start of the file.
func parseELFHeader(b []byte) (*elfHeader, error) {
	if !IsELF(b) {
		return nil, ErrNotELF
	}
	if len(b) < 52 {
		return nil, errors.New("malformed ELF: truncated file header")
	}
	h := &elfHeader{}
	switch elf.Class(b[elf.EI_CLASS]) {
	case elf.ELFCLASS32:
	case elf.ELFCLASS64:
		h.is64 = true
		if len(b) < 64 {
			return nil, errors.New("malformed ELF: truncated file header")
		}
	default:
		return nil, fmt.Errorf("malformed ELF: unknown class %d", b[elf.EI_CLASS])
	}
	switch elf.Data(b[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		h.bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		h.bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("malformed ELF: unknown data encoding %d", b[elf.EI_DATA])
	}
	h.typ = elf.Type(h.bo.Uint16(b[16:]))
	h.machine = elf.Machine(h.bo.Uint16(b[18:]))
	minEnt := uint64(32)
	if h.is64 {
		h.phoff = h.bo.Uint64(b[32:])
		h.phentsize = uint64(h.bo.Uint16(b[54:]))
		h.phnum = uint64(h.bo.Uint16(b[56:]))
		minEnt = 56
	} else {
		h.phoff = uint64(h.bo.Uint32(b[28:]))
		h.phentsize = uint64(h.bo.Uint16(b[42:]))
		h.phnum = uint64(h.bo.Uint16(b[44:]))
	}
	if h.phnum == 0xffff {
		// PN_XNUM: the real count is in section header 0, which a stream
		// reaches last. No linker writes this many program headers.
		return nil, errors.New("malformed ELF: extended program header count")
	}
	if h.phnum > 0 && h.phentsize < minEnt {
		return nil, fmt.Errorf("malformed ELF: program header entry size %d", h.phentsize)
	}
	return h, nil
}

// phdrEnd is where the program header table ends; ok is false on overflow.
func (h *elfHeader) phdrEnd() (uint64, bool) {
	end := h.phoff + h.phnum*h.phentsize
	return end, end >= h.phoff
}

// progHeader is one program header.
type progHeader struct {
	typ    elf.ProgType
	flags  elf.ProgFlag
	off    uint64
	vaddr  uint64
	filesz uint64
}

func (p progHeader) end() uint64 {
	if e := p.off + p.filesz; e >= p.off {
		return e
	}
	return ^uint64(0)
}

// parseProgs reads the program header table; b holds exactly the table.
func (h *elfHeader) parseProgs(b []byte) []progHeader {
	ps := make([]progHeader, 0, h.phnum)
	for i := uint64(0); i < h.phnum; i++ {
		e := b[i*h.phentsize:]
		var p progHeader
		p.typ = elf.ProgType(h.bo.Uint32(e))
		if h.is64 {
			p.flags = elf.ProgFlag(h.bo.Uint32(e[4:]))
			p.off = h.bo.Uint64(e[8:])
			p.vaddr = h.bo.Uint64(e[16:])
			p.filesz = h.bo.Uint64(e[32:])
		} else {
			p.off = uint64(h.bo.Uint32(e[4:]))
			p.vaddr = uint64(h.bo.Uint32(e[8:]))
			p.filesz = uint64(h.bo.Uint32(e[16:]))
			p.flags = elf.ProgFlag(h.bo.Uint32(e[24:]))
		}
		ps = append(ps, p)
	}
	return ps
}

// kept is what the stream reader kept of a file: a prefix and a few
// regions captured further in.
type kept struct {
	prefix  []byte
	regions []*keptRegion
}

type keptRegion struct {
	off, end uint64 // [off, end) in the file
	data     []byte // what has arrived so far, from off
}

// from returns the kept bytes from off to the end of the kept span that
// holds off, or nil.
func (k *kept) from(off uint64) []byte {
	if off < uint64(len(k.prefix)) {
		return k.prefix[off:]
	}
	for _, r := range k.regions {
		if off >= r.off && off < r.off+uint64(len(r.data)) {
			return r.data[off-r.off:]
		}
	}
	return nil
}

// slice returns the n kept bytes at off, or false when they are not kept.
func (k *kept) slice(off, n uint64) ([]byte, bool) {
	b := k.from(off)
	if n == 0 {
		return nil, off <= uint64(len(k.prefix)) || b != nil
	}
	if uint64(len(b)) < n {
		return nil, false
	}
	return b[:n], true
}

// Dynamic section tags and flags read here (from elf.h).
const (
	maxDynamicBytes = 1 << 20 // a real .dynamic holds a few dozen entries
	maxVersionItems = 1 << 14 // version needs and definitions walked per file
	maxStringLen    = 4096
	df1PIE          = 0x08000000 // DF_1_PIE in DT_FLAGS_1
)

// dynInfo is what the dynamic section and the tables it points to say.
type dynInfo struct {
	needed []string
	soname string
	// needs maps a library (vn_file) to the version names needed from it.
	needs     map[string][]string
	needOrder []string
	defs      []string
	pie       bool
}

// parseDynamic reads the dynamic segment and the string and version tables
// it points to. Addresses are mapped to file offsets through the PT_LOAD
// segments, as the loader maps them.
func parseDynamic(h *elfHeader, progs []progHeader, k *kept, dyn progHeader) (*dynInfo, error) {
	size := min(dyn.filesz, maxDynamicBytes)
	d, ok := k.slice(dyn.off, size)
	if !ok {
		return nil, fmt.Errorf("%w: dynamic section at offset %d", errNotKept, dyn.off)
	}
	entSize := uint64(8)
	if h.is64 {
		entSize = 16
	}
	var needed []uint64
	var strtab, strsz, soname, verneed, verneednum, verdef, verdefnum uint64
	var haveStrtab, haveSoname bool
	info := &dynInfo{needs: map[string][]string{}}
	for i := uint64(0); i+entSize <= uint64(len(d)); i += entSize {
		var tag, val uint64
		if h.is64 {
			tag, val = h.bo.Uint64(d[i:]), h.bo.Uint64(d[i+8:])
		} else {
			tag, val = uint64(h.bo.Uint32(d[i:])), uint64(h.bo.Uint32(d[i+4:]))
		}
		switch elf.DynTag(tag) {
		case elf.DT_NULL:
			i = uint64(len(d))
		case elf.DT_NEEDED:
			if len(needed) < maxVersionItems {
				needed = append(needed, val)
			}
		case elf.DT_STRTAB:
			strtab, haveStrtab = val, true
		case elf.DT_STRSZ:
			strsz = val
		case elf.DT_SONAME:
			soname, haveSoname = val, true
		case elf.DT_VERNEED:
			verneed = val
		case elf.DT_VERNEEDNUM:
			verneednum = val
		case elf.DT_VERDEF:
			verdef = val
		case elf.DT_VERDEFNUM:
			verdefnum = val
		case elf.DT_FLAGS_1:
			info.pie = val&df1PIE != 0
		}
	}
	if !haveStrtab {
		if len(needed) > 0 || haveSoname || verneednum > 0 {
			return nil, errors.New("malformed ELF: dynamic section names strings but has no DT_STRTAB")
		}
		return info, nil
	}
	strOff, ok := addrToOffset(progs, strtab)
	if !ok {
		return nil, fmt.Errorf("malformed ELF: DT_STRTAB 0x%x is in no loaded segment", strtab)
	}
	strs, ok := k.slice(strOff, strsz)
	if !ok {
		return nil, fmt.Errorf("%w: dynamic string table at offset %d (%d bytes)", errNotKept, strOff, strsz)
	}
	str := func(o uint64) string {
		if o >= uint64(len(strs)) {
			return ""
		}
		s := strs[o:min(uint64(len(strs)), o+maxStringLen)]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return printable(string(s))
	}
	for _, o := range needed {
		info.needed = append(info.needed, str(o))
	}
	if haveSoname {
		info.soname = str(soname)
	}
	if verneednum > 0 {
		if err := readVerneed(h, progs, k, verneed, verneednum, str, info); err != nil {
			return nil, err
		}
	}
	if verdefnum > 0 {
		if err := readVerdef(h, progs, k, verdef, verdefnum, str, info); err != nil {
			return nil, err
		}
	}
	return info, nil
}

// readVerneed walks Elf_Verneed entries (16 bytes: version, count, file,
// aux, next) and their Elf_Vernaux entries (16 bytes: hash, flags, other,
// name, next); the layout is the same for 32- and 64-bit files.
func readVerneed(h *elfHeader, progs []progHeader, k *kept, addr, num uint64, str func(uint64) string, info *dynInfo) error {
	off, ok := addrToOffset(progs, addr)
	if !ok {
		return fmt.Errorf("malformed ELF: DT_VERNEED 0x%x is in no loaded segment", addr)
	}
	items := 0
	for n := uint64(0); n < num; n++ {
		e, ok := k.slice(off, 16)
		if !ok {
			return fmt.Errorf("%w: version needs at offset %d", errNotKept, off)
		}
		cnt, file, aux, next := uint64(h.bo.Uint16(e[2:])), str(uint64(h.bo.Uint32(e[4:]))), uint64(h.bo.Uint32(e[8:])), uint64(h.bo.Uint32(e[12:]))
		if _, seen := info.needs[file]; !seen {
			info.needOrder = append(info.needOrder, file)
			info.needs[file] = nil
		}
		a := off + aux
		for j := uint64(0); j < cnt; j++ {
			if items++; items > maxVersionItems {
				return errors.New("malformed ELF: too many version needs")
			}
			x, ok := k.slice(a, 16)
			if !ok {
				return fmt.Errorf("%w: version need entry at offset %d", errNotKept, a)
			}
			info.needs[file] = append(info.needs[file], str(uint64(h.bo.Uint32(x[8:]))))
			vnext := uint64(h.bo.Uint32(x[12:]))
			if vnext == 0 {
				break
			}
			a += vnext
		}
		if next == 0 {
			break
		}
		off += next
	}
	return nil
}

// readVerdef walks Elf_Verdef entries (20 bytes: version, flags, index,
// count, hash, aux, next); the first Elf_Verdaux (name, next) of each
// names the version defined.
func readVerdef(h *elfHeader, progs []progHeader, k *kept, addr, num uint64, str func(uint64) string, info *dynInfo) error {
	off, ok := addrToOffset(progs, addr)
	if !ok {
		return fmt.Errorf("malformed ELF: DT_VERDEF 0x%x is in no loaded segment", addr)
	}
	for n := uint64(0); n < num && n < maxVersionItems; n++ {
		e, ok := k.slice(off, 20)
		if !ok {
			return fmt.Errorf("%w: version definitions at offset %d", errNotKept, off)
		}
		aux, next := uint64(h.bo.Uint32(e[12:])), uint64(h.bo.Uint32(e[16:]))
		if x, ok := k.slice(off+aux, 8); ok {
			info.defs = append(info.defs, str(uint64(h.bo.Uint32(x))))
		}
		if next == 0 {
			break
		}
		off += next
	}
	return nil
}

// addrToOffset maps a virtual address to a file offset through PT_LOAD.
func addrToOffset(progs []progHeader, addr uint64) (uint64, bool) {
	for _, p := range progs {
		if p.typ == elf.PT_LOAD && addr >= p.vaddr && addr-p.vaddr < p.filesz {
			return p.off + (addr - p.vaddr), true
		}
	}
	return 0, false
}

// buildInfoMagic starts a Go binary's build information, which the Go
// linker places 16-byte aligned in a writable segment (.go.buildinfo).
const buildInfoMagic = "\xff Go buildinf:"

// buildInfoWindow is how much is kept after a candidate magic: the header,
// the version and the module and settings text.
const buildInfoWindow = 64 << 10

// parseBuildInfo decodes build information at the start of b. Since Go
// 1.18 the header (32 bytes: magic, pointer size, flags) is followed by
// two varint-length strings, the toolchain version and the module info,
// which is framed by 16-byte sentinels. Older binaries hold pointers
// instead; they are recognised as Go but their settings are not read.
func parseBuildInfo(b []byte) (*GoBuild, bool) {
	if len(b) < 32 || string(b[:len(buildInfoMagic)]) != buildInfoMagic {
		return nil, false
	}
	ptrSize, flags := b[14], b[15]
	if flags&2 == 0 {
		if ptrSize != 4 && ptrSize != 8 {
			return nil, false
		}
		return &GoBuild{Version: "go (before go1.18; build settings not read)"}, true
	}
	rest := b[32:]
	vers, rest, ok := varintString(rest)
	if !ok || vers == "" {
		return nil, false
	}
	mod, _, ok := varintString(rest)
	if !ok {
		return nil, false
	}
	if len(mod) >= 33 && mod[len(mod)-17] == '\n' {
		mod = mod[16 : len(mod)-16]
	} else {
		mod = ""
	}
	bi, err := debug.ParseBuildInfo(mod)
	if err != nil {
		bi = &debug.BuildInfo{}
	}
	bi.GoVersion = vers
	return goBuildFrom(bi), true
}

func varintString(b []byte) (string, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", nil, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}

// goBuildFrom keeps the settings that decide what a Go binary needs.
func goBuildFrom(bi *debug.BuildInfo) *GoBuild {
	g := &GoBuild{Version: printable(bi.GoVersion), Path: printable(bi.Path)}
	msCrypto := ""
	for _, s := range bi.Settings {
		switch s.Key {
		case "CGO_ENABLED":
			g.CGO = printable(s.Value)
		case "GOEXPERIMENT":
			g.Experiment = printable(s.Value)
		case "-buildmode":
			g.BuildMode = printable(s.Value)
		case "microsoft_toolset_version":
			g.Toolset = printable(s.Value)
		case "microsoft_systemcrypto":
			msCrypto = s.Value
		}
	}
	g.SystemCrypto = msCrypto == "1" || systemCryptoExperiment(g.Experiment) || systemCryptoExperiment(goVersionExperiments(g.Version))
	return g
}

// versionsWithPrefix returns the dotted versions named PREFIX_x.y in
// names, ascending and unique.
func versionsWithPrefix(names []string, prefix string) []string {
	var vs []string
	for _, n := range names {
		if v, ok := strings.CutPrefix(n, prefix); ok && validVersion(v) && !containsString(vs, v) {
			vs = append(vs, v)
		}
	}
	sortVersions(vs)
	return vs
}
