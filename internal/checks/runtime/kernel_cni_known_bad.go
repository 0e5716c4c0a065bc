package runtime

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	kernelCNIID   = "kernel-cni-known-bad"
	ruleNodeStack = "node-os-kernel-runtime"
	ruleNodeCNI   = "node-kernel-cni-agent"
	// aksDensePods is the pod count per node from which the AKS containerd
	// 1.4.4 regression showed ("about 70 pods", Azure/AKS#2246); nodes that
	// can hold that many are the exposed ones.
	aksDensePods = 70
)

//go:embed data/kernel-cni-known-bad.yaml
var kernelCNIData []byte

type stackRow struct {
	ID       string `json:"id"`
	Case     string `json:"case"`
	Reviewed string `json:"reviewed"`
	Severity string `json:"severity"`
	OSImage  string `json:"osImage"`
	Kernel   string `json:"kernel"`
	Runtime  *struct {
		Name     string   `json:"name"`
		Versions []string `json:"versions"`
		// ExceptBuilds are vendor builds of a listed version that carry
		// the fix (k3s's containerd 1.6.14-k3s1), matched as reported.
		ExceptBuilds []string `json:"exceptBuilds"`
	} `json:"runtime"`
	CNI *struct {
		Agent string `json:"agent"`
		From  string `json:"from"`
		Below string `json:"below"`
	} `json:"cni"`
	NodeImageBefore *struct {
		Label string `json:"label"`
		Date  string `json:"date"`
	} `json:"nodeImageBefore"`
	Note    string   `json:"note"`
	Sources []string `json:"sources"`

	osRE, kernelRE *regexp.Regexp
	from, below    check.KubeVersion
	hasBelow       bool
	before         time.Time
}

// stackFacts is data/kernel-cni-known-bad.yaml.
type stackFacts struct {
	Rows []*stackRow `json:"rows"`
}

var loadStackRows = check.Facts("data/kernel-cni-known-bad.yaml", kernelCNIData, func(f *stackFacts) error {
	for _, r := range f.Rows {
		bad := func(what string, err error) error {
			return fmt.Errorf("data/kernel-cni-known-bad.yaml: %s: %s: %v", r.ID, what, err)
		}
		var err error
		if r.OSImage != "" {
			if r.osRE, err = regexp.Compile(r.OSImage); err != nil {
				return bad("osImage", err)
			}
		}
		if r.Kernel != "" {
			if r.kernelRE, err = regexp.Compile(r.Kernel); err != nil {
				return bad("kernel", err)
			}
		}
		if r.CNI != nil {
			var ok bool
			if r.from, ok = check.ParseKubeVersion(r.CNI.From); !ok {
				return bad("cni.from", fmt.Errorf("%q", r.CNI.From))
			}
			if r.CNI.Below != "" {
				if r.below, r.hasBelow = check.ParseKubeVersion(r.CNI.Below); !r.hasBelow {
					return bad("cni.below", fmt.Errorf("%q", r.CNI.Below))
				}
			}
		}
		if r.NodeImageBefore != nil {
			if r.before, err = time.Parse(time.DateOnly, r.NodeImageBefore.Date); err != nil {
				return bad("nodeImageBefore", err)
			}
		}
		if _, err := time.Parse(time.DateOnly, r.Reviewed); err != nil {
			return bad("reviewed", err)
		}
	}
	return nil
})

