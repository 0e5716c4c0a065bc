package availability

import (
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/pool-scales-to-zero.yaml
var poolZeroYAML []byte

var loadPoolZero = check.Facts[check.Statements]("pool scale-to-zero facts", poolZeroYAML)

const (
	poolZeroID       = "pool-scales-to-zero"
	ruleOnlyPool     = "workload-only-on-zero-pool"
	caseBerkeleyCore = "berkeley-datahub-core-pool-autoscaled-to-zero-2024"
	caStatusNS       = "kube-system"
	caStatusName     = "cluster-autoscaler-status"
)

func poolScalesToZeroCheck() check.Check {
	return check.Check{
		ID:       poolZeroID,
		Title:    "Workloads whose every replica runs in a node pool the autoscaler may shrink to zero",
		Severity: finding.Medium,
		Description: "Reads cluster-autoscaler's status ConfigMap (kube-system/cluster-autoscaler-status, YAML or the " +
			"older text form) for node groups with minSize 0, matches each to the nodes whose pool label value its " +
			"name contains (an inference), and flags Deployments and StatefulSets whose every running pod is on " +
			"such a pool: when the autoscaler removes the pool's last node they all go at once and come back " +
			"only after a cold node start (medium). A min-0 group with nodes that no node's pool label matches is " +
			"reported as not judged. Without the status ConfigMap the minimum is not visible: on " +
			"GKE it is a node pool setting of the GKE API, and the rule is reported as not judged there. " +
			"Karpenter NodePools, which have no minimum, are not judged.",
		Reads: append(check.Needs(snapshot.ConfigMaps, snapshot.Nodes, snapshot.Pods),
			check.Optional(snapshot.ReplicaSets)),
		Rules: []check.Rule{
			{ID: ruleOnlyPool, Summary: "Workloads with every running pod in a node group whose minimum size is 0",
				Needs: []snapshot.Resource{snapshot.ConfigMaps, snapshot.Nodes, snapshot.Pods, snapshot.ReplicaSets}},
		},
		Cases: check.Prevents(caseBerkeleyCore),
		Run:   runPoolScalesToZero,
	}
}

// caStatus is the part of the structured status kubegap reads.
type caStatus struct {
	NodeGroups []struct {
		Name   string `json:"name"`
		Health struct {
			MinSize             *int `json:"minSize"`
			CloudProviderTarget int  `json:"cloudProviderTarget"`
		} `json:"health"`
	} `json:"nodeGroups"`
}

var (
	legacyGroupName = regexp.MustCompile(`^\s*Name:\s*(\S+)`)
	legacyMinSize   = regexp.MustCompile(`minSize=(\d+)`)
	legacyTarget    = regexp.MustCompile(`cloudProviderTarget=(\d+)`)
)

// groupSize is what the status says of a node group's size.
type groupSize struct{ min, target int }

// groupSizes returns each node group's minimum and target size, from the
// structured status or, failing that, the text one.
func groupSizes(status string) map[string]groupSize {
	out := map[string]groupSize{}
	var st caStatus
	if err := yaml.Unmarshal([]byte(status), &st); err == nil && len(st.NodeGroups) > 0 {
		for _, g := range st.NodeGroups {
			if g.Health.MinSize != nil {
				out[g.Name] = groupSize{*g.Health.MinSize, g.Health.CloudProviderTarget}
			}
		}
		return out
	}
	name := ""
	for _, line := range strings.Split(status, "\n") {
		if m := legacyGroupName.FindStringSubmatch(line); m != nil {
			name = m[1]
			continue
		}
		if m := legacyMinSize.FindStringSubmatch(line); m != nil && name != "" {
			var g groupSize
			g.min, _ = strconv.Atoi(m[1])
			if t := legacyTarget.FindStringSubmatch(line); t != nil {
				g.target, _ = strconv.Atoi(t[1])
			}
			out[name] = g
			name = ""
		}
	}
	return out
}

// zeroPools maps the pool of each node in a min-0 group to the group
// name, and lists the min-0 groups with nodes that no node's pool label
// matches. Each distinct pool is matched once against the min-0 groups,
// not once per node: nodes × groups grew with both. A pool that two
// groups' names contain maps to the first of them in name order, the same
// group every run.
func zeroPools(nodes []corev1.Node, sizes map[string]groupSize) (map[string]string, []string) {
	var zero []string
	for g, sz := range sizes {
		if sz.min == 0 {
			zero = append(zero, g)
		}
	}
	sort.Strings(zero)
	out := map[string]string{}
	matched := map[string]bool{}
	seen := map[string]bool{}
	for i := range nodes {
		pool := check.NodePool(&nodes[i])
		if seen[pool] {
			continue
		}
		seen[pool] = true
		_, value, _ := strings.Cut(pool, "=")
		if value == "" {
			continue
		}
		for _, g := range zero {
			if strings.Contains(g, value) {
				if _, ok := out[pool]; !ok {
					out[pool] = g
				}
				matched[g] = true
			}
		}
	}
	var unmatched []string
	for _, g := range zero {
		if sizes[g].target > 0 && !matched[g] {
			unmatched = append(unmatched, g)
		}
	}
	return out, unmatched
}

// workloadOf names a pod's Deployment or StatefulSet, or "" for others.
func workloadOf(ix *snapshot.Index, p *snapshot.Pod) (kind, name string) {
	if o, ok := ix.WorkloadOf(p); ok && (o.Kind == "Deployment" || o.Kind == "StatefulSet") {
		return o.Kind, o.Name
	}
	return "", ""
}

type zeroWorkload struct {
	kind, ns, name string
	pools          map[string]int
	pods           int
	running        []*snapshot.Pod
}

func runPoolScalesToZero(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadPoolZero()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	var status *corev1.ConfigMap
	for i := range s.ConfigMaps {
		if cm := &s.ConfigMaps[i]; cm.Namespace == caStatusNS && cm.Name == caStatusName {
			status = cm
		}
	}
	if status == nil {
		noteNoStatus(ctx, s)
		return nil, nil
	}
	pools, unmatched := zeroPools(s.Nodes, groupSizes(status.Data["status"]))
	if len(unmatched) > 0 {
		ctx.Incomplete(ruleOnlyPool, "node groups with minSize 0 and nodes that no node's pool label matches: %s",
			check.ListText(unmatched, check.MaxEvidence))
	}
	if len(pools) == 0 {
		return nil, nil
	}
	return zeroPoolFindings(s, pools, facts), nil
}

// noteNoStatus says why silence proves nothing when the status is absent.
func noteNoStatus(ctx *check.Context, s *snapshot.Snapshot) {
	if !ctx.CompleteIn(snapshot.ConfigMaps, caStatusNS) {
		ctx.Incomplete(ruleOnlyPool, "ConfigMap %s/%s was not read", caStatusNS, caStatusName)
		return
	}
	for i := range s.Nodes {
		if check.ManagedProvider(&s.Nodes[i]) == "GKE" {
			ctx.Unknowable(ruleOnlyPool, "no %s/%s ConfigMap: GKE node pool autoscaling minimums are settings of the GKE API (node pool autoscaling), not visible through the Kubernetes API", caStatusNS, caStatusName)
			return
		}
	}
}

func zeroPoolFindings(s *snapshot.Snapshot, pools map[string]string, facts *check.Statements) []finding.Finding {
	ix := s.Index()
	poolOf := map[string]string{}
	// The nodes of each min-0 pool, gathered in the same walk, in the
	// input's order: one pass over the nodes, not one per pool.
	nodesOf := map[string][]*corev1.Node{}
	for i := range s.Nodes {
		pool := check.NodePool(&s.Nodes[i])
		poolOf[s.Nodes[i].Name] = pool
		if _, zero := pools[pool]; zero {
			nodesOf[pool] = append(nodesOf[pool], &s.Nodes[i])
		}
	}
	work := map[[3]string]*zeroWorkload{}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		kind, name := workloadOf(ix, p)
		if kind == "" {
			continue
		}
		k := [3]string{kind, p.Namespace, name}
		w := work[k]
		if w == nil {
			w = &zeroWorkload{kind: kind, ns: p.Namespace, name: name, pools: map[string]int{}}
			work[k] = w
		}
		w.pods++
		w.pools[poolOf[p.Spec.NodeName]]++
		w.running = append(w.running, p)
	}
	byPool := map[string][]*zeroWorkload{}
	for _, w := range work {
		for pool, n := range w.pools {
			if _, zero := pools[pool]; zero && n == w.pods {
				byPool[pool] = append(byPool[pool], w)
			}
		}
	}
	names := make([]string, 0, len(byPool))
	for p := range byPool {
		names = append(names, p)
	}
	sort.Strings(names)
	var out []finding.Finding
	for _, pool := range names {
		out = append(out, zeroPoolFinding(pool, pools[pool], nodesOf[pool], byPool[pool], facts))
	}
	return out
}

