package runtime

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	defaultChangeID      = "runtime-default-change-exposure"
	ruleTunTap           = "tun-tap-without-device-grant"
	ruleNoFile           = "nofile-inherited-from-runtime"
	ruleContainerdConfig = "containerd-config-patched-by-daemonset"
	// tunDevice is the path of the tun/tap device node in a container.
	tunDevice = "/dev/net/tun"
)

//go:embed data/runtime-default-change-exposure.yaml
var defaultChangeData []byte

// defaultChange is one runtime or node-image default a release changed.
type defaultChange struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Case    string   `json:"case"`
	Note    string   `json:"note"`
	Sources []string `json:"sources"`
	// KubeletFrom is, for an oom-group change, the first kubelet minor
	// with the new default.
	KubeletFrom string `json:"kubeletFrom"`

	kubeletFrom check.KubeVersion
}

// changedNode is a node runtime or image that carries a change.
type changedNode struct {
	ID         string   `json:"id"`
	Change     string   `json:"change"`
	Containerd []string `json:"containerd"`
	// ContainerdFrom matches containerd at or above this release.
	ContainerdFrom string   `json:"containerdFrom"`
	Kubelet        string   `json:"kubelet"`
	OSImage        string   `json:"osImage"`
	Note           string   `json:"note"`
	Sources        []string `json:"sources"`

	osRE   *regexp.Regexp
	from   check.KubeVersion
	change *defaultChange
}

// reliantImage is software known to rely on a change's old default.
type reliantImage struct {
	ID      string   `json:"id"`
	Change  string   `json:"change"`
	Repo    string   `json:"repo"`
	Note    string   `json:"note"`
	Sources []string `json:"sources"`
}

type defaultChangeFacts struct {
	Changes []*defaultChange `json:"changes"`
	Nodes   []*changedNode   `json:"nodes"`
	Images  []*reliantImage  `json:"images"`

	byKind map[string]*defaultChange
}

var loadDefaultChanges = check.Facts("data/runtime-default-change-exposure.yaml", defaultChangeData, func(f *defaultChangeFacts) error {
	bad := func(id, format string, args ...any) error {
		return fmt.Errorf("data/runtime-default-change-exposure.yaml: %s: %s", id, fmt.Sprintf(format, args...))
	}
	byID := map[string]*defaultChange{}
	f.byKind = map[string]*defaultChange{}
	for _, c := range f.Changes {
		if c.Kind != ruleKindTunTap && c.Kind != ruleKindNoFile && c.Kind != ruleKindContainerdConfig && c.Kind != ruleKindOOMGroup {
			return bad(c.ID, "kind %q", c.Kind)
		}
		if c.Kind == ruleKindOOMGroup {
			var ok bool
			if c.kubeletFrom, ok = check.ParseKubeVersion(c.KubeletFrom); !ok {
				return bad(c.ID, "kubeletFrom %q", c.KubeletFrom)
			}
		}
		if f.byKind[c.Kind] != nil {
			return bad(c.ID, "a second change of kind %s", c.Kind)
		}
		byID[c.ID], f.byKind[c.Kind] = c, c
	}
	for _, n := range f.Nodes {
		if n.change = byID[n.Change]; n.change == nil {
			return bad(n.ID, "unknown change %q", n.Change)
		}
		if len(n.Containerd) == 0 && n.ContainerdFrom == "" && n.Kubelet == "" && n.OSImage == "" {
			return bad(n.ID, "matches every node")
		}
		if n.ContainerdFrom != "" {
			var ok bool
			if n.from, ok = check.ParseKubeVersion(n.ContainerdFrom); !ok {
				return bad(n.ID, "containerdFrom %q", n.ContainerdFrom)
			}
		}
		for _, v := range n.Containerd {
			if _, ok := check.ParseKubeVersion(v); !ok {
				return bad(n.ID, "containerd version %q", v)
			}
		}
		if n.OSImage != "" {
			var err error
			if n.osRE, err = regexp.Compile(n.OSImage); err != nil {
				return bad(n.ID, "osImage: %v", err)
			}
		}
	}
	for _, im := range f.Images {
		if byID[im.Change] == nil || im.Repo == "" {
			return bad(im.ID, "needs a known change and a repo")
		}
	}
	return nil
})

// The kinds of change, each joined with workloads by its rule.
const (
	ruleKindTunTap           = "tun-tap"
	ruleKindNoFile           = "nofile"
	ruleKindContainerdConfig = "containerd-config"
	// ruleKindOOMGroup is joined with nodes, not images: see
	// runtime_default_change_oomgroup.go.
	ruleKindOOMGroup = "oom-group"
)

