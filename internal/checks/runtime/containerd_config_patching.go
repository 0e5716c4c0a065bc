package runtime

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// containerdConfigPaths are the host paths whose writable mount lets a
// container rewrite containerd's configuration: the file itself, its
// directory, and /etc as a whole (the GKE private-registry sample mounts
// the host's /etc and appends to /mnt/etc/containerd/config.toml).
var containerdConfigPaths = map[string]bool{
	"/etc":                        true,
	"/etc/containerd":             true,
	"/etc/containerd/config.toml": true,
}

// inlineRegistryTables are the CRI plugin's inline registry settings that
// containerd 2 no longer combines with config_path.
var inlineRegistryTables = []string{"registry.mirrors", "registry.configs"}

// configPatcher is a DaemonSet container that can rewrite containerd's
// configuration on the host.
type configPatcher struct {
	fields []finding.Field
	// names is the quoted field of a command, argument or environment
	// value that spells an inline registry table, when one does.
	names *finding.Field
	why   string
}

// containerdConfigFindings reports the DaemonSets that patch containerd's
// configuration from the pod, by the containerd major their nodes run.
// Which tables a script in a ConfigMap writes is not read, so a mount
// alone on containerd 1.x nodes is low: it shows the coupling, not the
// schema.
func containerdConfigFindings(s *snapshot.Snapshot, c *defaultChange, v2 []nodeMatch) []finding.Finding {
	onV2 := map[string]nodeMatch{}
	for _, nm := range v2 {
		onV2[nm.node.Name] = nm
	}
	var out []finding.Finding
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		p, ok := containerdPatcher(&d.Spec.Template.Spec)
		if !ok {
			continue
		}
		placement := check.DaemonSetPlacement(d)
		var nodes2, nodes1 []*corev1.Node
		for j := range s.Nodes {
			n := &s.Nodes[j]
			if rt, ok := runtimeOf(n); !ok || rt.Name != "containerd" || !placement.Matches(n) {
				continue
			}
			if _, ok := onV2[n.Name]; ok {
				nodes2 = append(nodes2, n)
			} else {
				nodes1 = append(nodes1, n)
			}
		}
		if len(nodes2)+len(nodes1) == 0 {
			continue
		}
		ref := check.Ref("apps/v1", "DaemonSet", d)
		f := finding.Finding{Check: defaultChangeID, Rule: ruleContainerdConfig, Cases: []string{c.Case}, Objects: []finding.ObjectRef{ref}}
		var g finding.Grouper
		fields := p.fields
		if p.names != nil {
			fields = append(fields, *p.names)
		}
		g.Add(ref, fields...)
		listed := nodes2
		if len(listed) == 0 {
			listed = nodes1
		}
		var nodeG finding.Grouper
		for k, n := range listed {
			if k == check.MaxListedObjects {
				break
			}
			nodeG.Add(check.NodeRef(n.Name), finding.Value("status.nodeInfo.containerRuntimeVersion", n.Status.NodeInfo.ContainerRuntimeVersion))
		}
		f.AddEvidence(g.Items()...)
		f.AddEvidence(nodeG.Items()...)
		switch {
		case p.names != nil && len(nodes2) > 0:
			f.Severity = finding.High
			f.Title = fmt.Sprintf("DaemonSet %s writes containerd's inline registry tables on %s running containerd 2",
				ref, check.Plural(len(nodes2), "node", "nodes"))
		case p.names != nil:
			f.Severity = finding.Medium
			f.Title = fmt.Sprintf("DaemonSet %s writes containerd's inline registry tables, which break when its %s move to containerd 2",
				ref, check.Plural(len(nodes1), "node", "nodes"))
		case len(nodes2) > 0:
			f.Severity = finding.Medium
			f.Title = fmt.Sprintf("DaemonSet %s rewrites containerd's configuration on %s running containerd 2",
				ref, check.Plural(len(nodes2), "node", "nodes"))
		default:
			f.Severity = finding.Low
			f.Title = fmt.Sprintf("DaemonSet %s rewrites containerd's configuration on %s, coupling it to containerd 1.x's schema",
				ref, check.Plural(len(nodes1), "node", "nodes"))
		}
		f.Message = strings.TrimSpace(c.Note) + " " + p.why + "."
		if p.names == nil {
			f.Message += " What it writes is not in the pod spec (a script or TOML kept in a ConfigMap is not read): check " +
				"whether it adds registry.mirrors or registry.configs to config.toml."
		}
		if len(nodes2) == 0 {
			f.Message += fmt.Sprintf(" The %s it runs on report containerd 1.x; the node image that brings containerd 2 "+
				"(GKE 1.33, for one) is when it breaks.", check.Plural(len(nodes1), "node", "nodes"))
		}
		f.Evidence = append(f.Evidence, "change "+c.ID+"; sources: "+strings.Join(c.Sources, ", "))
		f.Remediation = "Write registry mirrors and CAs as hosts.toml files under containerd's config_path " +
			"(/etc/containerd/certs.d/<registry>/hosts.toml) instead of appending registry.mirrors or registry.configs to " +
			"config.toml, keep the provider's own entries (GKE's docker.io mirror) in the same form, and test the DaemonSet " +
			"on a node image with containerd 2 before node pools move to it; GKE holds automatic upgrades to 1.33 while it " +
			"detects the deprecated properties, and a maintenance exclusion holds them longer."
		out = append(out, f)
	}
	return out
}

