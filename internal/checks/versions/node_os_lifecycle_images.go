package versions

// node-os-lifecycle's node-image rules: stale-node-image (node images older
// than the provider's refresh cadence) and patch-monoculture (one OS image
// patched in place on every node, with no coordinator for its reboots).
// The check itself, with the os-end-of-support rule, is in
// node_os_lifecycle.go.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

type agedNode struct {
	node  *corev1.Node
	image string
	date  time.Time
}

func staleImageFindings(nodes []corev1.Node, facts *lifecycleFacts, now time.Time) []finding.Finding {
	var aged []agedNode
	var newest time.Time
	for i := range nodes {
		v := nodes[i].Labels[facts.AKSNodeImageLabel]
		d, ok := parseAKSImageDate(v)
		if !ok {
			continue
		}
		aged = append(aged, agedNode{node: &nodes[i], image: v, date: d})
		if d.After(newest) {
			newest = d
		}
	}
	th := facts.Thresholds
	type group struct {
		sev   finding.Severity
		nodes []agedNode
	}
	groups := map[string]*group{}
	for _, a := range aged {
		behind := newest.Sub(a.date) > daysOf(th.BehindFleetDays)
		stale := now.Sub(a.date) > daysOf(th.StaleDays) &&
			!a.node.CreationTimestamp.IsZero() && now.Sub(a.node.CreationTimestamp.Time) > daysOf(th.StaleDays)
		var sev finding.Severity
		switch {
		case behind:
			sev = finding.Medium
		case stale:
			sev = finding.Low
		default:
			continue
		}
		key := check.NodePool(a.node)
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
		}
		g.sev = max(g.sev, sev)
		g.nodes = append(g.nodes, a)
	}
	keys := slices.Sorted(maps.Keys(groups))
	var out []finding.Finding
	for _, k := range keys {
		g := groups[k]
		where := "Nodes without a pool label"
		if k != "" {
			where = "Node pool " + k
		}
		ptrs := make([]*corev1.Node, len(g.nodes))
		oldest := g.nodes[0].date
		images := map[string]int{}
		for i, a := range g.nodes {
			ptrs[i] = a.node
			images[a.image]++
			if a.date.Before(oldest) {
				oldest = a.date
			}
		}
		refs, more := check.NodeRefs(ptrs)
		f := finding.Finding{
			Check:    "node-os-lifecycle",
			Severity: g.sev,
			Objects:  refs,
			Cases:    []string{caseUbuntuSystemdDNS, caseHWEKernelPanic},
		}
		f.Title = fmt.Sprintf("%s runs a node image from %s", where, oldest.Format("2006-01"))
		f.Evidence = append(f.Evidence, fmt.Sprintf("oldest node image %d days old at this audit (%s)",
			days(now.Sub(oldest)), now.Format(time.DateOnly)))
		image := check.CountsText(images)
		if len(images) == 1 {
			image = g.nodes[0].image
		}
		var stale, behind int
		for _, a := range g.nodes {
			if now.Sub(a.node.CreationTimestamp.Time) > daysOf(th.StaleDays) {
				stale++
			}
		}
		behind = len(g.nodes) - stale
		f.Message = fmt.Sprintf("%s: %s node image %s, built %s.", where, check.NodesRun(len(g.nodes), ""), image, oldest.Format(time.DateOnly))
		if stale > 0 {
			f.Message += fmt.Sprintf(" Nodes in it have been up for more than %d days: their OS packages have changed in place "+
				"since (unattended upgrades or a security patch channel), outside any staged rollout, or not at all.", th.StaleDays)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%d of %d nodes up for more than %d days at this audit", stale, len(g.nodes), th.StaleDays))
		}
		if g.sev == finding.Medium {
			f.Message += fmt.Sprintf(" The newest node image in the cluster is from %s: this pool was left behind when others moved on",
				newest.Format(time.DateOnly))
			if behind > 0 {
				f.Message += ", and its new nodes still start from the old image"
			}
			f.Message += "."
		}
		f.Message += check.MoreText(more)
		f.Remediation = "Upgrade the pool's node image (az aks nodepool upgrade --node-image-only) and pick a node OS upgrade " +
			"channel (NodeImage) with a maintenance window, so that OS changes arrive as tested images, pool by pool, instead of " +
			"in place on every node at once."
		for i, a := range g.nodes {
			if i == check.MaxEvidence {
				f.Evidence = append(f.Evidence, fmt.Sprintf("… and %d more nodes", len(g.nodes)-i))
				break
			}
			f.AddEvidence(finding.Quote(check.NodeRef(a.node.Name), finding.Value("metadata.labels["+facts.AKSNodeImageLabel+"]", a.image),
				createdField(a.node)))
		}
		f.Evidence = append(f.Evidence, "image dates are read from the "+facts.AKSNodeImageLabel+" label's version (AKSUbuntu-…-YYYYMM.DD.n)")
		if g.sev == finding.Medium {
			f.Evidence = append(f.Evidence, fmt.Sprintf("newest %s in the cluster: %s", facts.AKSNodeImageLabel, newest.Format(time.DateOnly)))
		}
		out = append(out, f)
	}
	return out
}

