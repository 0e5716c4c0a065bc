package runtime

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/nodeos"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const caseAzureCNIGlibc = "azure-cni-v2-glibc"

// hostBinaryGlibcCheck looks for DaemonSets that copy executables onto
// nodes whose glibc is older than those executables need. The binary runs
// on the host, against the host's libc, so the container image's own base
// says nothing about whether it works; the founding Azure CNI incident is
// exactly that.
func hostBinaryGlibcCheck() check.Check {
	return check.Check{
		ID:       "host-binary-glibc",
		Title:    "Host binaries installed by a DaemonSet need a newer glibc than nodes have",
		Severity: finding.High,
		Description: "Finds DaemonSets that mount a host binary directory (such as /opt/cni/bin) writable, " +
			"works out which nodes they land on and each node's glibc from its OS image, and reports the " +
			"nodes whose glibc is older than the installed binaries need: there the binaries cannot start, " +
			"and for a CNI plugin every new pod sandbox fails. What an image needs comes from --inspect-images " +
			"or from facts shipped with kubegap; when neither knows, a fleet that mixes glibc versions is " +
			"reported at medium severity, and on a fleet of one glibc the rule is partial, naming the image to inspect. Kernel module directories (/lib/modules) hold no userland binaries and do not " +
			"count; nodes whose glibc is unknown leave the check partial. With --inspect-images it also reports " +
			"musl-linked host binaries on glibc nodes, which lack the musl loader (high), and host binaries whose " +
			"libstdc++ version or unusual loader path node OS data cannot confirm (medium).",
		Reads: check.Needs(snapshot.Nodes, snapshot.DaemonSets),
		Rules: []check.Rule{{ID: ruleHostBinaryGlibc, Summary: "no DaemonSet installs host binaries needing a newer glibc than its nodes have",
			Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets}}},
		Cases: check.Detects(caseAzureCNIGlibc),
		Run:   runHostBinaryGlibc,
	}
}

// ruleHostBinaryGlibc is host-binary-glibc's one rule.
const ruleHostBinaryGlibc = "host-binary-glibc"

// libcText is what kubegap knows of a node OS's C library.
func libcText(info nodeos.Info) string {
	switch {
	case info.Libc == nodeos.LibcMusl:
		return "musl, no glibc"
	case info.Glibc.IsZero():
		return "glibc unknown"
	}
	return "glibc " + info.Glibc.String()
}

// hostBinaryPart is the verdict on one writing container.
type hostBinaryPart struct {
	severity finding.Severity
	w        hostWrite
	need     glibcNeed
	affected []*corev1.Node
	unknown  int
	fleet    map[string]int // glibc (or "musl") -> node count, for mixed fleets
	// unconfirmedOnly: the C library fits; only needs node data cannot
	// confirm are left (need.unconfirmed).
	unconfirmedOnly bool
}

