package scheduling

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/removed-node-labels.yaml
var removedKeysYAML []byte

// removedKey is a node label or taint Kubernetes deprecated: removedIn is
// the release that stopped applying it, empty when none did.
type removedKey struct {
	Key           string         `json:"key"`
	Kind          string         `json:"kind"`
	Replacement   string         `json:"replacement"`
	RemovedIn     string         `json:"removedIn"`
	By            string         `json:"by"`
	Note          string         `json:"note"`
	StillApplied  string         `json:"stillApplied"`
	Sources       []string       `json:"sources"`
	Distributions []distribution `json:"distributions"`
	removed       check.KubeVersion
}

// distribution is a Kubernetes distribution, known by its version suffix,
// that stopped applying a key in another release than upstream.
type distribution struct {
	Suffix    string   `json:"suffix"`
	RemovedIn string   `json:"removedIn"`
	Note      string   `json:"note"`
	Sources   []string `json:"sources"`
	removed   check.KubeVersion
}

type removedKeys struct {
	Keys []removedKey `json:"keys"`
}

var loadRemovedKeys = check.Facts("removed node label facts", removedKeysYAML, func(f *removedKeys) error {
	for i := range f.Keys {
		k := &f.Keys[i]
		if k.Key == "" || (k.Kind != "label" && k.Kind != "taint") || k.Replacement == "" || len(k.Sources) == 0 ||
			(k.RemovedIn == "") == (k.StillApplied == "") {
			return errors.New("removed node label facts: every key needs key, kind label|taint, replacement, sources and either removedIn or stillApplied")
		}
		if k.RemovedIn != "" {
			v, ok := check.ParseKubeVersion(k.RemovedIn)
			if !ok {
				return fmt.Errorf("removed node label facts: %s: removedIn %q is no version", k.Key, k.RemovedIn)
			}
			k.removed = v
		}
		for j := range k.Distributions {
			d := &k.Distributions[j]
			v, ok := check.ParseKubeVersion(d.RemovedIn)
			if d.Suffix == "" || !ok || len(d.Sources) == 0 {
				return fmt.Errorf("removed node label facts: %s: a distribution needs suffix, removedIn and sources", k.Key)
			}
			d.removed = v
		}
	}
	return nil
})

const (
	removedLabelsID    = "removed-node-labels"
	ruleRemovedLabel   = "removed-label-selector"
	ruleRemovedTaint   = "removed-taint-toleration"
	removedListedNodes = 10
)

