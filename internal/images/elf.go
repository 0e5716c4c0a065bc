package images

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Linkage says how an ELF file gets to its libraries.
const (
	// LinkStatic: no loader, no dynamic section; runs on any kernel.
	LinkStatic = "static"
	// LinkStaticPIE: position independent but self-relocating, no loader.
	LinkStaticPIE = "static-pie"
	// LinkDynamicNoLibs: has a loader (PT_INTERP) but no DT_NEEDED, as a
	// CGO_ENABLED=0 -buildmode=pie Go binary: the loader file must exist on
	// the host, but there is no glibc minimum.
	LinkDynamicNoLibs = "dynamic-no-libs"
	// LinkGlibc: needs glibc, with versioned symbols (MinGlibc is set).
	LinkGlibc = "dynamic-glibc"
	// LinkGlibcUnversioned: needs glibc but imports no versioned symbols,
	// as Go's fakecgo/purego hybrids do; any glibc with the loader works.
	LinkGlibcUnversioned = "dynamic-glibc-unversioned"
	// LinkMusl: linked against musl libc.
	LinkMusl = "dynamic-musl"
	// LinkDynamicOther: dynamic, but neither glibc nor musl was recognised.
	LinkDynamicOther = "dynamic-other"
)

// Class is the one-word verdict shown per file. For non-Go files it is the
// linkage; Go binaries and shared libraries get their own classes.
const (
	// ClassGoStatic: a Go binary with no loader (CGO_ENABLED=0).
	ClassGoStatic = "go-static"
	// ClassGoCgo: a Go binary built with CGO_ENABLED=1, dynamically linked.
	ClassGoCgo = "go-cgo"
	// ClassGoDynamic: a Go binary without cgo that still has a loader
	// (-buildmode=pie, or fakecgo/purego imports).
	ClassGoDynamic = "go-dynamic"
	// ClassGoSystemCrypto: a Microsoft Go binary whose crypto loads
	// libcrypto with dlopen at run time, which no DT_NEEDED entry shows.
	ClassGoSystemCrypto = "go-systemcrypto"
	// ClassSharedLibrary: a shared object rather than a program.
	ClassSharedLibrary = "shared-library"
	// ClassObject: a relocatable object or core dump, not run directly.
	ClassObject = "object"
)

// ErrNotELF is returned by AnalyzeELF for data without the ELF magic.
var ErrNotELF = errors.New("not an ELF file")

// elfMagic is the first four bytes of every ELF file.
const elfMagic = "\x7fELF"

// IsELF reports whether b starts with the ELF magic.
func IsELF(b []byte) bool { return len(b) >= 4 && string(b[:4]) == elfMagic }

// Binary is what AnalyzeELF learned about one ELF file.
type Binary struct {
	// Class is the verdict: one of the Class* or Link* constants.
	Class string `json:"class"`
	// Linkage is one of the Link* constants (empty for objects).
	Linkage string `json:"linkage,omitempty"`
	// Type is the ELF type: exec, dyn, rel or core.
	Type string `json:"type"`
	// Arch is the machine in GOARCH terms (amd64, arm64, ...).
	Arch string `json:"arch"`
	// Interpreter is the PT_INTERP loader path, if any.
	Interpreter string `json:"interpreter,omitempty"`
	// Needed lists the DT_NEEDED libraries.
	Needed []string `json:"needed,omitempty"`
	// SONAME is the DT_SONAME of a shared library.
	SONAME string `json:"soname,omitempty"`
	// MinGlibc is the highest GLIBC_x.y version the file needs, e.g. "2.34".
	MinGlibc string `json:"minGlibc,omitempty"`
	// GlibcVersions lists every GLIBC_x.y version needed, ascending.
	GlibcVersions []string `json:"glibcVersions,omitempty"`
	// GlibcxxVersions lists every GLIBCXX_x.y.z version needed from
	// libstdc++.so.6, ascending; MinGlibcxx is the highest.
	GlibcxxVersions []string `json:"glibcxxVersions,omitempty"`
	MinGlibcxx      string   `json:"minGlibcxx,omitempty"`
	// MinCxxabi is the highest CXXABI_x.y version needed from libstdc++.
	MinCxxabi string `json:"minCxxabi,omitempty"`
	// ProvidesGlibc is set on glibc's own libc.so.6: the highest GLIBC_x.y
	// version it defines, i.e. the glibc release the image ships.
	ProvidesGlibc string `json:"providesGlibc,omitempty"`
	// Go describes a Go binary's build; nil for other files.
	Go *GoBuild `json:"go,omitempty"`
	// HostNeeds lists what the file needs from wherever it runs, in words.
	HostNeeds []string `json:"hostNeeds,omitempty"`
}