// runtimeDefaultChangeExposureCheck joins the node runtimes and images
// that changed a default with the workloads that rely on the old one.
func runtimeDefaultChangeExposureCheck() check.Check {
	var cases []string
	if f, err := loadDefaultChanges(); err == nil {
		for _, c := range f.Changes {
			cases = append(cases, c.Case)
		}
	}
	return check.Check{
		ID:       defaultChangeID,
		Title:    "Workloads that rely on a runtime default a runtime or node image release changed",
		Severity: finding.High,
		Description: "Joins a table of container-runtime and node-image defaults that releases changed " +
			"(data/runtime-default-change-exposure.yaml) with the workloads that rely on the old default. tun/tap: runc " +
			"1.2.0 to 1.2.3 no longer let every container use /dev/net/tun; a Deployment, StatefulSet or DaemonSet " +
			"container that is not privileged and either mounts /dev/net/tun from the host or adds NET_ADMIN in a known " +
			"tun user's image (Tailscale, gluetun) relies on that allow. It is high when nodes its placement admits run " +
			"a runtime listed with the change (containerd 1.7.24, 2.0.0 and 2.0.1 by the runc they pin, k3s " +
			"v1.31.3+k3s1, Talos 1.8), medium otherwise: any runtime update that brings such a runc breaks it. Open " +
			"files: EKS AMI v20231220 lowered containerd's soft open-file limit to 1024 on Amazon Linux 2 nodes; pods of " +
			"Envoy-based images there are reported low, as an inference, since no field shows the limit a process " +
			"gets or whether it raises its own. Which runc a node runs is not in the API: the containerd rows rest on " +
			"the runc each containerd release pins, which a separately packaged runc overrides. containerd " +
			"configuration: a DaemonSet whose privileged container mounts the host's /etc, /etc/containerd or " +
			"/etc/containerd/config.toml writable edits containerd's configuration, and containerd 2 changed how the " +
			"inline registry.mirrors and registry.configs it was usually written for load (with config_path they " +
			"fail the CRI plugin or are lost). High when its command, arguments or environment name those tables and " +
			"nodes it admits run containerd 2; medium when it names them on containerd 1.x nodes (the node image " +
			"that brings containerd 2 breaks it), or mounts the configuration on containerd 2 nodes; low when it only " +
			"mounts it on containerd 1.x nodes, since a script in a ConfigMap is not read. " +
			"OOM group kills: from " +
			"kubelet 1.28 an OOM kill on a cgroup v2 node ends every process of the container; nodes still on an older " +
			"kubelet, whose OS boots cgroup v2 by default, and whose kernel monitor reports OOMKilling events (one " +
			"process killed, the container left running) are medium: those workloads survive such kills today and " +
			"restart whole after the kubelet upgrade. Events last about an hour, so a quiet rule proves little.",
		Reads: append(check.Needs(snapshot.Nodes, snapshot.Deployments, snapshot.StatefulSets, snapshot.DaemonSets, snapshot.Pods),
			check.Optional(snapshot.Events)),
		Rules: []check.Rule{
			{ID: ruleTunTap, Summary: "no workload uses /dev/net/tun without privileged mode or a device grant",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.Deployments, snapshot.StatefulSets, snapshot.DaemonSets, snapshot.Pods}},
			{ID: ruleNoFile, Summary: "no Envoy-based pod runs on a node image whose runtime unit changed the open-file limit",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.Pods}},
			{ID: ruleContainerdConfig, Summary: "no privileged DaemonSet rewrites containerd's configuration on the host",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets}},
			{ID: ruleOOMGroup, Summary: "no node about to move to group OOM kills already reports single-process OOM kills",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.Events}},
		},
		Cases: check.Graded(cases, check.Prevents("runc-1-2-drops-tun-tap-default-allow-2024", "eks-ami-v20231220-containerd-nofile-1024-2023",
			"containerd-2-registry-mirrors-break-node-patching-daemonsets-2024-2026", caseOOMGroup)),
		Run: runDefaultChangeExposure,
	}
}

// nodeMatch is a node and the changed-node rows it matches.
type nodeMatch struct {
	node *corev1.Node
	rows []*changedNode
}