// removedNodeLabelsCheck finds templates that select node labels, or
// tolerate taints, that the cluster's release no longer applies.
func removedNodeLabelsCheck() check.Check {
	return check.Check{
		ID:       removedLabelsID,
		Title:    "Workloads that select node labels or tolerate taints the cluster's release no longer applies",
		Severity: finding.High,
		Description: "kubeadm stopped labelling control-plane nodes node-role.kubernetes.io/master in 1.24 and stopped " +
			"tainting them with it in 1.25 (KEP-2067); k3s dropped the label later. A template that still requires the " +
			"label has nowhere to run once the nodes lose it, and a DaemonSet that tolerates only the old taint no longer " +
			"runs on control-plane nodes. Medium for a Deployment, StatefulSet, DaemonSet, Job or CronJob whose nodeSelector " +
			"or required node affinity asks for a removed label, when the cluster's version (the API server's, else the " +
			"newest kubelet's) is past the removal and none of the nodes in the input carries the label; medium for a " +
			"DaemonSet that tolerates the old master taint but not the node-role.kubernetes.io/control-plane taint that " +
			"nodes of the input carry. Labels Kubernetes deprecated but nodes still carry (beta.kubernetes.io/os and /arch, " +
			"copied by the node lifecycle controller; failure-domain.beta.kubernetes.io/*, the cloud provider's choice) are " +
			"not reported. When every Node is in the input, selector-matches-no-node judges the selectors against the nodes " +
			"themselves, at high, and this check leaves them to it. Calico BGPPeers (crd.projectcalico.org/v1, Calico's " +
			"Kubernetes datastore) whose spec.nodeSelector or spec.peerSelector names a removed label: high when no node in " +
			"the input carries it (the peering has lost its nodes, as Reddit's route reflector peerings did on 1.24; with an " +
			"incomplete Node list only once the cluster is past the release that stops applying it), medium while the cluster " +
			"is before that release (the upgrade to it takes them away). " +
			"BGPPeers kept in Calico's etcd datastore are not in the Kubernetes API and are not judged: a calico-node " +
			"container set for etcd (DATASTORE_TYPE etcdv3, or ETCD_ENDPOINTS) leaves the rule partial.",
		Reads: append(check.Needs(snapshot.Nodes), check.Optional(snapshot.Deployments), check.Optional(snapshot.StatefulSets),
			check.Optional(snapshot.DaemonSets), check.Optional(snapshot.Jobs), check.Optional(snapshot.CronJobs),
			check.Optional(snapshot.Pods), check.Optional(snapshot.CalicoBGPPeers)),
		Rules: []check.Rule{
			{ID: ruleRemovedLabel, Summary: "templates requiring a node label the cluster's release no longer applies",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.StatefulSets, snapshot.DaemonSets, snapshot.Jobs, snapshot.CronJobs}},
			{ID: ruleRemovedTaint, Summary: "DaemonSets tolerating the old master taint but not the control-plane taint nodes carry",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets}},
			{ID: ruleRemovedBGPPeer, Summary: "Calico BGPPeers selecting nodes by a label the cluster's release, or the next upgrade, removes",
				// DaemonSets: calico-node's env says whether the peers are
				// in etcd instead, where an empty list proves nothing.
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.CalicoBGPPeers, snapshot.DaemonSets}},
		},
		// Reddit's peerings named the master label while the cluster was
		// still on 1.23, whose nodes carried it: the BGPPeer rule flags
		// that before the upgrade. Dell's drivers were installed onto a
		// cluster already on 1.24, so their templates are seen only then.
		Cases: check.Cite(check.Detects(caseDell), check.Prevents(caseReddit)),
		Run:   runRemovedNodeLabels,
	}
}

// clusterRelease is the version the cluster's nodes are labelled by: the
// API server's, else the newest kubelet's, with the raw string (whose
// suffix names a distribution such as k3s) and a sentence for evidence.
func clusterRelease(s *snapshot.Snapshot) (v check.KubeVersion, raw, evidence string, ok bool) {
	if v, ev, ok := check.ServerVersion(s); ok {
		raw = s.Source.ServerVersion
		if raw == "" { // read from a kube-apiserver image tag
			raw = v.String()
		}
		return v, raw, ev, true
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		kv, good := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if good && (!ok || v.Less(kv)) {
			v, raw, ok = kv, n.Status.NodeInfo.KubeletVersion, true
			evidence = fmt.Sprintf("newest kubelet %s, on Node %s: the input has no API server version", raw, n.Name)
		}
	}
	return v, raw, evidence, ok
}

// removedIn is the release that stopped applying k on this cluster: the
// distribution's, when its version suffix names one; with the note that
// says so.
func (k *removedKey) removedOn(raw string) (check.KubeVersion, string, []string) {
	for _, d := range k.Distributions {
		if strings.Contains(raw, d.Suffix) {
			return d.removed, d.Note, d.Sources
		}
	}
	return k.removed, k.Note, k.Sources
}

