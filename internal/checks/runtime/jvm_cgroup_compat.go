package runtime

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/nodeos"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	caseCgroupV2JRE  = "aks-125-cgroupv2-old-jre-memory-2023"
	caseKernel612JVM = "kernel-612-breaks-jvm-container-detection-2026"
	jvmCompatID      = "jvm-cgroup-compat"
	ruleJVMCgroupV2  = "cgroup-v2"
	ruleJVMKernel612 = "kernel-6.12"
	// ruleJVMCgroupV2Upgrade: see jvm_cgroup_compat_upgrade.go.
	ruleJVMCgroupV2Upgrade = "cgroup-v2-at-upgrade"
)

// jvmCgroupCompatCheck finds pods whose image carries a Java runtime that
// will not see its container's memory limit on the node it runs on: too
// old to read cgroup v2, or without the fix for kernels from 6.12.
func jvmCgroupCompatCheck() check.Check {
	needs := []snapshot.Resource{snapshot.Nodes, snapshot.Pods}
	return check.Check{
		ID:       jvmCompatID,
		Title:    "Java runtimes in images that cannot see their container's memory limit on the nodes they run on",
		Severity: finding.High,
		Description: "With --inspect-images, reads the JDK or JRE `release` file (JAVA_VERSION, JAVA_VERSION_DATE, " +
			"JVM_VARIANT) in every image that running pods use; environment variables are not read. cgroup-v2 (high): a " +
			"runtime older than the first release of its line that reads cgroup v2 limits (HotSpot 8u372, 11.0.16, 15; " +
			"OpenJ9 8.0.382, 11.0.20, 17.0.8, from the Kubernetes cgroup v2 page) on a node whose OS boots cgroup v2 by " +
			"default. The Node object does not say which cgroup version a node runs: it is inferred from " +
			"status.nodeInfo.osImage (Ubuntu 21.10+, Debian 11+, RHEL-like 9+); such a runtime on a node of another OS " +
			"(Azure Linux, Amazon Linux, Container-Optimized OS, Bottlerocket, Flatcar: not in the table) leaves the rule " +
			"partial. kernel-6.12 (medium): a HotSpot runtime without the JDK-8349988 fix (in JDK 25) on a node whose " +
			"kernelVersion is 6.12 or later, where the kernel may hide the cgroup v1 cpuset and memory entries the JVM " +
			"reads to decide it runs in a container (it depends on the kernel's build options, which the API does not show). " +
			"A build dated before the fix was proposed, or at or below a release reported with the bug, is affected; a " +
			"later 8, 11, 17 or 21 build may carry a backport kubegap has no data on, and leaves the rule partial, unless " +
			"the same vendor's build of that line was reported to work (Corretto 21.0.10 and later). " +
			"cgroup-v2-at-upgrade (medium): the same too-old runtime on a cgroup v1 node whose managed provider replaces its OS " +
			"with a cgroup v2 one at a later minor (data/jvm-cgroup-compat.yaml: AKS moves Ubuntu 18.04 node pools to Ubuntu " +
			"22.04 from 1.25), so the node pool's upgrade to that minor is what breaks it. " +
			"Without --inspect-images the rules are partial.",
		Reads: check.Needs(needs...),
		Rules: []check.Rule{
			{ID: ruleJVMCgroupV2, Summary: "no Java runtime that cannot read cgroup v2 limits runs on a cgroup v2 node", Needs: needs},
			{ID: ruleJVMKernel612, Summary: "no Java runtime without the kernel 6.12 detection fix runs on a 6.12+ kernel", Needs: needs},
			{ID: ruleJVMCgroupV2Upgrade, Summary: "no Java runtime that cannot read cgroup v2 limits runs on a node its provider moves to a cgroup v2 OS at a later minor", Needs: needs},
		},
		// The AKS 1.25 case is flagged on 1.24, before the upgrade moves the
		// pool to Ubuntu 22.04; the kernel 6.12 case only once nodes run it.
		Cases: check.Cite(check.Prevents(caseCgroupV2JRE), check.Detects(caseKernel612JVM)),
		Run:   runJVMCgroupCompat,
	}
}

// jvmNode is what a node's status says about the two rules.
type jvmNode struct {
	cgroupV2, v2Known bool
	// upgrade is the provider move to a cgroup v2 OS at the node's next
	// minor, nil when none is listed; upgradeWhy says it for evidence.
	upgrade    *cgroupV2Move
	upgradeWhy string
	why        string // the OS and its default, for evidence
	newKernel  bool
	kernel     string
}

// jvmGroup is one finding: a runtime in an image on nodes of one rule.
type jvmGroup struct {
	rule, image string
	rt          check.JavaRuntime
	why         string
	nodeWhy     string // a node's OS and its cgroup default, for evidence
	users       map[finding.ObjectRef]bool
	userOrder   []finding.ObjectRef
	nodes       map[string]*corev1.Node
}

// jvmRun holds one run's state.
type jvmRun struct {
	ctx     *check.Context
	facts   *jvmFacts
	nodes   map[string]*jvmNode
	groups  map[string]*jvmGroup
	order   []*jvmGroup
	unknown map[string]map[string]bool // rule -> what could not be judged
	images  map[string]*jvmImage       // each image's runtimes, judged once
	seen    []string                   // the images of the pod being judged, reused
}