// GoBuild is the part of a Go binary's build information that decides
// what it needs at run time.
type GoBuild struct {
	// Version is the toolchain, e.g. go1.26.8 or go1.26.3-X:systemcrypto.
	Version string `json:"version"`
	// Path is the main package path.
	Path string `json:"path,omitempty"`
	// CGO is the CGO_ENABLED setting, "0" or "1" (empty if not recorded).
	CGO string `json:"cgo,omitempty"`
	// Experiment is the GOEXPERIMENT setting.
	Experiment string `json:"experiment,omitempty"`
	// BuildMode is the -buildmode setting.
	BuildMode string `json:"buildmode,omitempty"`
	// Toolset is microsoft_toolset_version for a Microsoft Go build.
	Toolset string `json:"toolset,omitempty"`
	// SystemCrypto is true when crypto goes to the system's OpenSSL
	// through dlopen (Microsoft Go systemcrypto/opensslcrypto).
	SystemCrypto bool `json:"systemCrypto,omitempty"`
}

// IsExecutable reports whether the file is a program rather than a library
// or an object.
func (b *Binary) IsExecutable() bool {
	return b.Class != ClassSharedLibrary && b.Class != ClassObject
}

// sharedObjectName matches file names of shared libraries: libx.so, libx.so.6.
var sharedObjectName = regexp.MustCompile(`\.so(\.[0-9.]+)?$`)

// AnalyzeELF classifies the ELF file held in data. name is the file's name
// (only its base is used) and helps tell a shared library from a PIE
// program. It returns ErrNotELF for data without the magic and a wrapped
// error for malformed files; it never panics. Embedded payloads are not
// looked for (see ScanEmbedded); Inspect does both in one pass.
func AnalyzeELF(data []byte, name string) (*Binary, error) {
	if !IsELF(data) {
		return nil, ErrNotELF
	}
	opts := Options{MaxFileBytes: int64(len(data))}.withDefaults()
	a := newAnalyzer(context.Background(), opts, false)
	defer a.release()
	fr, err := a.analyzeELF(a.reader(0, bytes.NewReader(data)), name, 0, &payloadBudget{})
	if err != nil {
		return nil, err
	}
	return fr.bin, nil
}

