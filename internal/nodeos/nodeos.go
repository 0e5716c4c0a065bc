// Package nodeos tells what operating system a Kubernetes node runs from the
// two strings its kubelet reports (status.nodeInfo.osImage and
// kernelVersion): the distribution and release, the C library and its glibc
// version, and when the vendor stops standard support. The facts live in an
// embedded data table, os-images.yaml, with their sources; an osImage the
// table does not list is reported unknown, never guessed.
//
// Managed services support their own node images of a release for a
// different time than the OS vendor does. ProviderOf tells the service
// from a node's spec.providerID and labels, and ProviderWindow gives that
// service's window for the distro and version Identify reported:
//
//	info := nodeos.Identify(n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion)
//	p := nodeos.ProviderOf(n.Spec.ProviderID, n.Labels)
//	if w, ok := nodeos.ProviderWindow(p, info.Distro, info.Version); ok {
//		// w.EndOfSupport: no more node images or patches from the service;
//		// w.ImagesRemoved (when set): scaling and reimaging fail.
//	}
//
// No window means unknown, not supported forever. Both tables refuse an
// entry that was not verified at an https source on a recorded day.
package nodeos

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// Libc names the C library of a node's host userland.
type Libc string

// C libraries a node OS may have.
const (
	LibcUnknown Libc = ""
	LibcGlibc   Libc = "glibc"
	LibcMusl    Libc = "musl"
	// LibcNone is for hosts where the question does not apply (Windows).
	LibcNone Libc = "none"
)

// Version is a glibc version such as 2.31. The zero value means unknown.
type Version struct {
	Major, Minor int
}

// ParseVersion reads "2.34" or a symbol version such as "GLIBC_2.34". A
// third component ("2.28.1") is ignored: glibc symbol versions stop at the
// minor release that matters for compatibility.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "GLIBC_")
	parts := strings.Split(t, ".")
	if len(parts) < 2 {
		return Version{}, fmt.Errorf("glibc version %q: want major.minor", s)
	}
	major, err := strconv.Atoi(parts[0])
	if err != nil || major < 0 {
		return Version{}, fmt.Errorf("glibc version %q: bad major", s)
	}
	minor, err := strconv.Atoi(parts[1])
	if err != nil || minor < 0 {
		return Version{}, fmt.Errorf("glibc version %q: bad minor", s)
	}
	if major == 0 && minor == 0 {
		return Version{}, fmt.Errorf("glibc version %q: zero", s)
	}
	return Version{Major: major, Minor: minor}, nil
}

// IsZero reports whether the version is unknown.
func (v Version) IsZero() bool { return v == Version{} }

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than o.
func (v Version) Compare(o Version) int {
	switch {
	case v.Major != o.Major:
		return cmpInt(v.Major, o.Major)
	default:
		return cmpInt(v.Minor, o.Minor)
	}
}

// Less reports whether v is older than o.
func (v Version) Less(o Version) bool { return v.Compare(o) < 0 }

// String prints "2.31", or "unknown" for the zero version.
func (v Version) String() string {
	if v.IsZero() {
		return "unknown"
	}
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Info is what the table says about one node's OS.
type Info struct {
	// ID is the table entry that matched, e.g. "ubuntu-20.04".
	ID string
	// Distro is the distribution, e.g. "Ubuntu".
	Distro string
	// Version is the release, e.g. "20.04"; empty when the osImage does not
	// say (Container-Optimized OS).
	Version string
	Libc    Libc
	// Glibc is the host's glibc; zero when unknown or when the host has no
	// glibc (see Libc).
	Glibc Version
	// EndOfStandardSupport is the last day of regular security updates;
	// zero when unknown or not tabled.
	EndOfStandardSupport time.Time
	// EndOfExtendedSupport is the last day of paid or volunteer extended
	// support (Ubuntu Pro, Debian LTS); zero when unknown.
	EndOfExtendedSupport time.Time
	// Sources are where the facts come from.
	Sources []string
	// Known is false when no table entry matched; every other field is then
	// empty.
	Known bool
}

// Name is the distribution and release for messages, e.g. "Ubuntu 20.04".
func (i Info) Name() string {
	if i.Version == "" {
		return i.Distro
	}
	return i.Distro + " " + i.Version
}

// Identify looks a node's osImage and kernelVersion up in the table.
func Identify(osImage, kernelVersion string) Info {
	t, err := table()
	if err != nil {
		// The embedded table is validated by the package's tests; if it
		// were broken, nothing is known rather than something wrong.
		return Info{}
	}
	return t.identify(osImage, kernelVersion)
}

// Entries returns every entry of the OS table, in match order, for tests and
// documentation.
func Entries() ([]Entry, error) {
	t, err := table()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(t))
	for i, e := range t {
		out[i] = e.Entry
	}
	return out, nil
}

// Entry is one row of os-images.yaml.
type Entry struct {
	ID                   string `json:"id"`
	Distro               string `json:"distro"`
	Version              string `json:"version,omitempty"`
	OSImage              string `json:"osImage"`
	Kernel               string `json:"kernel,omitempty"`
	Libc                 Libc   `json:"libc"`
	Glibc                string `json:"glibc,omitempty"`
	EndOfStandardSupport string `json:"endOfStandardSupport,omitempty"`
	EndOfExtendedSupport string `json:"endOfExtendedSupport,omitempty"`
	// Evidence is always "verified": every fact was read in a listed
	// source. The loader refuses anything else.
	Evidence string `json:"evidence"`
	// Checked is the day (YYYY-MM-DD) the entry was last read at its sources.
	Checked string   `json:"checked"`
	Sources []string `json:"sources"`
	Note    string   `json:"note,omitempty"`
}

