package agents

// api-heavy-node-agents: the finding on a DaemonSet whose agent reads heavy
// resources cluster-wide from every node, and how it names its node.

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

func readerFinding(ds *appsv1.DaemonSet, n int, how string, ix *rbacIndex, facts *agentFacts, calico fanInFact, typha *appsv1.Deployment) (finding.Finding, bool) {
	sa := serviceAccount(ds)
	want := append(slices.Clone(heavyResources), struct{ group, resource string }{"", "secrets"})
	grants := ix.reads(ds.Namespace, sa, want)
	if len(grants) == 0 {
		return finding.Finding{}, false
	}
	imgs := images(ds)
	logAgent := slices.ContainsFunc(imgs, func(i string) bool { return slices.Contains(logAgentImages, i) })
	var ev []string
	var items []finding.EvidenceItem
	var dsFields []finding.Field // further DaemonSet fields the judgement reads
	var used []grant
	ev = append(ev, how)
	var heavy []string
	for _, r := range heavyResources {
		if g, ok := grants[r.resource]; ok {
			heavy = append(heavy, r.resource)
			used = append(used, g)
			ev = append(ev, fmt.Sprintf("may list/watch %s cluster-wide: ClusterRole %s via ClusterRoleBinding %s", r.resource, g.role, g.binding))
		}
	}
	g, secrets := grants["secrets"]
	if secrets {
		used = append(used, g)
		ev = append(ev, fmt.Sprintf("may list/watch secrets cluster-wide: ClusterRole %s via ClusterRoleBinding %s", g.role, g.binding))
	}
	// Fan-in and kubelet mode take the pod reads off the API server.
	if isCalicoNode(ds, calico) && typha != nil {
		heavy = nil
		ev = append(ev, fmt.Sprintf("Typha runs (Deployment %s/%s): calico-node reads through it", typha.Namespace, typha.Name))
		items = append(items, typhaItem(typha, calico))
	}
	args := argsText(ds)
	for _, km := range facts.KubeletMode {
		if !slices.ContainsFunc(imgs, func(i string) bool { return slices.Contains(km.Images, i) }) {
			continue
		}
		if strings.Contains(strings.ToLower(args), strings.ToLower(km.Setting)) {
			heavy = slices.DeleteFunc(heavy, func(r string) bool { return r == "pods" })
			ev = append(ev, fmt.Sprintf("%s appears in the container arguments: pod metadata comes from the kubelet", km.Setting))
			dsFields = append(dsFields, argsWith(ds, km.Setting)...)
		} else {
			ev = append(ev, fmt.Sprintf("%s is not in the container arguments; it may be set in the agent's configuration file, "+
				"which kubegap does not read. %s", km.Setting, strings.TrimSpace(km.Fact)))
		}
	}
	// An agent told its own node's name (the downward API's spec.nodeName,
	// or a node-name flag) is wired the way a fieldSelector on
	// spec.nodeName needs: its pod and node reads are, most likely, of
	// its own node. RBAC cannot tell which, so those reads drop to low.
	// Log agents are left out: the cited floods came from their per-pod
	// metadata lookups, which a node name does not bound. So is
	// calico-node without Typha: it is told its node (NODENAME) and still
	// lists every pod of the cluster itself, the load Typha exists to
	// take (the fan-in fact of the data file).
	var perNode []string
	if wiring, fields := nodeNameWiring(ds); len(wiring) > 0 && !logAgent && !isCalicoNode(ds, calico) && len(heavy) > 0 {
		ev = append(ev, wiring...)
		dsFields = append(dsFields, fields...)
		heavy = slices.DeleteFunc(heavy, func(r string) bool {
			if r == "pods" || r == "nodes" {
				perNode = append(perNode, r)
				return true
			}
			return false
		})
	}
	sev, ok := finding.Info, false
	var cases []string
	var what []string
	if len(perNode) > 0 && n >= readersWarn {
		sev, ok = finding.Low, true
		what = append(what, strings.Join(perNode, ", "))
		cases = append(cases, "openai-telemetry-apiserver-overload-2024")
	}
	if len(heavy) > 0 && n >= readersWarn {
		sev, ok = finding.Medium, true
		if n >= readersHigh {
			sev = finding.High
		}
		what = append([]string{strings.Join(heavy, ", ")}, what...)
		if logAgent {
			cases = append(cases, "logging-daemonset-metadata-apiserver-flood-2020")
		}
		cases = append(cases, "openai-telemetry-apiserver-overload-2024")
		if isCalicoNode(ds, calico) {
			cases = append(cases, "calico-node-full-resync-list-storm-eks-2021")
		}
	}
	if secrets && n >= secretReadersWarn {
		ss := finding.Medium
		if n >= secretReadersHigh {
			ss = finding.High
		}
		sev, ok = max(sev, ss), true
		what = append(what, "secrets")
		cases = append(cases, "rancher-fleet-agent-secret-list-etcd-read-2023")
	}
	if !ok {
		return finding.Finding{}, false
	}
	slices.Sort(cases)
	cases = slices.Compact(cases)
	msg := fmt.Sprintf("Each of the %d copies of DaemonSet %s/%s runs as ServiceAccount %s, which may list and watch %s "+
		"across the whole cluster. If the agent does, the API server answers %d LISTs whose size grows with the "+
		"cluster, and all of them again whenever the agents restart or an API server fails over. RBAC shows what it "+
		"may do, not what it does.", n, ds.Namespace, ds.Name, sa, strings.Join(what, " and "), n)
	if len(perNode) > 0 {
		msg += fmt.Sprintf(" The agent is given its own node's name, the wiring a per-node field selector needs, so its "+
			"%s reads are likely of its own node only; that part is low.", strings.Join(perNode, " and "))
	}
	if len(ev) > check.MaxEvidence {
		ev = ev[:check.MaxEvidence]
	}
	out := finding.Finding{
		Check:    "api-heavy-node-agents",
		Severity: sev,
		Title:    fmt.Sprintf("DaemonSet %s/%s may list %s cluster-wide from %d nodes", ds.Namespace, ds.Name, strings.Join(what, " and "), n),
		Message:  msg,
		Objects:  []finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", ds)},
		Remediation: "Make the agent read only its own node's objects (a fieldSelector on spec.nodeName, the kubelet's " +
			"API, or kubelet mode for log agents) or through a fan-in layer, narrow its ClusterRole to what it uses, " +
			"and give its ServiceAccount a FlowSchema with a bounded priority level so it cannot starve the rest of the " +
			"API server.",
		Cases: cases,
	}
	out.AddEvidence(daemonSetItem(ds, dsFields...))
	out.AddEvidence(grantItems(used)...)
	out.AddEvidence(items...)
	out.Evidence = append(out.Evidence, ev...)
	return out, true
}