// containerdPatcher finds a privileged container of spec that mounts one
// of containerdConfigPaths from the host writable. Fields are relative to
// the DaemonSet.
func containerdPatcher(spec *corev1.PodSpec) (configPatcher, bool) {
	hostVolumes := map[string]string{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil && containerdConfigPaths[path.Clean(v.HostPath.Path)] {
			hostVolumes[v.Name] = v.HostPath.Path
		}
	}
	if len(hostVolumes) == 0 {
		return configPatcher{}, false
	}
	kinds := []struct {
		kind string
		cs   []corev1.Container
	}{{check.InitContainers, spec.InitContainers}, {check.Containers, spec.Containers}}
	var found configPatcher
	ok := false
	for _, k := range kinds {
		for _, c := range k.cs {
			base := "spec.template.spec." + k.kind + "[name=" + c.Name + "]."
			if found.names == nil {
				found.names = inlineTableField(base, c)
			}
			if ok {
				continue
			}
			sc := c.SecurityContext
			if sc == nil || sc.Privileged == nil || !*sc.Privileged {
				continue
			}
			for _, m := range c.VolumeMounts {
				hp, isHost := hostVolumes[m.Name]
				if !isHost || m.ReadOnly {
					continue
				}
				found.fields = []finding.Field{
					finding.Value("spec.template.spec.volumes[name="+m.Name+"].hostPath.path", hp),
					finding.Value(base+"volumeMounts[name="+m.Name+"].mountPath", m.MountPath),
					finding.Value(base+"securityContext.privileged", true),
				}
				found.why = fmt.Sprintf("Its privileged container %s mounts the host's %s writable at %s", c.Name, hp, m.MountPath)
				ok = true
				break
			}
		}
	}
	return found, ok
}

// inlineTableField quotes the first command, argument or environment
// value of c that spells an inline registry table.
func inlineTableField(base string, c corev1.Container) *finding.Field {
	spells := func(v string) bool {
		for _, t := range inlineRegistryTables {
			if strings.Contains(v, t) {
				return true
			}
		}
		return false
	}
	for i, v := range c.Command {
		if spells(v) {
			f := finding.Value(fmt.Sprintf("%scommand[%d]", base, i), v)
			return &f
		}
	}
	for i, v := range c.Args {
		if spells(v) {
			f := finding.Value(fmt.Sprintf("%sargs[%d]", base, i), v)
			return &f
		}
	}
	for _, e := range c.Env {
		if spells(e.Value) {
			f := finding.Value(base+"env[name="+e.Name+"].value", e.Value)
			return &f
		}
	}
	return nil
}