func zeroPoolFinding(pool, group string, nodes []*corev1.Node, ws []*zeroWorkload, facts *check.Statements) finding.Finding {
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].ns != ws[j].ns {
			return ws[i].ns < ws[j].ns
		}
		return ws[i].name < ws[j].name
	})
	var objs []finding.ObjectRef
	var names []string
	// The workloads' pods, grouped by node, phase and controller: what
	// "every running pod in the pool" is read from.
	var pods finding.Grouper
	for _, w := range ws {
		if len(objs) < check.MaxListedObjects {
			objs = append(objs, finding.ObjectRef{APIVersion: "apps/v1", Kind: w.kind, Namespace: w.ns, Name: w.name})
		}
		names = append(names, fmt.Sprintf("%s %s/%s (%s)", w.kind, w.ns, w.name, check.Plural(w.pods, "pod", "pods")))
		for _, p := range w.running {
			pods.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
				append([]finding.Field{finding.Value("spec.nodeName", p.Spec.NodeName), finding.Value("status.phase", string(p.Status.Phase))},
					check.ControllerFields(p.OwnerReferences)...)...)
		}
	}
	objs = append(objs, finding.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: caStatusNS, Name: caStatusName})
	key, value, _ := strings.Cut(pool, "=")
	f := finding.Finding{
		Check: poolZeroID, Rule: ruleOnlyPool, Severity: finding.Medium,
		Title: fmt.Sprintf("%s only in %s, which the autoscaler may shrink to zero nodes",
			check.Subject(len(ws), "workload", "workloads", "runs", "run"), pool),
		Message: "Every running pod of these workloads is on nodes of one autoscaled node group whose minimum is 0. " +
			"When the autoscaler removes the group's last node they all stop together, and nothing serves until " +
			"a new node has started and pulled their images.",
		Objects: objs,
		// The minimum is a line inside the status text (data.status), not
		// a field of its own: it stays a sentence.
		Evidence: []string{fmt.Sprintf("ConfigMap %s/%s: its data.status gives node group %s minSize 0; its nodes carry %s",
			caStatusNS, caStatusName, group, pool)},
		Remediation: "Give the node group a minimum of at least 1 (2 across zones for anything every service needs), " +
			"or run these workloads with more than one replica across pools that do not scale to zero.",
		Cases: []string{caseBerkeleyCore},
	}
	f.AddEvidence(check.NodeValues(nodes, func(*corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("metadata.labels["+key+"]", value)}
	})...)
	f.Evidence = append(f.Evidence, "every running pod of: "+check.ListText(names, check.MaxEvidence))
	f.AddEvidence(pods.Items()...)
	f.Evidence = append(f.Evidence, facts.Evidence()...)
	return f
}