func runDefaultChangeExposure(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadDefaultChanges()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input holds no nodes")
	}
	matched := map[string][]nodeMatch{} // change kind -> nodes carrying it
	noInfo := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		info := n.Status.NodeInfo
		if info.OSImage == "" && info.ContainerRuntimeVersion == "" && info.KubeletVersion == "" {
			noInfo++
			continue
		}
		byKind := map[string][]*changedNode{}
		for _, r := range facts.Nodes {
			if r.matches(n) {
				byKind[r.change.Kind] = append(byKind[r.change.Kind], r)
			}
		}
		for kind, rows := range byKind {
			matched[kind] = append(matched[kind], nodeMatch{n, rows})
		}
	}
	if noInfo > 0 {
		for _, r := range []string{ruleTunTap, ruleNoFile, ruleContainerdConfig} {
			ctx.Incomplete(r, "%s report no OS image, runtime or kubelet version", check.Plural(noInfo, "node", "nodes"))
		}
	}
	var out []finding.Finding
	if c := facts.byKind[ruleKindOOMGroup]; c != nil {
		f, ok, err := oomGroupFinding(ctx, c)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	if c := facts.byKind[ruleKindTunTap]; c != nil {
		out = append(out, tunTapFindings(ctx, c, facts.imagesOf(c), matched[ruleKindTunTap])...)
	}
	if c := facts.byKind[ruleKindNoFile]; c != nil {
		if f, ok := noFileFinding(ctx, c, facts.imagesOf(c), matched[ruleKindNoFile]); ok {
			out = append(out, f)
		}
	}
	if c := facts.byKind[ruleKindContainerdConfig]; c != nil {
		out = append(out, containerdConfigFindings(s, c, matched[ruleKindContainerdConfig])...)
	}
	return out, nil
}

func (f *defaultChangeFacts) imagesOf(c *defaultChange) []*reliantImage {
	var out []*reliantImage
	for _, im := range f.Images {
		if im.Change == c.ID {
			out = append(out, im)
		}
	}
	return out
}

func (r *changedNode) matches(n *corev1.Node) bool {
	info := n.Status.NodeInfo
	if r.osRE != nil && !r.osRE.MatchString(info.OSImage) {
		return false
	}
	if r.Kubelet != "" && info.KubeletVersion != r.Kubelet {
		return false
	}
	if len(r.Containerd) > 0 || r.ContainerdFrom != "" {
		rt, ok := runtimeOf(n)
		if !ok || rt.Name != "containerd" || !rt.Parsed {
			return false
		}
		if len(r.Containerd) > 0 && !containsVersion(r.Containerd, rt.Version) {
			return false
		}
		if r.ContainerdFrom != "" && rt.Version.Less(r.from) {
			return false
		}
	}
	return true
}

// nodeFields quotes what a changed-node row matched on.
func nodeFields(n *corev1.Node, r *changedNode) []finding.Field {
	info := n.Status.NodeInfo
	var fs []finding.Field
	if r.OSImage != "" {
		fs = append(fs, finding.Value("status.nodeInfo.osImage", info.OSImage))
	}
	if r.Kubelet != "" {
		fs = append(fs, finding.Value("status.nodeInfo.kubeletVersion", info.KubeletVersion))
	}
	if len(r.Containerd) > 0 || r.ContainerdFrom != "" {
		fs = append(fs, finding.Value("status.nodeInfo.containerRuntimeVersion", info.ContainerRuntimeVersion))
	}
	return fs
}