// typhaItem quotes the Deployment taken for Typha: its Typha container's
// image when it was found by image, else its name.
func typhaItem(d *appsv1.Deployment, f fanInFact) finding.EvidenceItem {
	for _, c := range d.Spec.Template.Spec.Containers {
		if check.ImageName(c.Image) == f.FanInImage {
			return finding.Quote(check.Ref("apps/v1", "Deployment", d), finding.Value(check.ContainerField("Deployment", "", c.Name, "image"), c.Image))
		}
	}
	return finding.Quote(check.Ref("apps/v1", "Deployment", d), finding.Value("metadata.name", d.Name))
}

// argsWith quotes the command and argument elements of a DaemonSet's
// containers that contain setting (case-insensitive, as it is matched).
func argsWith(ds *appsv1.DaemonSet, setting string) []finding.Field {
	var out []finding.Field
	for _, c := range ds.Spec.Template.Spec.Containers {
		for _, list := range []struct {
			name string
			argv []string
		}{{"command", c.Command}, {"args", c.Args}} {
			for i, a := range list.argv {
				if strings.Contains(strings.ToLower(a), strings.ToLower(setting)) {
					out = append(out, finding.Value(check.ContainerField("DaemonSet", "", c.Name, fmt.Sprintf("%s[%d]", list.name, i)), a))
				}
			}
		}
	}
	return out
}

// nodeNameFlags are argument flags by which agents are told their node's
// name.
var nodeNameFlags = []string{"--node-name", "--nodename", "--node-id", "--nodeid", "--hostname-override"}

// nodeNameWiring says how a DaemonSet's containers are told the name of
// the node they run on: environment variables whose value comes from the
// downward API's spec.nodeName (the variable's name is structure; no value
// is read or printed), and node-name flags in the arguments. Empty when
// nothing in the template tells the agent its node.
func nodeNameWiring(ds *appsv1.DaemonSet) (text []string, fields []finding.Field) {
	for _, c := range ds.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName" {
				text = append(text, fmt.Sprintf("container %s: env %s is set from fieldRef spec.nodeName (its own node's name)", c.Name, e.Name))
				// The variable's source, never a value.
				fields = append(fields, finding.Value(check.ContainerField("DaemonSet", "", c.Name, "env[name="+e.Name+"].valueFrom.fieldRef.fieldPath"), "spec.nodeName"))
				break
			}
		}
	flags:
		for _, list := range []struct {
			name string
			argv []string
		}{{"command", c.Command}, {"args", c.Args}} {
			for i, a := range list.argv {
				flag, _, _ := strings.Cut(a, "=")
				if slices.Contains(nodeNameFlags, flag) {
					text = append(text, fmt.Sprintf("container %s: argument %s names its node", c.Name, flag))
					fields = append(fields, finding.Value(check.ContainerField("DaemonSet", "", c.Name, fmt.Sprintf("%s[%d]", list.name, i)), a))
					break flags
				}
			}
		}
	}
	return text, fields
}