func runJVMCgroupCompat(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadJVMFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 || len(s.Pods) == 0 {
		return nil, check.NotEvaluated("the input holds no nodes or no pods")
	}
	if ctx.Images == nil {
		for _, r := range []string{ruleJVMCgroupV2, ruleJVMKernel612, ruleJVMCgroupV2Upgrade} {
			ctx.NotRequested(r, "the Java runtimes inside images were not read; run `kubegap audit --inspect-images` (it reads each image's JDK release file)")
		}
		return nil, nil
	}
	run := &jvmRun{ctx: ctx, facts: facts, nodes: map[string]*jvmNode{}, groups: map[string]*jvmGroup{},
		unknown: map[string]map[string]bool{}, images: map[string]*jvmImage{}}
	for i := range s.Nodes {
		run.nodes[s.Nodes[i].Name] = judgeJVMNode(&s.Nodes[i], facts)
	}
	ix := s.Index()
	for i := range s.Pods {
		run.pod(ix, &s.Pods[i])
	}
	run.noteUnknown()
	var out []finding.Finding
	for _, g := range run.order {
		out = append(out, g.finding())
	}
	return out, nil
}

// judgeJVMNode reads a node's OS and kernel.
func judgeJVMNode(n *corev1.Node, facts *jvmFacts) *jvmNode {
	ni := n.Status.NodeInfo
	jn := &jvmNode{kernel: ni.KernelVersion}
	if k, ok := check.ParseKubeVersion(ni.KernelVersion); ok && !k.Less(facts.kernelFrom) {
		jn.newKernel = true
	}
	info := nodeos.Identify(ni.OSImage, ni.KernelVersion)
	if !info.Known {
		return jn
	}
	for _, d := range facts.CgroupV2Default {
		if d.Distro != info.Distro {
			continue
		}
		jn.v2Known = info.Version != ""
		jn.cgroupV2 = jn.v2Known && !distroLess(info.Version, d.Version)
		jn.why = fmt.Sprintf("%s boots cgroup v2 by default from %s (%s)", info.Name(), d.Version, strings.Join(d.Sources, ", "))
	}
	if jn.v2Known && !jn.cgroupV2 {
		jn.upgrade, jn.upgradeWhy = facts.cgroupV2MoveFor(n)
	}
	return jn
}

// distroLess compares dotted release numbers ("20.04" < "21.10", "9.4" >= "9").
func distroLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// pod judges each Java runtime of each image of a scheduled pod.
func (r *jvmRun) pod(ix *snapshot.Index, p *snapshot.Pod) {
	n := r.nodes[p.Spec.NodeName]
	if n == nil || (n.v2Known && !n.cgroupV2 && !n.newKernel && n.upgrade == nil) {
		return // unscheduled, node not in the input, or nothing to judge there
	}
	seen := r.seen[:0] // a pod's few images, each judged once
	for _, cs := range [][]snapshot.Container{p.Spec.InitContainers, p.Spec.Containers, p.Spec.EphemeralContainers} {
		for j := range cs {
			img := cs[j].Image
			if img == "" || slices.Contains(seen, img) {
				continue
			}
			seen = append(seen, img)
			ji := r.image(img)
			if ji.unread != "" {
				r.unknownFor(n, ji.unread)
				continue
			}
			for k := range ji.runtimes {
				r.runtime(ix, p, n, img, &ji.runtimes[k])
			}
		}
	}
	r.seen = seen
}

// jvmImage is what an image's runtimes say whatever node runs them,
// judged once per image: many pods run one image.
type jvmImage struct {
	unread   string // why the image cannot be judged, "" when it was read
	runtimes []jvmVerdict
}

// jvmVerdict is one runtime of an image judged against the facts, with
// the texts and group keys the rules use for it.
type jvmVerdict struct {
	rt            check.JavaRuntime
	parsed        bool
	badVersion    string // the unknown when the version does not parse
	vm            string
	hotspot       bool
	lacks, known  bool
	lacksWhy      string
	unknownJVM    string
	kernel        kernelVerdict
	kernelWhy     string
	kernelUnknown string
	// the keys of the groups add puts the runtime in, one per rule
	keyV2, keyUpgrade, keyKernel string
}

