package runtime

// runtime-default-change-exposure: the TUN/TAP rule (workloads relying on
// /dev/net/tun on nodes whose runtime no longer allows it by default).

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// tunUser is one container that relies on the default tun/tap allow.
type tunUser struct {
	ref       finding.ObjectRef
	placement check.Placement
	fields    []finding.Field
	why       string
}

func tunTapFindings(ctx *check.Context, c *defaultChange, images []*reliantImage, nodes []nodeMatch) []finding.Finding {
	s := ctx.Snapshot
	var users []tunUser
	see := func(apiVersion, kind string, m metav1.Object, spec *corev1.PodSpec, p check.Placement) {
		if u, ok := tunReliance(spec, images); ok {
			u.ref = check.Ref(apiVersion, kind, m)
			u.placement = p
			for i := range u.fields {
				u.fields[i].Path = "spec.template." + u.fields[i].Path
			}
			users = append(users, u)
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		see("apps/v1", "Deployment", d, &d.Spec.Template.Spec, check.PodSpecPlacement(&d.Spec.Template.Spec))
	}
	for i := range s.StatefulSets {
		st := &s.StatefulSets[i]
		see("apps/v1", "StatefulSet", st, &st.Spec.Template.Spec, check.PodSpecPlacement(&st.Spec.Template.Spec))
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		see("apps/v1", "DaemonSet", d, &d.Spec.Template.Spec, check.DaemonSetPlacement(d))
	}
	// Pods keep no security context: one without an owner that mounts the
	// device cannot be judged.
	bare := 0
	for i := range s.Pods {
		p := &s.Pods[i]
		if len(p.OwnerReferences) == 0 && slices.ContainsFunc(p.Spec.Volumes, func(v snapshot.HostPathVolume) bool { return v.Path == tunDevice }) {
			bare++
		}
	}
	if bare > 0 {
		ctx.Incomplete(ruleTunTap, "%s without an owner mount %s; kubegap does not keep a pod's security context, so whether "+
			"they are privileged is unknown", check.Plural(bare, "pod", "pods"), tunDevice)
	}
	var exposed, atRisk []int
	onChanged := make([][]nodeMatch, len(users)) // by user
	// Each user needs one admitting node to be high; the evidence quotes
	// at most MaxListedObjects nodes in all, so the scan stops there.
	quoted := map[string]bool{}
	for i := range users {
		for _, nm := range nodes {
			if len(onChanged[i]) > 0 && (len(quoted) >= check.MaxListedObjects || quoted[nm.node.Name]) {
				continue
			}
			if users[i].placement.Matches(nm.node) {
				onChanged[i] = append(onChanged[i], nm)
				quoted[nm.node.Name] = true
			}
		}
		if len(onChanged[i]) > 0 {
			exposed = append(exposed, i)
		} else {
			atRisk = append(atRisk, i)
		}
	}
	var out []finding.Finding
	mk := func(idx []int, sev finding.Severity) {
		if len(idx) == 0 {
			return
		}
		f := finding.Finding{Check: defaultChangeID, Rule: ruleTunTap, Severity: sev, Cases: []string{c.Case}}
		var g finding.Grouper
		var nodeG finding.Grouper
		seenNode := map[string]bool{}
		var rows []*changedNode
		for _, i := range idx {
			u := users[i]
			f.Objects = append(f.Objects, u.ref)
			g.Add(u.ref, u.fields...)
			for _, nm := range onChanged[i] {
				if seenNode[nm.node.Name] || len(seenNode) >= check.MaxListedObjects {
					continue
				}
				seenNode[nm.node.Name] = true
				for _, r := range nm.rows {
					nodeG.Add(check.NodeRef(nm.node.Name), nodeFields(nm.node, r)...)
					if !slices.Contains(rows, r) {
						rows = append(rows, r)
					}
				}
			}
		}
		f.AddEvidence(g.Items()...)
		f.AddEvidence(nodeG.Items()...)
		n := check.Plural(len(idx), "workload uses", "workloads use")
		f.Message = strings.TrimSpace(c.Note) + " " + tunWhy(users, idx)
		if sev == finding.High {
			f.Title = fmt.Sprintf("%s /dev/net/tun without a device grant and can run on %s whose runtime release is listed "+
				"with a runc that leaves tun/tap out of the default devices", n, check.Plural(len(seenNode), "node", "nodes"))
			f.Message += " Their pods fail there at their next start."
		} else {
			f.Title = fmt.Sprintf("%s /dev/net/tun without a device grant, relying on the runtime's default device rules", n)
			f.Message += " No node in the input runs a runtime the table lists with the change; a runtime or node image " +
				"update that brings runc 1.2.0 to 1.2.3 would break them."
		}
		for _, r := range rows {
			f.Message += " " + strings.TrimSpace(r.Note)
		}
		f.Evidence = append(f.Evidence, "change "+c.ID+"; sources: "+strings.Join(c.Sources, ", "))
		for _, r := range rows {
			f.Evidence = append(f.Evidence, "node row "+r.ID+"; sources: "+strings.Join(r.Sources, ", "))
		}
		f.Remediation = "Grant the device instead of relying on the default: expose /dev/net/tun through a device plugin " +
			"and request it as a resource, or, where the workload is trusted with it, run the container privileged. " +
			"Until then keep these workloads on nodes whose runtime bundles runc 1.2.4 or later (containerd 1.7.25, " +
			"2.0.2) or a 1.1 runc, and read the bundled runc's release notes before each node or runtime update."
		out = append(out, f)
	}
	mk(exposed, finding.High)
	mk(atRisk, finding.Medium)
	return out
}

// tunWhy says, for the first flagged workload, what shows its reliance.
func tunWhy(users []tunUser, idx []int) string {
	return "For " + users[idx[0]].ref.String() + ": " + strings.TrimSuffix(users[idx[0]].why, ".") + "."
}

// tunReliance finds a container of spec that uses the tun/tap device
// without privileged mode: one that mounts the host's /dev/net/tun, or
// one that adds NET_ADMIN in an image known to open the device. A
// container that requests an extended resource naming tun (a device
// plugin's grant) is left out. Fields are relative to the pod template.
func tunReliance(spec *corev1.PodSpec, images []*reliantImage) (tunUser, bool) {
	tunVolumes := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil && v.HostPath.Path == tunDevice {
			tunVolumes[v.Name] = true
		}
	}
	kinds := [2]string{check.InitContainers, check.Containers}
	for l, cs := range [2][]corev1.Container{spec.InitContainers, spec.Containers} {
		for j := range cs {
			c := &cs[j] // by index: not a copy of every container
			sc := c.SecurityContext
			if sc != nil && sc.Privileged != nil && *sc.Privileged || requestsTunDevice(c.Resources) {
				continue
			}
			// The field paths are built only for a container that is
			// reported.
			base := func() string { return "spec." + kinds[l] + "[name=" + c.Name + "]." }
			privileged := func() finding.Field {
				if sc != nil && sc.Privileged != nil {
					return finding.Value(base()+"securityContext.privileged", false)
				}
				return finding.Absent(base() + "securityContext.privileged")
			}
			for _, m := range c.VolumeMounts {
				if tunVolumes[m.Name] {
					return tunUser{why: fmt.Sprintf("container %s mounts the host's %s at %s and is not privileged", c.Name, tunDevice, m.MountPath),
						fields: []finding.Field{finding.Value("spec.volumes[name="+m.Name+"].hostPath.path", tunDevice),
							finding.Value(base()+"volumeMounts[name="+m.Name+"].mountPath", m.MountPath), privileged()}}, true
				}
			}
			if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Add, "NET_ADMIN") {
				continue
			}
			if im := imageRow(images, c.Image); im != nil {
				return tunUser{why: fmt.Sprintf("container %s adds NET_ADMIN, is not privileged, and runs %s (%s)", c.Name, c.Image,
					strings.TrimSuffix(strings.TrimSpace(im.Note), ".")),
					fields: []finding.Field{finding.Value(base()+"image", c.Image),
						finding.Value(base()+"securityContext.capabilities.add", finding.JSONText(sc.Capabilities.Add)), privileged()}}, true
			}
		}
	}
	return tunUser{}, false
}

func requestsTunDevice(r corev1.ResourceRequirements) bool {
	for name := range r.Limits {
		if strings.Contains(string(name), "/") && strings.Contains(strings.ToLower(string(name)), "tun") {
			return true
		}
	}
	return false
}