func runHostBinaryGlibc(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadHostBinaryFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the snapshot holds no nodes")
	}
	infos := check.IdentifyNodes(s.Nodes)
	var out []finding.Finding
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		writes := facts.hostWrites(ds)
		if len(writes) == 0 {
			continue
		}
		var linux []*corev1.Node
		for _, n := range targetNodes(ds, s.Nodes) {
			if infos[n.Name].Libc == nodeos.LibcNone || n.Labels[corev1.LabelOSStable] == "windows" {
				continue
			}
			linux = append(linux, n)
		}
		if len(linux) == 0 {
			continue
		}
		var parts []hostBinaryPart
		unknown := 0
		// unjudged: the images, with their containers, whose glibc need is
		// unknown and that gave no finding (a fleet of one glibc). That
		// proves nothing about whether their binaries start there: the
		// founding incident was a uniform fleet.
		var unjudged []string
		fields := map[string][]string{}
		for _, w := range writes {
			p, ok := judgeHostWrite(w, facts.glibcNeed(w.container.Image, ctx.Images), linux, infos)
			if ok {
				parts = append(parts, p)
			} else if !p.need.known {
				img := w.container.Image
				if fields[img] == nil {
					unjudged = append(unjudged, img)
				}
				fields[img] = append(fields[img], w.field)
			}
			unknown = max(unknown, p.unknown)
		}
		for _, img := range unjudged {
			// Without --inspect-images the need waits on an opt-in source
			// (not requested, so --fail-on-unknown leaves it out); with it,
			// an image that could not be read is the user's to complete
			// (registry access), like any input.
			note := ctx.Incomplete
			if ctx.Images == nil {
				note = ctx.NotRequested
			}
			note(ruleHostBinaryGlibc, "DaemonSet %s/%s writes into a host binary directory from %s (%s), whose glibc need kubegap does not know (%s): "+
				"run the audit with --inspect-images, or `kubegap image inspect %s`",
				ds.Namespace, ds.Name, img, strings.Join(fields[img], ", "), unknownNeedWhy(img, ctx.Images), img)
		}
		if unknown > 0 {
			ctx.Unknowable(ruleHostBinaryGlibc, "DaemonSet %s/%s can write into a host binary directory on %d nodes whose glibc is unknown (their OS image is not tabled with one)",
				ds.Namespace, ds.Name, unknown)
		}
		if f, ok := hostBinaryFinding(ds, parts, infos, len(linux)); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

func judgeHostWrite(w hostWrite, need glibcNeed, nodes []*corev1.Node, infos check.NodeOS) (hostBinaryPart, bool) {
	p := hostBinaryPart{w: w, need: need}
	switch {
	case need.known && !need.dynamic:
		return p, false
	case need.known:
		muslOnly := need.musl && need.glibc.IsZero()
		for _, n := range nodes {
			info := infos[n.Name]
			switch {
			case info.Libc == nodeos.LibcMusl:
				if !muslOnly {
					p.affected = append(p.affected, n)
				}
			case need.musl && info.Libc == nodeos.LibcGlibc:
				// A glibc node: the musl loader is absent, whatever its version.
				p.affected = append(p.affected, n)
			case need.musl && muslOnly:
				p.unknown++
			case info.Glibc.IsZero():
				p.unknown++
			case info.Glibc.Less(need.glibc):
				p.affected = append(p.affected, n)
			}
		}
		p.severity = finding.High
		if len(p.affected) == 0 && len(need.unconfirmed) > 0 {
			// Unknown is not a pass: the C library fits, but whether the
			// nodes carry a new enough libstdc++ is not known.
			p.severity, p.unconfirmedOnly = finding.Medium, true
			for _, n := range nodes {
				if infos[n.Name].Libc == nodeos.LibcGlibc {
					p.affected = append(p.affected, n)
				}
			}
		}
		return p, len(p.affected) > 0
	}
	// Unknown image: only a fleet with more than one glibc can break on
	// some nodes and not others, which is what makes it worth a look.
	p.fleet = map[string]int{}
	var newest nodeos.Version
	for _, n := range nodes {
		info := infos[n.Name]
		switch {
		case info.Libc == nodeos.LibcMusl:
			p.fleet["musl"]++
		case info.Glibc.IsZero():
			p.unknown++
		default:
			p.fleet[info.Glibc.String()]++
			if newest.Less(info.Glibc) {
				newest = info.Glibc
			}
		}
	}
	if len(p.fleet) < 2 {
		return p, false
	}
	for _, n := range nodes {
		info := infos[n.Name]
		if info.Libc == nodeos.LibcMusl || (!info.Glibc.IsZero() && info.Glibc.Less(newest)) {
			p.affected = append(p.affected, n)
		}
	}
	p.severity = finding.Medium
	return p, true
}