func imageRow(images []*reliantImage, image string) *reliantImage {
	repo, _, _ := check.ImageParts(image)
	for _, im := range images {
		if repo == im.Repo || strings.HasSuffix(repo, "/"+im.Repo) {
			return im
		}
	}
	return nil
}

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
	onChanged := map[int][]nodeMatch{}
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
	kinds := []struct {
		kind string
		cs   []corev1.Container
	}{{check.InitContainers, spec.InitContainers}, {check.Containers, spec.Containers}}
	for _, k := range kinds {
		for _, c := range k.cs {
			sc := c.SecurityContext
			if sc != nil && sc.Privileged != nil && *sc.Privileged || requestsTunDevice(c.Resources) {
				continue
			}
			base := "spec." + k.kind + "[name=" + c.Name + "]."
			privileged := finding.Absent(base + "securityContext.privileged")
			if sc != nil && sc.Privileged != nil {
				privileged = finding.Value(base+"securityContext.privileged", false)
			}
			for _, m := range c.VolumeMounts {
				if tunVolumes[m.Name] {
					return tunUser{why: fmt.Sprintf("container %s mounts the host's %s at %s and is not privileged", c.Name, tunDevice, m.MountPath),
						fields: []finding.Field{finding.Value("spec.volumes[name="+m.Name+"].hostPath.path", tunDevice),
							finding.Value(base+"volumeMounts[name="+m.Name+"].mountPath", m.MountPath), privileged}}, true
				}
			}
			if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Add, "NET_ADMIN") {
				continue
			}
			if im := imageRow(images, c.Image); im != nil {
				return tunUser{why: fmt.Sprintf("container %s adds NET_ADMIN, is not privileged, and runs %s (%s)", c.Name, c.Image,
					strings.TrimSuffix(strings.TrimSpace(im.Note), ".")),
					fields: []finding.Field{finding.Value(base+"image", c.Image),
						finding.Value(base+"securityContext.capabilities.add", finding.JSONText(sc.Capabilities.Add)), privileged}}, true
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

// noFileFinding reports the pods of Envoy-based images on nodes of an
// image whose runtime unit lowered the open-file soft limit. That they
// rely on the limit is an inference: nothing in the API shows a process's
// limit or whether it raises its own.
func noFileFinding(ctx *check.Context, c *defaultChange, images []*reliantImage, nodes []nodeMatch) (finding.Finding, bool) {
	if len(nodes) == 0 {
		return finding.Finding{}, false
	}
	s := ctx.Snapshot
	onNode := map[string]nodeMatch{}
	for _, nm := range nodes {
		onNode[nm.node.Name] = nm
	}
	var pods finding.Grouper
	var objs []finding.ObjectRef
	usedNodes := map[string]bool{}
	var rowsUsed []*changedNode
	var imagesUsed []*reliantImage
	count := 0
	for i := range s.Pods {
		p := &s.Pods[i]
		for _, k := range []struct {
			kind string
			cs   []snapshot.Container
		}{{check.InitContainers, p.Spec.InitContainers}, {check.Containers, p.Spec.Containers}} {
			for _, ct := range k.cs {
				// The image first: few pods run one, and the node lookup
				// is the costlier test at 100,000 pods.
				im := imageRow(images, ct.Image)
				if im == nil {
					continue
				}
				nm, ok := onNode[p.Spec.NodeName]
				if !ok {
					continue
				}
				count++
				ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
				if len(objs) < check.MaxListedObjects {
					objs = append(objs, ref)
				}
				pods.Add(ref, finding.Value("spec."+k.kind+"[name="+ct.Name+"].image", ct.Image),
					finding.Value("spec.nodeName", p.Spec.NodeName))
				usedNodes[nm.node.Name] = true
				for _, r := range nm.rows {
					if !slices.Contains(rowsUsed, r) {
						rowsUsed = append(rowsUsed, r)
					}
				}
				if !slices.Contains(imagesUsed, im) {
					imagesUsed = append(imagesUsed, im)
				}
			}
		}
	}
	if !ctx.Complete(snapshot.Pods) && count == 0 {
		ctx.Incomplete(ruleNoFile, "nodes of a listed image are in the input, but not all pods are")
	}
	if count == 0 {
		return finding.Finding{}, false
	}
	f := finding.Finding{Check: defaultChangeID, Rule: ruleNoFile, Severity: finding.Low, Cases: []string{c.Case}, Objects: objs}
	f.AddEvidence(pods.Items()...)
	names := make([]string, 0, len(usedNodes))
	for n := range usedNodes {
		names = append(names, n)
	}
	sort.Strings(names)
	var nodeG finding.Grouper
	for _, name := range names {
		nm := onNode[name]
		for _, r := range nm.rows {
			nodeG.Add(check.NodeRef(name), nodeFields(nm.node, r)...)
		}
	}
	f.AddEvidence(nodeG.Items()...)
	f.Title = fmt.Sprintf("%s of Envoy-based images run on %s of a node image whose runtime unit once lowered the open-file limit",
		check.Plural(count, "container", "containers"), check.Plural(len(names), "node", "nodes"))
	f.Message = strings.TrimSpace(c.Note) + " That these containers rely on a high inherited soft limit is kubegap's " +
		"inference from the software they run: no field shows the limit a process gets, or whether it raises its own."
	for _, im := range imagesUsed {
		f.Message += " " + strings.TrimSpace(im.Note)
	}
	f.Evidence = append(f.Evidence, "change "+c.ID+"; sources: "+strings.Join(c.Sources, ", "))
	for _, r := range rowsUsed {
		f.Evidence = append(f.Evidence, "node row "+r.ID+"; sources: "+strings.Join(r.Sources, ", "))
	}
	for _, im := range imagesUsed {
		f.Evidence = append(f.Evidence, "image row "+im.ID+"; sources: "+strings.Join(im.Sources, ", "))
	}
	f.Remediation = "Make the need explicit instead of inheriting it: have the software raise its own soft limit at start " +
		"(what containerd's pull request 8924 expects of software that needs more), or set the limit in the node image's " +
		"runtime unit yourself, and canary each new node image release with these workloads before rolling it out."
	return f, true
}