// kernelCNIKnownBadCheck matches each node's OS image, kernel, runtime and
// CNI agent against a curated table of combinations with published
// breakage. Each row is sourced and carries the day it was last reviewed.
func kernelCNIKnownBadCheck() check.Check {
	cases := []string{}
	if facts, err := loadStackRows(); err == nil {
		seen := map[string]bool{}
		for _, r := range facts.Rows {
			if !seen[r.Case] {
				seen[r.Case] = true
				cases = append(cases, r.Case)
			}
		}
	}
	return check.Check{
		ID:       kernelCNIID,
		Title:    "Node OS, kernel, runtime and CNI agent combinations with published breakage",
		Severity: finding.High,
		Description: "Matches every node's status.nodeInfo (osImage, kernelVersion, containerRuntimeVersion), its node image " +
			"label and the version of the Cilium or Calico agent that runs on it (from its pods, else from the DaemonSets that " +
			"target it) against a table of combinations reported broken: CentOS/RHEL 7 3.10 kernels with the kmem cgroup leak, " +
			"Flatcar 3033.2.2 with Cilium IPsec, Flatcar 2605 and Ubuntu 22.04 (systemd 245 and later) with Cilium releases " +
			"before the agent-written rp_filter override, kernels 6.18.5 and 7.2 with the Cilium releases that failed on them, calico-node " +
			"3.27.3 and 3.28.0 on Ubuntu 20.04's 5.4 kernel, Cilium 1.15.4, AKS node images with containerd 1.4.4, containerd " +
			"1.6.9 to 1.6.14 (whose next restart re-creates the node's pods), the AKS kernel 6.2.0-1015-azure on which Azure CNI " +
			"could not create pod endpoints, and the kernel " +
			"of the recalled EKS Amazon Linux 2 AMI v20221027 (the other recalled EKS AMIs leave no trace on the node). Each row " +
			"is sourced and dated (data/kernel-cni-known-bad.yaml); a row whose trigger also needs a setting the API does not " +
			"show (IPsec on, a boot parameter) is medium. The table only knows what it lists: vendor kernels with backported " +
			"fixes are still matched, and unlisted combinations are not judged.",
		Reads: check.Needs(snapshot.Nodes, snapshot.DaemonSets, snapshot.Pods),
		Rules: []check.Rule{
			{ID: ruleNodeStack, Summary: "no node runs an OS, kernel or runtime combination listed as broken",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleNodeCNI, Summary: "no node runs a CNI agent release listed as broken with its kernel or OS",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets, snapshot.Pods}},
		},
		Cases: check.Graded(cases, check.Prevents("aks-containerd-1-4-4-containercreating-2021", "containerd-1-6-9-sandbox-ip-lost-restart-recreates-pods-2022", "centos7-kmem-accounting-cgroup-leak-2018"), check.Detects("flatcar-3033-2-2-kernel-breaks-cilium-ipsec-2022", "flatcar-systemd-245-rp-filter-breaks-cilium-2020", "new-kernel-vs-cilium-bpf-incompatibility-2026", "cni-minor-release-regressions-calico-3-27-cilium-1-15-4-2024", "dfds-recalled-eks-ami-daily-rollover-2022", "aks-kernel-6-2-azure-cni-transparent-endpoint-2023")),
		Run:   runKernelCNIKnownBad,
	}
}

// cniAgent recognises the CNI agent images the table knows.
func cniAgent(image string) (agent string, v check.KubeVersion, ok bool) {
	repo, tag, _ := check.ImageParts(image)
	switch {
	case strings.HasSuffix(repo, "cilium/cilium"):
		agent = "cilium"
	case strings.HasSuffix(repo, "calico/node"):
		agent = "calico-node"
	default:
		return "", v, false
	}
	v, ok = check.ParseKubeVersion(tag)
	return agent, v, ok
}

type agentVersion struct {
	v    check.KubeVersion
	from string // where the version was read
}

