package runtime

// The facts jvm-cgroup-compat judges by: which JVMs read cgroup v2 limits,
// which carry the kernel 6.12 detection fix, and Java version parsing.

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
)

//go:embed data/jvm-cgroup-compat.yaml
var jvmData []byte

type jvmFacts struct {
	CgroupV2Support []struct {
		VM       string   `json:"vm"`
		Line     int      `json:"line"`
		From     string   `json:"from"`
		AndLater bool     `json:"andLater"`
		Sources  []string `json:"sources"`

		from javaVersion
	} `json:"cgroupV2Support"`
	CgroupV2Default []struct {
		Distro  string   `json:"distro"`
		Version string   `json:"version"`
		Sources []string `json:"sources"`
	} `json:"cgroupV2Default"`
	KernelDetection []struct {
		KernelFrom    string   `json:"kernelFrom"`
		FixedFromLine int      `json:"fixedFromLine"`
		NotBefore     string   `json:"notBefore"`
		Sources       []string `json:"sources"`
	} `json:"kernelDetection"`
	KernelKnownAffected []struct {
		Version string   `json:"version"`
		Sources []string `json:"sources"`

		v javaVersion
	} `json:"kernelKnownAffected"`
	CgroupV2Moves    []cgroupV2Move `json:"cgroupV2Moves"`
	KernelKnownFixed []struct {
		Implementor string   `json:"implementor"`
		Version     string   `json:"version"`
		Sources     []string `json:"sources"`

		v javaVersion
	} `json:"kernelKnownFixed"`

	kernelFrom check.KubeVersion
	notBefore  time.Time
}

var loadJVMFacts = sync.OnceValues(func() (*jvmFacts, error) {
	var f jvmFacts
	if err := yaml.UnmarshalStrict(jvmData, &f); err != nil {
		return nil, fmt.Errorf("data/jvm-cgroup-compat.yaml: %w", err)
	}
	for i := range f.CgroupV2Support {
		r := &f.CgroupV2Support[i]
		v, ok := parseJava(r.From)
		if !ok || v.line != r.Line {
			return nil, fmt.Errorf("data/jvm-cgroup-compat.yaml: cgroupV2Support %q is not a release of line %d", r.From, r.Line)
		}
		r.from = v
	}
	for i := range f.KernelKnownAffected {
		r := &f.KernelKnownAffected[i]
		v, ok := parseJava(r.Version)
		if !ok {
			return nil, fmt.Errorf("data/jvm-cgroup-compat.yaml: bad kernelKnownAffected version %q", r.Version)
		}
		r.v = v
	}
	for i := range f.KernelKnownFixed {
		r := &f.KernelKnownFixed[i]
		v, ok := parseJava(r.Version)
		if !ok {
			return nil, fmt.Errorf("data/jvm-cgroup-compat.yaml: bad kernelKnownFixed version %q", r.Version)
		}
		r.v = v
	}
	if len(f.KernelDetection) != 1 {
		return nil, fmt.Errorf("data/jvm-cgroup-compat.yaml: kernelDetection needs exactly one row")
	}
	k := f.KernelDetection[0]
	var ok bool
	if f.kernelFrom, ok = check.ParseKubeVersion(k.KernelFrom); !ok {
		return nil, fmt.Errorf("data/jvm-cgroup-compat.yaml: bad kernelFrom %q", k.KernelFrom)
	}
	var err error
	if f.notBefore, err = time.Parse(time.DateOnly, k.NotBefore); err != nil {
		return nil, fmt.Errorf("data/jvm-cgroup-compat.yaml: notBefore: %w", err)
	}
	if err := parseCgroupV2Moves(f.CgroupV2Moves); err != nil {
		return nil, err
	}
	return &f, nil
})

// javaVersion is a JAVA_VERSION split into numbers: "1.8.0_372" is line 8
// with parts [8 372]; "11.0.14.1" is line 11 with parts [11 0 14 1].
type javaVersion struct {
	line  int
	parts []int
}