// classify turns what the stream kept into the analysis.
func (a *analyzer) classify(h *elfHeader, progs []progHeader, k *kept, dyn, interp *progHeader, buildInfo []*keptRegion, name string, depth int) (*Binary, error) {
	b := &Binary{Type: elfType(h.typ), Arch: goArch(h.machine)}
	if interp != nil {
		s, ok := k.slice(interp.off, min(interp.filesz, maxStringLen))
		if !ok {
			return nil, fmt.Errorf("malformed ELF: PT_INTERP at offset %d (%d bytes) lies outside the file", interp.off, interp.filesz)
		}
		b.Interpreter = printable(string(bytes.TrimRight(s, "\x00")))
	}
	if dyn != nil {
		info, err := parseDynamic(h, progs, k, *dyn)
		switch {
		case errors.Is(err, errNotKept):
			return nil, fmt.Errorf("%w: %w; it lies beyond the %d bytes kept per file (--max-file-bytes)", errLimit, err, a.keepCap(depth))
		case err != nil:
			return nil, err
		}
		b.Needed, b.SONAME = info.needed, info.soname
		var all []string
		for _, f := range info.needOrder {
			all = append(all, info.needs[f]...)
		}
		b.GlibcVersions = versionsWithPrefix(all, "GLIBC_")
		b.GlibcxxVersions = versionsWithPrefix(all, "GLIBCXX_")
		if n := len(b.GlibcVersions); n > 0 {
			b.MinGlibc = b.GlibcVersions[n-1]
		}
		if n := len(b.GlibcxxVersions); n > 0 {
			b.MinGlibcxx = b.GlibcxxVersions[n-1]
		}
		if cx := versionsWithPrefix(all, "CXXABI_"); len(cx) > 0 {
			b.MinCxxabi = cx[len(cx)-1]
		}
		if strings.HasPrefix(b.SONAME, "libc.so") {
			if defs := versionsWithPrefix(info.defs, "GLIBC_"); len(defs) > 0 {
				b.ProvidesGlibc = defs[len(defs)-1]
			}
		}
	}
	for _, r := range buildInfo {
		if g, ok := parseBuildInfo(r.data); ok {
			b.Go = g
			break
		}
	}
	b.Linkage = linkage(h.typ, b, dyn != nil)
	b.Class = classify(h.typ, b, path.Base(name))
	b.HostNeeds = hostNeeds(b)
	return b, nil
}

func elfType(t elf.Type) string {
	switch t {
	case elf.ET_EXEC:
		return "exec"
	case elf.ET_DYN:
		return "dyn"
	case elf.ET_REL:
		return "rel"
	case elf.ET_CORE:
		return "core"
	}
	return fmt.Sprintf("0x%x", uint16(t))
}

// goArch names a machine the way GOARCH and node.status.nodeInfo do.
func goArch(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "amd64"
	case elf.EM_AARCH64:
		return "arm64"
	case elf.EM_386:
		return "386"
	case elf.EM_ARM:
		return "arm"
	case elf.EM_PPC64:
		return "ppc64le"
	case elf.EM_S390:
		return "s390x"
	case elf.EM_RISCV:
		return "riscv64"
	case elf.EM_LOONGARCH:
		return "loong64"
	case elf.EM_MIPS:
		return "mips"
	}
	return strings.ToLower(strings.TrimPrefix(m.String(), "EM_"))
}

// validVersion accepts dotted decimal versions such as 2.34 or 2.2.5.
func validVersion(v string) bool {
	if v == "" {
		return false
	}
	for _, p := range strings.Split(v, ".") {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return false
		}
	}
	return true
}