func runKernelCNIKnownBad(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	facts, err := loadStackRows()
	if err != nil {
		return nil, err
	}
	rows := facts.Rows
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input holds no nodes")
	}
	// The agent on each node: its pod if present, else the DaemonSets
	// that target the node.
	onNode := map[string]map[string]agentVersion{}
	unreadable := 0
	note := func(node, agent string, av agentVersion) {
		m := onNode[node]
		if m == nil {
			m = map[string]agentVersion{}
			onNode[node] = m
		}
		if _, seen := m[agent]; !seen {
			m[agent] = av
		}
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Spec.NodeName == "" {
			continue
		}
		for _, c := range p.Spec.Containers {
			if agent, v, ok := cniAgent(c.Image); ok {
				note(p.Spec.NodeName, agent, agentVersion{v, fmt.Sprintf("Pod %s/%s image %s", p.Namespace, p.Name, c.Image)})
			} else if agent != "" {
				unreadable++
			}
		}
	}
	type dsAgent struct {
		spec  *corev1.PodSpec
		agent string
		av    agentVersion
	}
	var daemons []dsAgent
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			if agent, v, ok := cniAgent(c.Image); ok {
				daemons = append(daemons, dsAgent{&d.Spec.Template.Spec, agent,
					agentVersion{v, fmt.Sprintf("DaemonSet %s/%s image %s", d.Namespace, d.Name, c.Image)}})
			} else if agent != "" {
				unreadable++
			}
		}
	}
	if unreadable > 0 {
		ctx.Incomplete(ruleNodeCNI, "%s of a CNI agent carry no version tag kubegap can read", check.Plural(unreadable, "image", "images"))
	}
	cniComplete := ctx.Complete(snapshot.Pods) || ctx.Complete(snapshot.DaemonSets)

	type hit struct {
		row   *stackRow
		sev   finding.Severity
		nodes []string
		ev    []string
		facts finding.Grouper // the nodes' OS, kernel and runtime, by value
	}
	hits := map[string]*hit{}
	var order []string
	noInfo, cniUnknown := 0, 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		info := n.Status.NodeInfo
		if info.OSImage == "" && info.KernelVersion == "" {
			noInfo++
			continue
		}
		agents := onNode[n.Name]
		for _, d := range daemons {
			if _, ok := agents[d.agent]; !ok && targets(d.spec, n) {
				if agents == nil {
					agents = map[string]agentVersion{}
				}
				agents[d.agent] = d.av
			}
		}
		for _, r := range rows {
			if r.osRE != nil && !r.osRE.MatchString(info.OSImage) || r.kernelRE != nil && !r.kernelRE.MatchString(info.KernelVersion) {
				continue
			}
			var ev []string
			fields := []finding.Field{finding.Value("status.nodeInfo.osImage", info.OSImage),
				finding.Value("status.nodeInfo.kernelVersion", info.KernelVersion),
				finding.Value("status.nodeInfo.containerRuntimeVersion", info.ContainerRuntimeVersion)}
			if r.Runtime != nil {
				rt, ok := runtimeOf(n)
				if !ok || rt.Name != r.Runtime.Name || !containsVersion(r.Runtime.Versions, rt.Version) ||
					slices.Contains(r.Runtime.ExceptBuilds, rt.Raw) {
					continue
				}
			}
			sev := severityOf(r.Severity)
			if r.NodeImageBefore != nil {
				img := n.Labels[r.NodeImageBefore.Label]
				d, ok := imageDate(img)
				if !ok || !d.Before(r.before) {
					continue
				}
				fields = append(fields, finding.Value("metadata.labels["+r.NodeImageBefore.Label+"]", img))
				if pods := n.Status.Allocatable.Pods(); pods != nil && pods.Value() < aksDensePods {
					sev = finding.Medium // the regression showed on densely packed nodes
				}
			}
			if r.CNI != nil {
				av, ok := agents[r.CNI.Agent]
				if !ok {
					if !cniComplete {
						cniUnknown++
					}
					continue
				}
				if av.v.Less(r.from) || r.hasBelow && !av.v.Less(r.below) {
					continue
				}
				ev = append(ev, av.from)
			}
			key := r.ID + "|" + sev.String()
			h := hits[key]
			if h == nil {
				h = &hit{row: r, sev: sev}
				hits[key] = h
				order = append(order, key)
			}
			h.nodes = append(h.nodes, n.Name)
			h.facts.Add(check.NodeRef(n.Name), fields...)
			for _, e := range ev {
				if len(h.ev) < maxRuntimeEvidence && !slices.Contains(h.ev, e) {
					h.ev = append(h.ev, e)
				}
			}
		}
	}
	if noInfo > 0 {
		ctx.Incomplete(ruleNodeStack, "%s report no OS image or kernel", check.Plural(noInfo, "node", "nodes"))
		ctx.Incomplete(ruleNodeCNI, "%s report no OS image or kernel", check.Plural(noInfo, "node", "nodes"))
	}
	if cniUnknown > 0 {
		ctx.Incomplete(ruleNodeCNI, "nodes match a listed OS or kernel, but the input does not show which CNI agent runs on them "+
			"(pods and DaemonSets not all in the input)")
	}
	sort.Strings(order)
	var out []finding.Finding
	for _, key := range order {
		h := hits[key]
		r := h.row
		f := finding.Finding{Check: kernelCNIID, Severity: h.sev, Cases: []string{r.Case}}
		refs := make([]*corev1.Node, 0, len(h.nodes))
		byName := s.Index()
		for _, name := range h.nodes {
			refs = append(refs, byName.Node(name))
		}
		objs, more := check.NodeRefs(refs)
		f.Objects = objs
		f.Title = fmt.Sprintf("%s the known-bad combination %s", check.Subject(len(h.nodes), "node", "nodes", "matches", "match"), r.ID)
		f.Message = strings.TrimSpace(r.Note) + check.MoreText(more)
		f.AddEvidence(h.facts.Items()...)
		f.Evidence = append(f.Evidence, h.ev...)
		f.Evidence = append(f.Evidence, fmt.Sprintf("table row %s, reviewed %s; sources: %s", r.ID, r.Reviewed, strings.Join(r.Sources, ", ")))
		f.Remediation = "Move these nodes off the combination: upgrade (or hold) the node OS image or kernel, or move the CNI " +
			"agent to a release outside the listed range, canarying the change on one node that runs the cluster's real CNI " +
			"settings. Read the row's sources for the fixed releases and workarounds."
		out = append(out, f)
	}
	return out, nil
}

func severityOf(s string) finding.Severity {
	switch s {
	case "high":
		return finding.High
	case "low":
		return finding.Low
	}
	return finding.Medium
}

func containsVersion(list []string, v check.KubeVersion) bool {
	for _, s := range list {
		if w, ok := check.ParseKubeVersion(s); ok && w == v {
			return true
		}
	}
	return false
}

// imageDate reads the date at the end of an AKS node image version:
// "AKSUbuntu-1804gen2containerd-2021.03.17" or "...-202509.23.0".
func imageDate(v string) (time.Time, bool) {
	i := strings.LastIndexByte(v, '-')
	if i < 0 {
		return time.Time{}, false
	}
	tail := v[i+1:]
	for _, layout := range []string{"2006.01.02", "200601.02"} {
		t := tail
		if layout == "200601.02" {
			if j := strings.LastIndexByte(t, '.'); j > 0 && strings.Count(t, ".") == 2 {
				t = t[:j]
			}
		}
		if d, err := time.Parse(layout, t); err == nil {
			return d, true
		}
	}
	return time.Time{}, false
}