func hostBinaryFinding(ds *appsv1.DaemonSet, parts []hostBinaryPart, infos check.NodeOS, targeted int) (finding.Finding, bool) {
	sev := finding.Info
	for _, p := range parts {
		if p.severity > sev {
			sev = p.severity
		}
	}
	var top []hostBinaryPart
	for _, p := range parts {
		if p.severity == sev {
			top = append(top, p)
		}
	}
	if len(top) == 0 {
		return finding.Finding{}, false
	}
	affected := unionNodes(top)
	dsName := ds.Namespace + "/" + ds.Name
	f := finding.Finding{
		Check:    "host-binary-glibc",
		Severity: sev,
		Cases:    []string{caseAzureCNIGlibc},
		Objects:  []finding.ObjectRef{{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}},
	}
	refs, more := check.NodeRefs(affected)
	f.Objects = append(f.Objects, refs...)
	var images, needs []string
	var alternatives []string
	for _, p := range top {
		images = append(images, fmt.Sprintf("%s (%s)", p.w.container.Image, p.w.field))
		f.AddEvidence(finding.Quote(f.Objects[0], finding.Value("spec.template.spec."+p.w.field+".image", p.w.container.Image)))
		f.Evidence = append(f.Evidence, p.w.evidence...)
		if p.need.known {
			f.Evidence = append(f.Evidence, p.need.how)
			needs = append(needs, p.need.labels()...)
		}
		if p.need.alternative != "" {
			alternatives = append(alternatives, p.need.alternative)
		}
	}
	f.AddEvidence(check.NodeValues(affected, func(n *corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage)}
	})...)
	f.Evidence = append(f.Evidence, osLibcEvidence(affected, infos)...)
	unknown := 0
	for _, p := range top {
		unknown = max(unknown, p.unknown)
	}
	byOS := osSummary(affected, infos)
	unconfirmedOnly, musl := false, false
	for _, p := range top {
		unconfirmedOnly = unconfirmedOnly || p.unconfirmedOnly
		musl = musl || p.need.musl
	}
	switch {
	case unconfirmedOnly:
		var all []string
		for _, p := range top {
			all = append(all, p.need.unconfirmed...)
		}
		need := strings.Join(check.SortedUnique(all), " and ")
		f.Title = fmt.Sprintf("DaemonSet %s installs host binaries that need %s, which kubegap cannot confirm on %d nodes", dsName, need, len(affected))
		f.Message = fmt.Sprintf("%s writes into a host binary directory from %s. Those binaries run on the host and need %s from it. "+
			"Their glibc need is met, but kubegap has no data that the node OS (%s%s) provides that, and minimal node OSes may not; "+
			"where it is missing or older, the binaries cannot start.",
			dsName, strings.Join(images, ", "), need, byOS, check.MoreText(more))
		f.Remediation = "Make the host binaries self-contained: link the C++ runtime statically (-static-libstdc++ -static-libgcc) or " +
			"build them fully static, and link against the system loader path (/lib64/ld-linux-x86-64.so.2 and its per-architecture " +
			"equivalents) rather than a private one. Or check on one node of each pool that the library or loader named above is there."
	case sev == finding.High:
		need := strings.Join(check.SortedUnique(needs), ", ")
		f.Title = fmt.Sprintf("DaemonSet %s installs host binaries that need %s on %d nodes with an older glibc", dsName, need, len(affected))
		f.Message = fmt.Sprintf("%s writes into a host binary directory from %s. Those binaries run on the host against the "+
			"node's own glibc and need %s, but %d of the %d Linux nodes the DaemonSet lands on have less: %s%s. "+
			"On those nodes the binaries cannot start; for a CNI plugin every new pod sandbox fails while the node stays Ready.",
			dsName, strings.Join(images, ", "), need, len(affected), targeted, byOS, check.MoreText(more))
		if musl {
			f.Title = fmt.Sprintf("DaemonSet %s installs host binaries that need %s, which %d nodes do not have", dsName, need, len(affected))
			f.Message = fmt.Sprintf("%s writes into a host binary directory from %s. Those binaries run on the host and need %s, "+
				"but %d of the %d Linux nodes the DaemonSet lands on cannot provide it: %s%s. A musl-linked binary names the musl "+
				"loader as its interpreter, and a glibc node has none, so the kernel refuses to start it; for a CNI plugin every new "+
				"pod sandbox fails while the node stays Ready.",
				dsName, strings.Join(images, ", "), need, len(affected), targeted, byOS, check.MoreText(more))
		}
		alt := ""
		if len(alternatives) > 0 {
			alt = fmt.Sprintf(" (here %s)", strings.Join(check.SortedUnique(alternatives), ", "))
		}
		f.Remediation = fmt.Sprintf("Install binaries that do not depend on the host's glibc: switch to a statically linked build of the image%s "+
			"or pin the previous image, and move the listed nodes to an OS release whose glibc is at least %s (for example Ubuntu 22.04 "+
			"or Azure Linux 3.0) before this image reaches them. Until then, keep the image off those nodes with a node selector or "+
			"affinity on the DaemonSet.", alt, strings.TrimPrefix(need, "GLIBC_"))
		if musl {
			f.Remediation = "Install statically linked binaries, or build them against glibc no newer than the oldest node's: a musl-linked " +
				"binary cannot start on a glibc node at all, since the kernel finds no musl loader (/lib/ld-musl-*.so.1) there."
		}
	default:
		fleet := map[string]int{}
		for _, p := range top {
			for k, v := range p.fleet {
				fleet[k] = max(fleet[k], v)
			}
		}
		mix := fleetText(fleet)
		f.Title = fmt.Sprintf("DaemonSet %s writes host binaries onto nodes with different glibc versions (%s)", dsName, mix)
		f.Message = fmt.Sprintf("%s writes into a host binary directory from %s, and the %d Linux nodes it lands on mix C libraries: %s. "+
			"If those binaries are dynamically linked against a newer glibc than the oldest nodes have, they fail on %d nodes (%s%s) "+
			"and work everywhere else, which is how an image change breaks only some pools. kubegap does not know how this image is linked.",
			dsName, strings.Join(images, ", "), targeted, mix, len(affected), byOS, check.MoreText(more))
		f.Remediation = "Run `kubegap audit --inspect-images` to read which glibc the image's executables need, or check that the " +
			"binaries it installs are statically linked. Build host binaries against the oldest glibc in the fleet, or bring the " +
			"node pools onto one OS release."
	}
	if unknown > 0 {
		f.Message += fmt.Sprintf(" The glibc of %d more targeted nodes is unknown to kubegap.", unknown)
	}
	return f, true
}