//go:embed os-images.yaml
var osImagesYAML []byte

// table parses the embedded file once; the result is read-only after that.
var table = sync.OnceValues(func() (osTable, error) { return parseTable(osImagesYAML) })

type compiled struct {
	Entry
	osImage *regexp.Regexp
	kernel  *regexp.Regexp
	glibc   Version
	eoss    time.Time
	eoes    time.Time
}

type osTable []compiled

func parseTable(data []byte) (osTable, error) {
	var file struct {
		Entries []Entry `json:"entries"`
	}
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		return nil, fmt.Errorf("parsing os-images.yaml: %w", err)
	}
	if len(file.Entries) == 0 {
		return nil, fmt.Errorf("os-images.yaml: no entries")
	}
	seen := map[string]bool{}
	t := make(osTable, 0, len(file.Entries))
	for i, e := range file.Entries {
		c, err := compileEntry(e)
		if err != nil {
			return nil, fmt.Errorf("os-images.yaml entry %d (%s): %w", i+1, e.ID, err)
		}
		if seen[e.ID] {
			return nil, fmt.Errorf("os-images.yaml entry %d: duplicate id %q", i+1, e.ID)
		}
		seen[e.ID] = true
		t = append(t, c)
	}
	return t, nil
}

func compileEntry(e Entry) (compiled, error) {
	c := compiled{Entry: e}
	if e.ID == "" || e.Distro == "" {
		return c, fmt.Errorf("id and distro are required")
	}
	if err := checkProvenance(e.Evidence, e.Checked, e.Sources); err != nil {
		return c, err
	}
	if e.OSImage == "" {
		return c, fmt.Errorf("no osImage pattern")
	}
	var err error
	if c.osImage, err = regexp.Compile(e.OSImage); err != nil {
		return c, fmt.Errorf("osImage pattern: %w", err)
	}
	if e.Kernel != "" {
		if c.kernel, err = regexp.Compile(e.Kernel); err != nil {
			return c, fmt.Errorf("kernel pattern: %w", err)
		}
	}
	switch e.Libc {
	case LibcGlibc:
		if e.Glibc != "" {
			if c.glibc, err = ParseVersion(e.Glibc); err != nil {
				return c, err
			}
		}
	case LibcMusl, LibcNone:
		if e.Glibc != "" {
			return c, fmt.Errorf("glibc %q given for a %s host", e.Glibc, e.Libc)
		}
	default:
		return c, fmt.Errorf("libc %q: want glibc, musl or none", e.Libc)
	}
	if c.eoss, err = parseDate(e.EndOfStandardSupport); err != nil {
		return c, fmt.Errorf("endOfStandardSupport: %w", err)
	}
	if c.eoes, err = parseDate(e.EndOfExtendedSupport); err != nil {
		return c, fmt.Errorf("endOfExtendedSupport: %w", err)
	}
	if !c.eoes.IsZero() && c.eoes.Before(c.eoss) {
		return c, fmt.Errorf("extended support ends before standard support")
	}
	return c, nil
}

// checkProvenance enforces what makes a table row trustworthy: it was
// verified at a source (never "memory" or "uncertain", values an earlier
// version of the table allowed), on a known day, and the sources are https
// addresses a reader can open.
func checkProvenance(evidence, checked string, sources []string) error {
	if evidence != "verified" {
		return fmt.Errorf("evidence %q: every entry must be verified at a listed source (memory and uncertain entries are checked or removed)", evidence)
	}
	if _, err := time.Parse(time.DateOnly, checked); err != nil {
		return fmt.Errorf("checked %q: want the day the entry was verified (YYYY-MM-DD)", checked)
	}
	if len(sources) == 0 {
		return fmt.Errorf("no sources")
	}
	for _, src := range sources {
		if !strings.HasPrefix(src, "https://") || len(src) <= len("https://") {
			return fmt.Errorf("source %q is not an https URL", src)
		}
	}
	return nil
}

func parseDate(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q: %w", s, err)
	}
	return d, nil
}

func (t osTable) identify(osImage, kernel string) Info {
	osImage = strings.TrimSpace(osImage)
	kernel = strings.TrimSpace(kernel)
	if osImage == "" {
		return Info{}
	}
	for _, c := range t {
		m := c.osImage.FindStringSubmatch(osImage)
		if m == nil {
			continue
		}
		if c.kernel != nil && !c.kernel.MatchString(kernel) {
			continue
		}
		version := c.Entry.Version
		if i := c.osImage.SubexpIndex("version"); i >= 0 && m[i] != "" {
			version = m[i]
		}
		return Info{
			ID:                   c.ID,
			Distro:               c.Distro,
			Version:              version,
			Libc:                 c.Libc,
			Glibc:                c.glibc,
			EndOfStandardSupport: c.eoss,
			EndOfExtendedSupport: c.eoes,
			Sources:              slices.Clone(c.Sources),
			Known:                true,
		}
	}
	return Info{}
}