// image judges img's runtimes, memoised.
func (r *jvmRun) image(img string) *jvmImage {
	if ji, ok := r.images[img]; ok {
		return ji
	}
	ji := &jvmImage{}
	r.images[img] = ji
	f, ok := r.ctx.Images[img]
	if !ok || f.Err != "" || !f.LayersRead {
		ji.unread = "image " + img + " was not read"
		return ji
	}
	for _, rt := range f.Java {
		jv := jvmVerdict{rt: rt}
		v, ok := parseJava(rt.Version)
		if !ok {
			jv.badVersion = fmt.Sprintf("Java version %q in %s", rt.Version, img)
			ji.runtimes = append(ji.runtimes, jv)
			continue
		}
		jv.parsed = true
		jv.vm = vmOf(rt.VM)
		jv.hotspot = jv.vm == "hotspot"
		var sources []string
		jv.lacks, jv.known, sources = r.facts.lacksCgroupV2(jv.vm, v)
		jv.lacksWhy = "reads no cgroup v2 limits (" + strings.Join(sources, ", ") + ")"
		jv.unknownJVM = fmt.Sprintf("%s JVM %s in %s", jv.vm, rt.Version, img)
		if jv.hotspot {
			jv.kernel, jv.kernelWhy = r.facts.kernelBug(v, rt.Date, rt.Implementor)
			jv.kernelUnknown = fmt.Sprintf("whether Java %s in %s carries the JDK-8349988 backport", rt.Version, img)
		}
		tail := "\x00" + img + "\x00" + rt.Home + "\x00" + rt.Version
		jv.keyV2, jv.keyUpgrade, jv.keyKernel = ruleJVMCgroupV2+tail, ruleJVMCgroupV2Upgrade+tail, ruleJVMKernel612+tail
		ji.runtimes = append(ji.runtimes, jv)
	}
	return ji
}

func (r *jvmRun) unknownFor(n *jvmNode, what string) {
	if n.cgroupV2 || !n.v2Known {
		r.addUnknown(ruleJVMCgroupV2, what)
	}
	if n.newKernel {
		r.addUnknown(ruleJVMKernel612, what)
	}
	if n.upgrade != nil {
		r.addUnknown(ruleJVMCgroupV2Upgrade, what)
	}
}

func (r *jvmRun) addUnknown(rule, what string) {
	if r.unknown[rule] == nil {
		r.unknown[rule] = map[string]bool{}
	}
	r.unknown[rule][what] = true
}

func (r *jvmRun) runtime(ix *snapshot.Index, p *snapshot.Pod, n *jvmNode, img string, jv *jvmVerdict) {
	if !jv.parsed {
		r.unknownFor(n, jv.badVersion)
		return
	}
	switch {
	case !jv.known && (n.cgroupV2 || !n.v2Known):
		r.addUnknown(ruleJVMCgroupV2, jv.unknownJVM)
	case jv.lacks && n.cgroupV2:
		r.add(ix, p, ruleJVMCgroupV2, jv.keyV2, img, jv.rt, jv.lacksWhy)
	case jv.lacks && !n.v2Known:
		r.addUnknown(ruleJVMCgroupV2, "the cgroup version of node "+p.Spec.NodeName+" (its OS is not in kubegap's table)")
	case !jv.known && n.upgrade != nil:
		r.addUnknown(ruleJVMCgroupV2Upgrade, jv.unknownJVM)
	case jv.lacks && n.upgrade != nil:
		r.add(ix, p, ruleJVMCgroupV2Upgrade, jv.keyUpgrade, img, jv.rt, jv.lacksWhy)
	}
	if !n.newKernel || !jv.hotspot {
		return
	}
	switch jv.kernel {
	case kernelAffected:
		r.add(ix, p, ruleJVMKernel612, jv.keyKernel, img, jv.rt, jv.kernelWhy)
	case kernelUnknown:
		r.addUnknown(ruleJVMKernel612, jv.kernelUnknown)
	}
}

// add puts the pod's workload and node in the group of key, made the
// first time for rule, img and rt.
func (r *jvmRun) add(ix *snapshot.Index, p *snapshot.Pod, rule, key, img string, rt check.JavaRuntime, why string) {
	g := r.groups[key]
	if g == nil {
		g = &jvmGroup{rule: rule, image: img, rt: rt, why: why, users: map[finding.ObjectRef]bool{}, nodes: map[string]*corev1.Node{}}
		r.groups[key] = g
		r.order = append(r.order, g)
	}
	u := podUser(ix, p)
	if !g.users[u] {
		g.users[u] = true
		g.userOrder = append(g.userOrder, u)
	}
	g.nodes[p.Spec.NodeName] = ix.Node(p.Spec.NodeName)
	if g.nodeWhy == "" {
		g.nodeWhy = r.nodes[p.Spec.NodeName].why
		if rule == ruleJVMCgroupV2Upgrade {
			g.nodeWhy = r.nodes[p.Spec.NodeName].upgradeWhy
		}
	}
}

// podUser names the workload that made the pod, or the pod itself.
func podUser(ix *snapshot.Index, p *snapshot.Pod) finding.ObjectRef {
	if o, ok := ix.WorkloadOf(p); ok {
		return finding.ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: p.Namespace, Name: o.Name}
	}
	return podRef(p)
}

func (r *jvmRun) noteUnknown() {
	for _, rule := range []string{ruleJVMCgroupV2, ruleJVMKernel612, ruleJVMCgroupV2Upgrade} {
		if len(r.unknown[rule]) == 0 {
			continue
		}
		var list []string
		for w := range r.unknown[rule] {
			list = append(list, w)
		}
		sort.Strings(list)
		r.ctx.Incomplete(rule, "could not judge %s: %s", check.Plural(len(list), "case", "cases"), check.ListText(list, 5))
	}
}