// CompareVersions compares dotted decimal versions numerically, so that
// 2.34 > 2.4 and 2.2.5 > 2.2. Non-numeric parts compare as 0.
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y uint64
		if i < len(as) {
			x, _ = strconv.ParseUint(as[i], 10, 64)
		}
		if i < len(bs) {
			y, _ = strconv.ParseUint(bs[i], 10, 64)
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// goVersionExperiments returns the experiments a toolchain version string
// carries: "go1.26.8-X:boringcrypto" or, before go1.26, "go1.25.0 X:opensslcrypto".
func goVersionExperiments(v string) string {
	if i := strings.Index(v, "X:"); i >= 0 {
		return v[i+2:]
	}
	return ""
}

// systemCryptoExperiment reports whether a GOEXPERIMENT list turns on a
// crypto backend that dlopens the system's libcrypto.
func systemCryptoExperiment(list string) bool {
	on := false
	for _, e := range strings.Split(list, ",") {
		switch strings.TrimSpace(e) {
		case "systemcrypto", "opensslcrypto", "ms_nocgo_opensslcrypto":
			on = true
		case "nosystemcrypto", "noopensslcrypto":
			return false
		}
	}
	return on
}

func isGlibcLoader(interp string) bool {
	base := path.Base(interp)
	return strings.HasPrefix(base, "ld-linux") || base == "ld.so.1" || strings.HasPrefix(base, "ld64.so")
}

func isMusl(b *Binary) bool {
	if strings.Contains(path.Base(b.Interpreter), "ld-musl") {
		return true
	}
	for _, n := range b.Needed {
		if strings.HasPrefix(n, "libc.musl") {
			return true
		}
	}
	return false
}

func needsGlibc(b *Binary) bool {
	if len(b.GlibcVersions) > 0 || isGlibcLoader(b.Interpreter) {
		return true
	}
	for _, n := range b.Needed {
		if n == "libc.so.6" || n == "libpthread.so.0" || n == "libdl.so.2" || n == "libm.so.6" {
			return true
		}
	}
	return false
}

func linkage(t elf.Type, b *Binary, hasDynamic bool) string {
	if t != elf.ET_EXEC && t != elf.ET_DYN {
		return ""
	}
	switch {
	case b.Interpreter == "" && len(b.Needed) == 0:
		if t == elf.ET_DYN && hasDynamic {
			return LinkStaticPIE
		}
		return LinkStatic
	case isMusl(b):
		return LinkMusl
	case len(b.GlibcVersions) > 0:
		return LinkGlibc
	case needsGlibc(b) && len(b.Needed) > 0:
		return LinkGlibcUnversioned
	case len(b.Needed) == 0:
		return LinkDynamicNoLibs
	}
	return LinkDynamicOther
}

func classify(t elf.Type, b *Binary, base string) string {
	if t != elf.ET_EXEC && t != elf.ET_DYN {
		return ClassObject
	}
	if t == elf.ET_DYN && b.Go == nil && (b.SONAME != "" || sharedObjectName.MatchString(base)) {
		// glibc's libc.so.6 has a PT_INTERP so it can print its version when
		// run, but it is still a library; its SONAME says so.
		return ClassSharedLibrary
	}
	if b.Go == nil {
		return b.Linkage
	}
	switch {
	case b.Go.BuildMode == "c-shared" || b.Go.BuildMode == "plugin":
		return ClassSharedLibrary
	case b.Go.SystemCrypto:
		return ClassGoSystemCrypto
	case b.Linkage == LinkStatic || b.Linkage == LinkStaticPIE:
		return ClassGoStatic
	case b.Go.CGO == "1":
		return ClassGoCgo
	}
	return ClassGoDynamic
}

// hostNeeds spells out what the file needs where it runs — in its own
// container, or on the host when an installer copies it there.
func hostNeeds(b *Binary) []string {
	var n []string
	if b.Linkage == LinkStatic || b.Linkage == LinkStaticPIE {
		if b.Go == nil || !b.Go.SystemCrypto {
			return []string{"nothing from the host (no loader, no libc)"}
		}
	}
	if b.Interpreter != "" {
		n = append(n, "loader "+b.Interpreter)
	}
	switch b.Linkage {
	case LinkGlibc:
		n = append(n, "glibc >= "+b.MinGlibc)
	case LinkGlibcUnversioned:
		n = append(n, "glibc (any version)")
	case LinkMusl:
		// A glibc host has no musl loader: the kernel cannot start the
		// program at all ("no such file or directory").
		n = append(n, "musl libc and its loader, which glibc hosts do not have")
	}
	if b.MinGlibcxx != "" || b.MinCxxabi != "" {
		s := "libstdc++.so.6 with"
		if b.MinGlibcxx != "" {
			s += " GLIBCXX_" + b.MinGlibcxx
		}
		if b.MinCxxabi != "" {
			s += " CXXABI_" + b.MinCxxabi
		}
		n = append(n, s)
	}
	if b.Go != nil && b.Go.SystemCrypto {
		n = append(n, "libcrypto.so.3 or libcrypto.so.1.1 via dlopen (Go systemcrypto; not in DT_NEEDED)")
	}
	return n
}

// printable replaces control and invalid characters so that names taken
// from hostile files cannot drive a terminal, and bounds their length.
func printable(s string) string {
	const maxLen = 512
	if len(s) > maxLen {
		s = s[:maxLen] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffd {
			return '?'
		}
		return r
	}, s)
}

func containsString(s []string, v string) bool { return slices.Contains(s, v) }

func sortVersions(vs []string) { slices.SortFunc(vs, CompareVersions) }