// parseJava reads JAVA_VERSION. Pre-release and build suffixes ("-ea",
// "+7") are dropped.
func parseJava(s string) (javaVersion, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	if rest, ok := strings.CutPrefix(s, "1."); ok {
		// Java 8 and earlier: 1.8.0_372.
		head, update, _ := strings.Cut(rest, "_")
		major, _, _ := strings.Cut(head, ".")
		m, err := strconv.Atoi(major)
		if err != nil || m < 1 {
			return javaVersion{}, false
		}
		u := 0
		if update != "" {
			if u, err = strconv.Atoi(update); err != nil {
				return javaVersion{}, false
			}
		}
		return javaVersion{line: m, parts: []int{m, u}}, true
	}
	var v javaVersion
	for _, p := range strings.Split(s, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return javaVersion{}, false
		}
		v.parts = append(v.parts, n)
	}
	if len(v.parts) == 0 || v.parts[0] < 9 {
		return javaVersion{}, false
	}
	v.line = v.parts[0]
	return v, true
}

// less orders two versions; missing parts count as zero.
func (v javaVersion) less(o javaVersion) bool {
	for i := 0; i < max(len(v.parts), len(o.parts)); i++ {
		a, b := part(v.parts, i), part(o.parts, i)
		if a != b {
			return a < b
		}
	}
	return false
}

func part(p []int, i int) int {
	if i < len(p) {
		return p[i]
	}
	return 0
}

// vmOf is the JVM_VARIANT lower-cased, HotSpot when the file omits it.
func vmOf(vm string) string {
	if vm = strings.ToLower(strings.TrimSpace(vm)); vm == "" || vm == "server" || vm == "client" {
		return "hotspot"
	}
	return vm
}

// lacksCgroupV2 reports whether the runtime cannot read cgroup v2 limits;
// known is false for a JVM the table has no row for.
func (f *jvmFacts) lacksCgroupV2(vm string, v javaVersion) (lacks, known bool, sources []string) {
	laterLine := 0
	for i := range f.CgroupV2Support {
		r := &f.CgroupV2Support[i]
		if r.VM != vm {
			continue
		}
		if r.Line == v.line {
			return v.less(r.from), true, r.Sources
		}
		if r.AndLater {
			laterLine, sources = r.Line, r.Sources
		}
	}
	if laterLine == 0 {
		return false, false, nil
	}
	// A line with no row of its own: supported from the andLater line on,
	// none before it (the table's reading, see the data file).
	return v.line < laterLine, true, sources
}

// kernelVerdict is what kubegap knows of a runtime and the 6.12 change.
type kernelVerdict int

const (
	kernelFixed kernelVerdict = iota
	kernelAffected
	kernelUnknown
)

// kernelBug judges a HotSpot runtime against the kernel 6.12 detection
// bug: fixed from the line the fix landed in; affected when built before
// the fix was proposed or at or below a release reported to show it;
// fixed at or above a release of the same vendor reported to work;
// unknown otherwise (a backport may or may not be in it).
func (f *jvmFacts) kernelBug(v javaVersion, date, implementor string) (kernelVerdict, string) {
	k := f.KernelDetection[0]
	if v.line >= k.FixedFromLine {
		return kernelFixed, ""
	}
	if d, err := time.Parse(time.DateOnly, date); err == nil && d.Before(f.notBefore) {
		return kernelAffected, fmt.Sprintf("built %s, before the fix was proposed on %s (%s)", date, k.NotBefore, k.Sources[0])
	}
	for _, r := range f.KernelKnownAffected {
		if r.v.line == v.line && !r.v.less(v) {
			return kernelAffected, fmt.Sprintf("%s of this line was reported with the bug (%s)", r.Version, strings.Join(r.Sources, ", "))
		}
	}
	for _, r := range f.KernelKnownFixed {
		if r.v.line == v.line && !v.less(r.v) && strings.EqualFold(r.Implementor, strings.TrimSpace(implementor)) {
			return kernelFixed, ""
		}
	}
	return kernelUnknown, ""
}