// monocultureFinding reports a fleet on one in-place-updated OS image and
// kernel with nothing staging its updates.
func monocultureFinding(ctx *check.Context, infos check.NodeOS, facts *lifecycleFacts, now time.Time) (finding.Finding, bool) {
	s := ctx.Snapshot
	th := facts.Thresholds
	if len(s.Nodes) < th.MonocultureMinNodes {
		return finding.Finding{}, false
	}
	type tuple struct{ osImage, kernel string }
	counts := map[tuple][]*corev1.Node{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		k := tuple{n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion}
		counts[k] = append(counts[k], n)
	}
	var top tuple
	for k, ns := range counts {
		if len(ns) > len(counts[top]) || len(ns) == len(counts[top]) && k.osImage+k.kernel < top.osImage+top.kernel {
			top = k
		}
	}
	same := counts[top]
	share := float64(len(same)) / float64(len(s.Nodes))
	if share < th.MonocultureShare {
		return finding.Finding{}, false
	}
	info := infos[same[0].Name]
	if !info.Known {
		ctx.Unknowable(rulePatchMonoculture, "%d of %d nodes run OS image %q, which kubegap does not recognise: whether it updates in place is unknown",
			len(same), len(s.Nodes), top.osImage)
		return finding.Finding{}, false
	}
	if !facts.updatesInPlace(info.ID) {
		return finding.Finding{}, false
	}
	// Without any DaemonSet or Deployment, "no patch coordinator" cannot
	// be told at all.
	dsSeen, depSeen := ctx.Present(snapshot.DaemonSets), ctx.Present(snapshot.Deployments)
	if !dsSeen && !depSeen {
		ctx.Incomplete(rulePatchMonoculture, "%d of %d nodes run %q, updated in place, but neither DaemonSets nor Deployments are in the input: "+
			"whether a patch coordinator runs is unknown", len(same), len(s.Nodes), top.osImage)
		return finding.Finding{}, false
	}
	if patchCoordinator(s, facts) {
		return finding.Finding{}, false
	}
	young, undated := 0, 0
	var newestImage time.Time
	for _, n := range same {
		switch {
		case n.CreationTimestamp.IsZero():
			undated++
		case now.Sub(n.CreationTimestamp.Time) < daysOf(th.YoungNodeDays):
			young++
		}
		if d, ok := parseAKSImageDate(n.Labels[facts.AKSNodeImageLabel]); ok && d.After(newestImage) {
			newestImage = d
		}
	}
	// Nodes being replaced, or node images being refreshed, are a managed
	// rollout: updates arrive as images, not in place.
	if young*2 >= len(same) {
		return finding.Finding{}, false
	}
	if !newestImage.IsZero() && now.Sub(newestImage) < daysOf(th.RecentImageDays) {
		return finding.Finding{}, false
	}
	refs, more := check.NodeRefs(same)
	var names []string
	for _, c := range facts.PatchCoordinators {
		names = append(names, c.Name)
	}
	// Open world: only complete inputs show that no coordinator runs; else
	// the finding says what was looked at and what could not be.
	complete := ctx.Complete(snapshot.DaemonSets) && ctx.Complete(snapshot.Deployments)
	var looked, unseen []string
	for _, k := range []struct {
		r    snapshot.Resource
		seen bool
	}{{snapshot.DaemonSets, dsSeen}, {snapshot.Deployments, depSeen}} {
		switch {
		case ctx.Complete(k.r):
			looked = append(looked, "every "+k.r.Kind)
		case k.seen:
			looked = append(looked, "the "+k.r.Kind+"s in the input")
			unseen = append(unseen, k.r.Kind+"s beyond those in the input")
		default:
			unseen = append(unseen, k.r.Kind+"s (not in the input)")
		}
	}
	coordinator := "with no patch coordinator"
	if !complete {
		coordinator = "with no patch coordinator in the input"
		ctx.Incomplete(rulePatchMonoculture, "a patch coordinator among %s could not be ruled out", strings.Join(unseen, " or "))
	}
	f := finding.Finding{
		Check:    "node-os-lifecycle",
		Severity: finding.Low,
		Title: fmt.Sprintf("%d of %d nodes run one OS image and kernel (%s, %s) updated in place, %s",
			len(same), len(s.Nodes), top.osImage, top.kernel, coordinator),
		Objects: refs,
		Cases:   []string{caseUbuntuSystemdDNS, caseDatadogNetworkd, caseHWEKernelPanic, caseAllNodesRebooted},
	}
	nothing := "Nothing in the cluster stages those changes: no patch coordinator runs and no node image was refreshed recently."
	then := "An automatic package update therefore"
	if !complete {
		then = "Unless such a coordinator runs, an automatic package update"
		nothing = fmt.Sprintf("No patch coordinator is among %s, and no node image was refreshed recently; %s were not seen, so a "+
			"coordinator there cannot be ruled out.", strings.Join(looked, " and "), strings.Join(unseen, " and "))
	}
	// Nodes without a creationTimestamp (files that omit it) are of
	// unknown age: not counted as old, though they do not make the fleet
	// young either.
	age := fmt.Sprintf("%d of them are older than %d days", len(same)-young-undated, th.YoungNodeDays)
	if undated > 0 {
		age += fmt.Sprintf(" (%d give no creationTimestamp)", undated)
	}
	f.Message = fmt.Sprintf("%d of %d nodes (%.0f%%) run %q with kernel %s, an OS that changes packages in place, and %s. "+
		"%s %s reaches every node in the same window, so one bad systemd, "+
		"networkd or kernel package can take down the whole fleet at once rather than one pool%s.",
		len(same), len(s.Nodes), share*100, top.osImage, top.kernel, age, nothing, then, check.MoreText(more))
	f.Remediation = "Deliver OS changes as node images, pool by pool: on AKS set the node OS upgrade channel to NodeImage with a " +
		"maintenance window; elsewhere replace nodes from new images (managed node group updates, Karpenter drift) or run a " +
		"coordinator such as kured with unattended upgrades staged per pool. Keep at least two pools on different image " +
		"versions so a bad update can be stopped before it reaches all of them."
	var fleet finding.Grouper
	for _, n := range same {
		fleet.Add(check.NodeRef(n.Name), finding.Value("status.nodeInfo.osImage", top.osImage), finding.Value("status.nodeInfo.kernelVersion", top.kernel))
	}
	f.AddEvidence(fleet.Items()...)
	f.Evidence = append(f.Evidence, fmt.Sprintf("%d of the %d nodes in the input; %s at this audit", len(same), len(s.Nodes), age))
	for i, n := range same {
		if i == 5 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("… and %d more nodes", len(same)-i))
			break
		}
		f.AddEvidence(finding.Quote(check.NodeRef(n.Name), createdField(n)))
	}
	if complete {
		f.Evidence = append(f.Evidence, "no DaemonSet or Deployment matches a patch coordinator ("+strings.Join(names, ", ")+")")
	} else {
		f.Evidence = append(f.Evidence, fmt.Sprintf("none of %s matches a patch coordinator (%s); unknown: %s",
			strings.Join(looked, " and "), strings.Join(names, ", "), strings.Join(unseen, ", ")))
	}
	if !newestImage.IsZero() {
		f.Evidence = append(f.Evidence, fmt.Sprintf("newest %s: %s", facts.AKSNodeImageLabel, newestImage.Format(time.DateOnly)))
	}
	return f, true
}