func runRemovedNodeLabels(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadRemovedKeys()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("no Node in the input: whether the nodes still carry the old labels is unknown")
	}
	var out []finding.Finding
	nodesComplete := ctx.Complete(snapshot.Nodes)
	v, raw, verEv, haveVersion := clusterRelease(s)
	if !haveVersion {
		ctx.Skip(ruleRemovedLabel, "neither the API server's nor any kubelet's version is in the input")
		ctx.Skip(ruleRemovedBGPPeer, "neither the API server's nor any kubelet's version is in the input")
	}
	carrying := func(k *removedKey) int {
		n := 0
		for i := range s.Nodes {
			if k.Kind == "label" {
				if _, ok := s.Nodes[i].Labels[k.Key]; ok {
					n++
				}
				continue
			}
			for _, t := range s.Nodes[i].Spec.Taints {
				if t.Key == k.Key {
					n++
					break
				}
			}
		}
		return n
	}
	for i := range facts.Keys {
		k := &facts.Keys[i]
		if k.RemovedIn == "" {
			continue // nodes still carry it
		}
		// With every Node in the input, selector-matches-no-node judges
		// the selectors against the nodes themselves, at high.
		if k.Kind == "label" && haveVersion && !nodesComplete {
			removed, note, sources := k.removedOn(raw)
			if !v.Less(removed) && carrying(k) == 0 {
				_, _, fromServer := check.ServerVersion(s)
				out = append(out, removedLabelFindings(s, k, removed, note, sources, verEv, fromServer)...)
			}
		}
		if k.Kind == "taint" && carrying(k) == 0 {
			out = append(out, removedTaintFindings(s, k)...)
		}
	}
	if haveVersion {
		out = append(out, bgpPeerFindings(ctx, facts.Keys, v, raw, verEv)...)
	}
	return out, nil
}

// requiresLabel returns the requirements of spec that ask for label key to
// be on the node (In, Exists, Gt, Lt), as text.
func requiresLabel(spec *corev1.PodSpec, key string) []string {
	sel, ok := selectionOf(spec)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range sel.terms {
		for _, q := range t {
			if !q.field && q.key == key && q.positive() && !seen[q.String()] {
				seen[q.String()] = true
				out = append(out, q.String())
			}
		}
	}
	return out
}

// removedLabelFindings reports the templates requiring k. fromServer is
// whether the release was read from the API server rather than the
// kubelets.
func removedLabelFindings(s *snapshot.Snapshot, k *removedKey, removed check.KubeVersion, note string, sources []string, verEv string,
	fromServer bool) []finding.Finding {
	var out []finding.Finding
	for _, w := range workloads(s) {
		reqs := requiresLabel(w.spec, k.Key)
		if len(reqs) == 0 {
			continue
		}
		f := finding.Finding{
			Check:    removedLabelsID,
			Severity: finding.Medium,
			Title:    fmt.Sprintf("%s requires the node label %s, which the cluster's release no longer applies", w, k.Key),
			Message: fmt.Sprintf("%s requires %s, but from %s on nodes are labelled %s instead and none of the %s in the input "+
				"carries the old label: unless a node outside the input was labelled by hand, its pods have nowhere to run, "+
				"as Dell's CSI controllers found on Kubernetes 1.24.", w, strings.Join(reqs, "; "), removed.MinorString(),
				k.Replacement, check.Plural(len(s.Nodes), "node", "nodes")),
			Objects: []finding.ObjectRef{w.ref()},
			Evidence: []string{
				"the template requires " + strings.Join(reqs, "; "),
				verEv,
				fmt.Sprintf("0 of the %d nodes in the input carry %s", len(s.Nodes), k.Key),
				strings.Join(strings.Fields(note), " ") + " (" + strings.Join(sources, " ") + ")",
			},
			Remediation: fmt.Sprintf("Select %s instead of %s (and tolerate the taint those nodes carry); search Helm values and "+
				"operators' custom resources for the old key, since they re-render it.", k.Replacement, k.Key),
			Cases: []string{caseDell},
		}
		// The template's selection as read, and the nodes' kubelet versions
		// (what the release is read from without an API server version)
		// and their lack of the label, grouped.
		if it, ok := selectionItem(w); ok {
			f.AddEvidence(it)
		}
		addNodeGroups(&f, nodePtrs(s.Nodes), func(n *corev1.Node) []finding.Field {
			fs := labelsOf(k.Key)(n)
			if !fromServer {
				fs = append([]finding.Field{finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion)}, fs...)
			}
			return fs
		})
		out = append(out, f)
	}
	return out
}