func unionNodes(parts []hostBinaryPart) []*corev1.Node {
	seen := map[string]bool{}
	var out []*corev1.Node
	for _, p := range parts {
		for _, n := range p.affected {
			if !seen[n.Name] {
				seen[n.Name] = true
				out = append(out, n)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// osSummary counts nodes per OS: "Ubuntu 20.04 (glibc 2.31) ×3".
func osSummary(nodes []*corev1.Node, infos check.NodeOS) string {
	counts := map[string]int{}
	for _, n := range nodes {
		info := infos[n.Name]
		key := info.Name()
		switch {
		case info.Libc == nodeos.LibcMusl:
			key += " (musl, no glibc)"
		case !info.Glibc.IsZero():
			key += " (glibc " + info.Glibc.String() + ")"
		}
		counts[key]++
	}
	return check.CountsText(counts)
}

func fleetText(fleet map[string]int) string {
	keys := slices.Collect(maps.Keys(fleet))
	sort.Slice(keys, func(i, j int) bool {
		a, errA := nodeos.ParseVersion(keys[i])
		b, errB := nodeos.ParseVersion(keys[j])
		if errA != nil || errB != nil {
			return keys[i] < keys[j]
		}
		return a.Less(b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		label := "glibc " + k
		if k == "musl" {
			label = "musl"
		}
		parts[i] = fmt.Sprintf("%s on %d", label, fleet[k])
	}
	return strings.Join(parts, ", ")
}

// osLibcEvidence says, once per OS image of the nodes, what kubegap's
// table gives as its C library.
func osLibcEvidence(nodes []*corev1.Node, infos check.NodeOS) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range nodes {
		img := n.Status.NodeInfo.OSImage
		if seen[img] {
			continue
		}
		seen[img] = true
		out = append(out, fmt.Sprintf("osImage %q → %s", img, libcText(infos[n.Name])))
	}
	return out
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
