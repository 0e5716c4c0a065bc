package runtime

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

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
	// A row matches on a node's OS image, kubelet and runtime versions
	// only: the nodes of one pool share them, and each distinct triple is
	// matched against the table once (the rows' slices are shared by those
	// nodes and only read).
	type nodeKey struct{ osImage, kubelet, runtime string }
	rowsOf := map[nodeKey]map[string][]*changedNode{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		info := &n.Status.NodeInfo
		if info.OSImage == "" && info.ContainerRuntimeVersion == "" && info.KubeletVersion == "" {
			noInfo++
			continue
		}
		key := nodeKey{info.OSImage, info.KubeletVersion, info.ContainerRuntimeVersion}
		byKind, seen := rowsOf[key]
		if !seen {
			byKind = map[string][]*changedNode{}
			for _, r := range facts.Nodes {
				if r.matches(n) {
					byKind[r.change.Kind] = append(byKind[r.change.Kind], r)
				}
			}
			rowsOf[key] = byKind
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

// imageRow is the row of images whose repository is the image's, or ends
// with it after a slash (any registry or mirror prefix), or nil.
func imageRow(images []*reliantImage, image string) *reliantImage {
	repo, _, _ := check.ImageParts(image)
	for _, im := range images {
		// repo == im.Repo, or repo ends with "/"+im.Repo, without building
		// that string for every container of every pod.
		if strings.HasSuffix(repo, im.Repo) && (len(repo) == len(im.Repo) || repo[len(repo)-len(im.Repo)-1] == '/') {
			return im
		}
	}
	return nil
}