// carryVerb is "carries" for one node, "carry" for more.
func carryVerb(n int) string {
	if n == 1 {
		return "carries"
	}
	return "carry"
}

func nodePtrs(nodes []corev1.Node) []*corev1.Node {
	out := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		out[i] = &nodes[i]
	}
	return out
}

// removedTaintFindings reports DaemonSets that tolerate the removed taint
// but not its replacement, while nodes of the input carry the replacement
// with an effect the DaemonSet does not tolerate: its pods are missing
// from those nodes.
func removedTaintFindings(s *snapshot.Snapshot, k *removedKey) []finding.Finding {
	var out []finding.Finding
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		spec := &d.Spec.Template.Spec
		old := false
		for _, t := range spec.Tolerations {
			old = old || (t.Key == k.Key && (t.Operator == corev1.TolerationOpExists || t.Operator == corev1.TolerationOpEqual || t.Operator == ""))
		}
		if !old {
			continue
		}
		w := workload{"apps/v1", "DaemonSet", &d.ObjectMeta, spec}
		sel, hasSel := selectionOf(spec)
		var repelled []string
		var taint corev1.Taint
		taintOf := map[string]corev1.Taint{} // each repelled node's taint
		for j := range s.Nodes {
			n := &s.Nodes[j]
			if hasSel && !selects(sel, n) {
				continue
			}
			for _, t := range n.Spec.Taints {
				if t.Key == k.Replacement && (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) &&
					!tolerates(spec.Tolerations, t) {
					repelled = append(repelled, n.Name)
					taint = t
					taintOf[n.Name] = t
					break
				}
			}
		}
		if len(repelled) == 0 {
			continue
		}
		f := finding.Finding{
			Check:    removedLabelsID,
			Severity: finding.Medium,
			Title:    fmt.Sprintf("%s tolerates the old %s taint but not %s, so it does not run on control-plane nodes", w, k.Key, k.Replacement),
			Message: fmt.Sprintf("%s tolerates %s, the taint kubeadm put on control-plane nodes before %s, but not %s:%s, which %s "+
				"in the input %s: the DaemonSet controller creates no pod for a node whose NoSchedule taint the template does "+
				"not tolerate, so whatever this agent does is missing there.", w, k.Key, k.RemovedIn, taint.Key, taint.Effect,
				check.Plural(len(repelled), "node", "nodes"), carryVerb(len(repelled))),
			Objects: []finding.ObjectRef{w.ref()},
			Evidence: []string{
				fmt.Sprintf("tolerations name %s but none tolerates %s:%s", k.Key, taint.Key, taint.Effect),
				fmt.Sprintf("nodes carrying %s:%s: %s", taint.Key, taint.Effect, check.ListText(repelled, removedListedNodes)),
				fmt.Sprintf("no node in the input carries the %s taint", k.Key),
				strings.Join(strings.Fields(k.Note), " ") + " (" + strings.Join(k.Sources, " ") + ")",
			},
			Remediation: fmt.Sprintf("Add a toleration for %s (effect %s) next to the old one.", k.Replacement, taint.Effect),
			Cases:       []string{caseDell},
		}
		for _, n := range repelled {
			if len(f.Objects) > check.MaxListedObjects {
				break
			}
			f.Objects = append(f.Objects, check.NodeRef(n))
		}
		// The tolerations as read; the nodes carrying the replacement taint
		// and none carrying the old one, grouped.
		f.AddEvidence(tolerationsItem(w))
		addNodeGroups(&f, nodePtrs(s.Nodes), func(n *corev1.Node) []finding.Field {
			var fs []finding.Field
			if t, ok := taintOf[n.Name]; ok {
				fs = taintFields(n, t)
			}
			return append(fs, finding.Absent("spec.taints[key="+k.Key+"]"))
		})
		out = append(out, f)
	}
	return out
}

// selects reports whether n meets any term of sel.
func selects(sel selection, n *corev1.Node) bool {
	for _, t := range sel.terms {
		ok := true
		for _, q := range t {
			ok = ok && q.matches(n)
		}
		if ok {
			return true
		}
	}
	return false
}