// patchCoordinator finds a DaemonSet or Deployment that stages node OS
// updates, by name or image repository.
func patchCoordinator(s *snapshot.Snapshot, facts *lifecycleFacts) bool {
	// Any match answers, so each container's repository is worked out
	// once and tried against every match, not once per match (with a
	// copy of the container each time).
	matchesText := func(text string) bool {
		for _, c := range facts.PatchCoordinators {
			for _, m := range c.Match {
				if strings.Contains(text, m) {
					return true
				}
			}
		}
		return false
	}
	matches := func(name string, spec *corev1.PodSpec) bool {
		if matchesText(name) {
			return true
		}
		for j := range spec.Containers {
			if matchesText(check.ImageRepository(spec.Containers[j].Image)) {
				return true
			}
		}
		return false
	}
	for i := range s.DaemonSets {
		if matches(s.DaemonSets[i].Name, &s.DaemonSets[i].Spec.Template.Spec) {
			return true
		}
	}
	for i := range s.Deployments {
		if matches(s.Deployments[i].Name, &s.Deployments[i].Spec.Template.Spec) {
			return true
		}
	}
	return false
}

// createdField quotes a node's creationTimestamp as the API writes it
// (RFC 3339, UTC), or its absence.
func createdField(n *corev1.Node) finding.Field {
	if n.CreationTimestamp.IsZero() {
		return finding.Absent("metadata.creationTimestamp")
	}
	return finding.Value("metadata.creationTimestamp", n.CreationTimestamp.UTC().Format(time.RFC3339))
}
