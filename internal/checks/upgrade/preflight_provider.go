package upgrade

// upgrade-preflight: the managed providers' version changes at the target.

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/nodeos"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// providerChanges evaluates the provider add-on changes the target crosses
// against the nodes that keep their node image while the upgrade rolls.
//
// The control plane may be known exactly or only bounded (cur): every
// change at a minor between the lower bound and the target is judged. When
// the control plane is already past a change's minor (mid-upgrade), the
// change is judged while any of the provider's nodes is still below that
// minor: the DaemonSet already runs the new image, and those nodes'
// pool upgrades are what is left.
func providerChanges(ctx *check.Context, f *facts, cur check.CurrentVersion, t check.KubeVersion) []finding.Finding {
	s := ctx.Snapshot
	cp := cur.Lower
	var out []finding.Finding
	for _, pc := range f.ProviderChanges {
		if t.Less(pc.minor) {
			continue // the change is not crossed by this upgrade
		}
		already := !cp.Less(pc.minor)
		onlyUnknownBelow := false
		if already && !providerNodesBelow(s, pc.Provider, pc.minor) {
			if onlyUnknownBelow = unknownProviderNodesBelow(s, pc.minor) > 0; !onlyUnknownBelow {
				continue // the control plane and every node are past it
			}
		}
		ns, name, _ := strings.Cut(pc.DaemonSet, "/")
		var ds *appsDaemonSet
		for i := range s.DaemonSets {
			if s.DaemonSets[i].Namespace == ns && s.DaemonSets[i].Name == name {
				ds = &s.DaemonSets[i]
			}
		}
		if ds == nil {
			continue
		}
		current := ""
		for _, c := range append(ds.Spec.Template.Spec.InitContainers, ds.Spec.Template.Spec.Containers...) {
			if c.Name == pc.Container {
				current = c.Image
			}
		}
		repo, _, _ := check.ImageParts(current)
		toRepo, _, _ := check.ImageParts(pc.Image)
		switched := strings.EqualFold(repo, toRepo)
		if current == "" || !switched && !strings.EqualFold(repo, pc.FromRepository) {
			continue // neither the image the provider replaces nor its replacement
		}
		if onlyUnknownBelow {
			ctx.Incomplete(ruleProviderChanges, "%s below %s whose provider the input does not show (no providerID or provider labels) may run %s: not judged",
				check.Plural(unknownProviderNodesBelow(s, pc.minor), "node", "nodes"), pc.minor.MinorString(), pc.Image)
			continue
		}
		need, how := pc.NeedsGlibc, fmt.Sprintf("kubegap data: %s installs %s needing GLIBC_%s (%s); not inspected", pc.Image, pc.Installs, pc.NeedsGlibc, strings.Join(pc.Sources, ", "))
		if im, ok := ctx.Images[pc.Image]; ok && im.Err == "" && im.LayersRead {
			need, how = im.MaxGlibc, fmt.Sprintf("--inspect-images: %s needs GLIBC_%s (%s)", pc.Image, im.MaxGlibc, strings.Join(im.Executables, "; "))
		}
		if need == "" {
			continue
		}
		needV, err := nodeos.ParseVersion(need)
		if err != nil {
			continue
		}
		var broken []*corev1.Node
		var unknown, unknownProvider int
		for i := range s.Nodes {
			n := &s.Nodes[i]
			if p := nodeos.ProviderOf(n.Spec.ProviderID, n.Labels); p != nodeos.Provider(pc.Provider) {
				if p == nodeos.ProviderUnknown {
					unknownProvider++ // the DaemonSet may reach it: never a silent pass
				}
				continue
			}
			info := nodeos.Identify(n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion)
			switch {
			case !info.Known || info.Glibc.IsZero():
				unknown++
			case info.Glibc.Less(needV):
				broken = append(broken, n)
			}
		}
		if unknown > 0 {
			ctx.Incomplete(ruleProviderChanges, "%s with unknown glibc would run %s", check.Plural(unknown, "node", "nodes"), pc.Image)
		}
		if unknownProvider > 0 {
			ctx.Incomplete(ruleProviderChanges, "%s whose provider the input does not show (no providerID or provider labels) may run %s: not judged",
				check.Plural(unknownProvider, "node", "nodes"), pc.Image)
		}
		if len(broken) == 0 {
			continue
		}
		refs, more := check.NodeRefs(broken)
		objs := append([]finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", ds)}, refs...)
		ev := []string{
			fmt.Sprintf("DaemonSet %s container %s image %s today", pc.DaemonSet, pc.Container, current),
			fmt.Sprintf("at %s the provider switches it to %s (%s)", pc.minor.MinorString(), pc.Image, strings.Join(pc.Sources, ", ")),
			how,
		}
		if !cur.Exact {
			ev = append(ev, "control plane inferred at "+cur.Text()+": "+cur.Basis)
		}
		glibcOf := map[string]bool{}
		for _, n := range broken {
			if img := n.Status.NodeInfo.OSImage; !glibcOf[img] {
				glibcOf[img] = true
				ev = append(ev, fmt.Sprintf("osImage %q: glibc %s", img, nodeos.Identify(img, n.Status.NodeInfo.KernelVersion).Glibc))
			}
		}
		fd := finding.Finding{
			Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore,
			Title: fmt.Sprintf("Upgrading to %s rolls %s onto %s whose glibc is older than %s", t.MinorString(), pc.Image, check.Plural(len(broken), "node", "nodes"), need),
			Message: fmt.Sprintf("The control plane is upgraded first, and at %s the provider replaces %s's %s image with %s, whose %s needs "+
				"GLIBC_%s on the host. The DaemonSet rolls it to every node, including %s that still run their current node image "+
				"during the rolling upgrade: every new pod sandbox there fails, pods drained from upgraded nodes land on them and stay "+
				"pending, and budgets then block the drain%s.", pc.minor.MinorString(), pc.DaemonSet, pc.Container, pc.Image, pc.Installs,
				need, check.Plural(len(broken), "node", "nodes"), check.MoreText(more)),
			Objects: objs, Evidence: ev,
			Remediation: "Before upgrading the control plane, move these node pools to a node image whose glibc is at least " + need +
				" (for Ubuntu 20.04 pools, Ubuntu 22.04 or Azure Linux), or replace them with new pools; the upgrade is then safe.",
			Cases: []string{pc.Case},
		}
		if switched {
			// Mid-upgrade: the control plane already brought the image.
			fd.Title = fmt.Sprintf("The %s image the provider switched to at %s already runs on %s whose glibc is older than %s",
				pc.Container, pc.minor.MinorString(), check.Plural(len(broken), "node", "nodes"), need)
			fd.Message = fmt.Sprintf("The control plane is at or past %s and %s's %s already runs %s, whose %s needs GLIBC_%s on the host. "+
				"It reaches every node, including %s whose pools have not finished the upgrade and still run their old node image: "+
				"every new pod sandbox there fails, pods drained from upgraded nodes land on them and stay pending, and budgets then "+
				"block the drain%s.", pc.minor.MinorString(), pc.DaemonSet, pc.Container, current, pc.Installs, need,
				check.Plural(len(broken), "node", "nodes"), check.MoreText(more))
			fd.Remediation = "Finish these pools' upgrade with a node image whose glibc is at least " + need +
				" (for Ubuntu 20.04 pools, Ubuntu 22.04 or Azure Linux), or replace them with new pools; until then, keep new pods off them."
		}
		if kind, ok := containerKind(&ds.Spec.Template.Spec, pc.Container); ok {
			fd.AddEvidence(finding.Quote(check.Ref("apps/v1", "DaemonSet", ds),
				finding.Value(check.ContainerField("DaemonSet", kind, pc.Container, "image"), current)))
		}
		fd.AddEvidence(check.NodeValues(broken, func(n *corev1.Node) []finding.Field {
			return []finding.Field{finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage)}
		})...)
		out = append(out, fd)
	}
	return out
}

// containerKind says whether a pod spec's container of that name is an
// init container or a regular one.
func containerKind(spec *corev1.PodSpec, name string) (string, bool) {
	for _, c := range spec.InitContainers {
		if c.Name == name {
			return check.InitContainers, true
		}
	}
	for _, c := range spec.Containers {
		if c.Name == name {
			return check.Containers, true
		}
	}
	return "", false
}

type appsDaemonSet = appsv1.DaemonSet

// providerNodesBelow reports whether any node of the provider runs a
// kubelet older than minor m (or one it does not report).
func providerNodesBelow(s *snapshot.Snapshot, provider string, m check.KubeVersion) bool {
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if nodeos.ProviderOf(n.Spec.ProviderID, n.Labels) == nodeos.Provider(provider) && belowTarget(n, m) {
			return true
		}
	}
	return false
}
