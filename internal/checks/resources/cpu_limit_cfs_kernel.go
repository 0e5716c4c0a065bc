package resources

import (
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/cpu-limit-cfs-kernel.yaml
var cfsYAML []byte

type cfsFix struct {
	Line    string   `json:"line"`
	Version string   `json:"version"`
	Sources []string `json:"sources"`

	v [3]int
}

// cfsFacts is data/cpu-limit-cfs-kernel.yaml.
type cfsFacts struct {
	FixedIn []cfsFix `json:"fixedIn"`
}

var loadCFS = check.Facts("CFS fix versions", cfsYAML, func(f *cfsFacts) error {
	for i := range f.FixedIn {
		v, ok := kernelVersion(f.FixedIn[i].Version)
		if !ok {
			return fmt.Errorf("CFS fix versions: bad version %q", f.FixedIn[i].Version)
		}
		f.FixedIn[i].v = v
	}
	return nil
})

var kernelRE = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?`)

// kernelVersion reads the upstream version at the start of a kernel
// release string ("5.15.0-1051-azure", "6.1.109-118.189.amzn2023.x86_64").
func kernelVersion(s string) ([3]int, bool) {
	m := kernelRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := 1; i <= 3; i++ {
		if m[i] != "" {
			v[i-1], _ = strconv.Atoi(m[i])
		}
	}
	return v, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// fixed says whether a kernel carries the fix by the verified table: at or
// past the mainline release, or in a listed stable line at or past its
// release. Unknown (false, false) for older lines, whose backports are not
// verified.
func fixed(fixes []cfsFix, v [3]int) (isFixed, known bool) {
	for _, f := range fixes {
		if f.Line == "mainline" && !less(v, f.v) {
			return true, true
		}
	}
	for _, f := range fixes {
		if f.Line != "mainline" && v[0] == f.v[0] && v[1] == f.v[1] {
			return !less(v, f.v), true
		}
	}
	return false, false
}

const (
	ruleCFS = "cfs-quota-expiry"
	cfsCase = "kernel-cfs-quota-unnecessary-throttling-2018"
	// Omio's GKE workloads stalled for months under CPU limits on
	// kernels with the same bug.
	omioCase = "omio-cpu-limits-cfs-throttling-2020"
)

func cpuLimitCFSKernelCheck() check.Check {
	return check.Check{
		ID:       "cpu-limit-cfs-kernel",
		Title:    "CPU limits on kernels that may throttle below the limit",
		Severity: finding.Low,
		Description: "Nodes running containers with CPU limits whose kernel predates the CFS bandwidth fix that stops " +
			"unused per-CPU quota from expiring (commit de53fd7aedb1): such kernels throttle multi-threaded " +
			"containers that are below their limit. Verified fix versions only: mainline 5.4 and stable 5.3.9 " +
			"(CVE-2019-19922 puts the bug before 5.3.9). Low for a 5.3 kernel before 5.3.9, which lacks the fix. " +
			"Older lines are reported as info and leave the rule partial: stable and distribution backports " +
			"(reported for 4.14, 4.19, Ubuntu and RHEL 7 kernels) keep old version strings and are not in the " +
			"verified table, so the check cannot tell whether such a kernel carries the fix.",
		Reads: []check.Input{{Resource: snapshot.Nodes}, {Resource: snapshot.Pods}},
		Rules: []check.Rule{
			{ID: ruleCFS, Summary: "CPU-limited containers on kernels without the CFS quota-expiry fix",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.Pods}},
		},
		Cases: []string{cfsCase, omioCase},
		Run:   runCPULimitCFS,
	}
}

func runCPULimitCFS(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadCFS()
	if err != nil {
		return nil, err
	}
	fixes := facts.FixedIn
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input has no Nodes")
	}
	ix := s.Index()
	type hit struct {
		node, kernel string
		limited      int
	}
	var broken, unknownFix []hit
	noKernel := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		kv := n.Status.NodeInfo.KernelVersion
		v, ok := kernelVersion(kv)
		if !ok {
			noKernel++
			continue
		}
		isFixed, known := fixed(fixes, v)
		if isFixed {
			continue
		}
		limited := 0
		for _, p := range ix.PodsOnNode(n.Name) {
			for _, c := range p.Spec.Containers {
				if c.Resources.CPULimit > 0 {
					limited++
				}
			}
		}
		if limited == 0 {
			continue
		}
		h := hit{n.Name, kv, limited}
		if known {
			broken = append(broken, h)
		} else {
			unknownFix = append(unknownFix, h)
		}
	}
	if noKernel > 0 {
		ctx.Incomplete(ruleCFS, "%d nodes report no kernel version", noKernel)
	}
	if len(unknownFix) > 0 {
		ctx.Incomplete(ruleCFS, "%d nodes run kernels older than the verified fix lines; whether they carry a backport is unknown", len(unknownFix))
	}
	var srcs []string
	for _, f := range fixes {
		srcs = append(srcs, fmt.Sprintf("%s fixed in %s (%s)", f.Line, f.Version, strings.Join(f.Sources, " ")))
	}
	var out []finding.Finding
	for _, g := range []struct {
		hits  []hit
		sev   finding.Severity
		title string
	}{
		{broken, finding.Low, "run CPU-limited containers on kernels without the CFS quota-expiry fix"},
		{unknownFix, finding.Info, "run CPU-limited containers on kernels older than the verified CFS fix; a backport may or may not be there"},
	} {
		if len(g.hits) == 0 {
			continue
		}
		sort.Slice(g.hits, func(i, j int) bool { return g.hits[i].node < g.hits[j].node })
		var objs []finding.ObjectRef
		var ev []string
		var kernels finding.Grouper
		for _, h := range g.hits {
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, check.NodeRef(h.node))
			}
			kernels.Add(check.NodeRef(h.node), finding.Value("status.nodeInfo.kernelVersion", h.kernel))
			if len(ev) < check.MaxEvidence {
				ev = append(ev, fmt.Sprintf("Node %s: %s with a CPU limit", h.node, check.Plural(h.limited, "container", "containers")))
			}
		}
		ev = append(ev, strings.Join(srcs, "; "))
		f := finding.Finding{
			Check: "cpu-limit-cfs-kernel", Severity: g.sev,
			Title: fmt.Sprintf("%s %s", check.Plural(len(g.hits), "node", "nodes"), g.title),
			Message: "Without the fix, quota handed to a CPU's run queue and left unused expires each period, so a " +
				"container spread over many CPUs is throttled while using less than its limit: latency rises and " +
				"throttling alerts fire on healthy workloads.",
			Objects:     objs,
			Evidence:    ev,
			Remediation: "Move these nodes to a kernel with the fix (5.4 or later, or a vendor kernel whose changelog lists de53fd7aedb1); until then, raise or drop CPU limits on latency-sensitive multi-threaded workloads.",
			Cases:       []string{cfsCase, omioCase},
		}
		f.AddEvidence(kernels.Items()...)
		out = append(out, f)
	}
	return out, nil
}
