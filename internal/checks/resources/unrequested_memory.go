package resources

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/unrequested-memory.yaml
var unrequestedYAML []byte

type unrequestedFacts struct {
	Thresholds struct {
		MinPods     int `json:"minPods"`
		LowShare    int `json:"lowShare"`
		MediumShare int `json:"mediumShare"`
	} `json:"thresholds"`
	Behaviours []struct {
		Name    string   `json:"name"`
		Fact    string   `json:"fact"`
		Sources []string `json:"sources"`
	} `json:"behaviours"`
}

var loadUnrequested = check.Facts("unrequested-memory facts", unrequestedYAML, func(f *unrequestedFacts) error {
	t := f.Thresholds
	if t.MinPods <= 0 || t.LowShare <= 0 || t.MediumShare < t.LowShare || len(f.Behaviours) == 0 {
		return errors.New("unrequested-memory facts: thresholds and behaviours are required")
	}
	return nil
})

const (
	unrequestedID   = "unrequested-memory"
	unrequestedRule = "pool-share"
	appfarmCase     = "appfarm-gke-auto-upgrade-restart-storm-2023"
	// noPool groups pods whose node names no pool; unknownNode those
	// whose node is not in the input, whose pool is unknown.
	noPool      = "(no pool label)"
	unknownNode = "(node not in the input)"
)

func unrequestedMemoryCheck() check.Check {
	return check.Check{
		ID:       unrequestedID,
		Title:    "Node pools where many pods ask for no memory",
		Severity: finding.Medium,
		Description: "Per node pool, the share of scheduled workload pods (DaemonSet and static pods left out) with a " +
			"container that has neither a memory request nor a memory limit. The scheduler counts such a container " +
			"as needing no memory, so when an upgrade, a drain or a scale-down moves many of them at once they pile " +
			"onto the remaining nodes, exhaust memory together and are evicted or killed in a loop. Low from 20% of " +
			"a pool's pods, medium from 50%, from 10 pods up (policy). Requests that are set but below what a " +
			"service uses while starting are the rest of the gap and are not visible: that needs usage over time " +
			"from monitoring, which the API does not keep.",
		Reads: []check.Input{{Resource: snapshot.Pods}, check.Optional(snapshot.Nodes)},
		Rules: []check.Rule{
			{ID: unrequestedRule, Summary: "Pools where 20% or more of the workload pods have a container asking for no memory",
				Needs: []snapshot.Resource{snapshot.Pods, snapshot.Nodes}},
		},
		Cases: check.Prevents(appfarmCase),
		Run:   runUnrequestedMemory,
	}
}

// poolTally counts a pool's workload pods and those asking for no memory.
type poolTally struct {
	pods, unrequested int
	owners            map[ownerKey]int // the unrequested pods' owners
	// bare groups the unrequested pods by the container that asks for no
	// memory, its request and limit quoted absent, as a finding.Grouper
	// would; keyed by the container's name, whose fields are built once
	// per group, not per pod (three strings and a key per pod before).
	bare      []finding.EvidenceItem
	bareIndex map[string]int // container name to position in bare
}

// addBare records one pod whose container c asks for no memory.
func (t *poolTally) addBare(pod finding.ObjectRef, c string) {
	i, ok := t.bareIndex[c]
	if !ok {
		if t.bareIndex == nil {
			t.bareIndex = map[string]int{}
		}
		res := check.ContainerField("Pod", "", c, "resources.")
		i = len(t.bare)
		t.bareIndex[c] = i
		t.bare = append(t.bare, finding.EvidenceItem{Fields: []finding.Field{
			finding.Absent(res + "requests.memory"), finding.Absent(res + "limits.memory")}})
	}
	it := &t.bare[i]
	if len(it.Objects) < finding.MaxItemObjects {
		it.Objects = append(it.Objects, pod)
	} else {
		it.More++
	}
}

// ownerKey is a pod's controller (else the pod): namespace, apiVersion,
// kind and name, held without joining them per pod.
type ownerKey struct{ namespace, apiVersion, kind, name string }

// String is the key as "namespace|apiVersion|kind|name", which orders
// and names the owners in a finding.
func (k ownerKey) String() string {
	return strings.Join([]string{k.namespace, k.apiVersion, k.kind, k.name}, "|")
}

func runUnrequestedMemory(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadUnrequested()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	// Each node's pool by the node's position: a map by name cost an
	// insert per node and a lookup per node with pods, in a map of 50,000
	// names at 1M pods. Pods reach their node's through check.PodNodesOf,
	// which gives the index's node of a name.
	pools := make([]string, len(s.Nodes))
	for i := range s.Nodes {
		pools[i] = noPool
		if p := check.NodePool(&s.Nodes[i]); p != "" {
			pools[i] = p
		}
	}
	tallies := map[string]*poolTally{}
	// Each node's tally by the node's position (the shared
	// check.PodNodesOf gives each pod's), filled at its first pod: a map
	// keyed by every pod's node name was a hash and, at 50,000 nodes, a
	// cache miss per pod. Pods on nodes not in the input share one.
	podNodes := check.PodNodesOf(s)
	nodeTally := make([]*poolTally, len(s.Nodes))
	var elsewhere *poolTally
	for i := range s.Pods {
		p := &s.Pods[i]
		if !isWorkloadPod(p) {
			continue
		}
		slot, pool := &elsewhere, unknownNode
		if n := podNodes[i]; n >= 0 {
			slot, pool = &nodeTally[n], pools[n]
		}
		t := *slot
		if t == nil {
			t = tallies[pool]
			if t == nil {
				t = &poolTally{owners: map[ownerKey]int{}}
				tallies[pool] = t
			}
			*slot = t
		}
		t.pods++
		if c, ok := asksNoMemory(p); ok {
			t.unrequested++
			t.owners[ownerOf(p)]++
			t.addBare(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, c)
		}
	}
	var out []finding.Finding
	var byPool map[string][]*corev1.Node
	for _, pool := range slices.Sorted(maps.Keys(tallies)) {
		if f, ok := poolFinding(pool, tallies[pool], facts); ok {
			// The pool's nodes by the label that names it (nodes without
			// one, and pods on nodes not in the input, have none to quote),
			// then the pods asking for no memory.
			if pool != unknownNode && pool != noPool {
				key, value, _ := strings.Cut(pool, "=")
				if byPool == nil {
					byPool = nodesByPool(s, poolsByName(s))
				}
				f.AddEvidence(check.NodeValues(byPool[pool], func(*corev1.Node) []finding.Field {
					return []finding.Field{finding.Value("metadata.labels["+key+"]", value)}
				})...)
			}
			items := tallies[pool].bare
			if len(items) > maxBareGroups {
				f.AddEvidence(items[:maxBareGroups]...)
				f.Evidence = append(f.Evidence, fmt.Sprintf("and %d more groups of pods", len(items)-maxBareGroups))
			} else {
				f.AddEvidence(items...)
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// maxBareGroups bounds the groups of pods one finding quotes: pods group
// by the name of the container that asks for no memory.
const maxBareGroups = 10

// nodesByPool groups the nodes of the input by pool, in the input's
// order: one walk for every pool with a finding, where a walk per pool
// made pools × nodes.
func nodesByPool(s *snapshot.Snapshot, pools map[string]string) map[string][]*corev1.Node {
	out := map[string][]*corev1.Node{}
	for i := range s.Nodes {
		pool := pools[s.Nodes[i].Name]
		out[pool] = append(out[pool], &s.Nodes[i])
	}
	return out
}

// poolsByName is each node's pool by name (the last node of a name wins,
// as the index's node does), for nodesByPool: built only for a pool with
// a finding.
func poolsByName(s *snapshot.Snapshot) map[string]string {
	pools := make(map[string]string, len(s.Nodes))
	for i := range s.Nodes {
		pools[s.Nodes[i].Name] = noPool
		if p := check.NodePool(&s.Nodes[i]); p != "" {
			pools[s.Nodes[i].Name] = p
		}
	}
	return pools
}

// isWorkloadPod keeps scheduled, live pods that an upgrade moves: not
// DaemonSet pods (recreated in place), not static pods.
func isWorkloadPod(p *snapshot.Pod) bool {
	if p.Spec.NodeName == "" || p.DeletionTimestamp != nil ||
		p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" || o.Kind == "Node" {
			return false
		}
	}
	return true
}

// asksNoMemory names the first container of p with neither a memory
// request nor a limit (a limit alone becomes the request).
func asksNoMemory(p *snapshot.Pod) (string, bool) {
	for _, c := range p.Spec.Containers {
		if c.Resources.MemoryRequest == 0 && c.Resources.MemoryLimit == 0 {
			return c.Name, true
		}
	}
	return "", false
}

// ownerOf is p's controller (else p).
func ownerOf(p *snapshot.Pod) ownerKey {
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return ownerKey{p.Namespace, o.APIVersion, o.Kind, o.Name}
		}
	}
	return ownerKey{p.Namespace, "v1", "Pod", p.Name}
}

func poolFinding(pool string, t *poolTally, facts *unrequestedFacts) (finding.Finding, bool) {
	th := facts.Thresholds
	if t.pods < th.MinPods || t.unrequested*100 < th.LowShare*t.pods {
		return finding.Finding{}, false
	}
	sev := finding.Low
	if t.unrequested*100 >= th.MediumShare*t.pods {
		sev = finding.Medium
	}
	// Joined once per owner of a pool with a finding, as ownerOf
	// returned them before: topOwners orders by the joined key.
	counts := make(map[string]int, len(t.owners))
	for k, n := range t.owners {
		counts[k.String()] = n
	}
	owners := topOwners(counts)
	ev := []string{fmt.Sprintf("%d of %d workload pods in the pool have a container with no memory request or limit",
		t.unrequested, t.pods)}
	var named []string
	for _, o := range owners {
		parts := strings.Split(o, "|")
		named = append(named, fmt.Sprintf("%s %s/%s (%d)", parts[2], parts[0], parts[3], counts[o]))
	}
	ev = append(ev, "by owner (pods): "+check.ListText(named, 10))
	for _, b := range facts.Behaviours {
		ev = append(ev, strings.TrimSpace(b.Fact))
	}
	return finding.Finding{
		Check:    unrequestedID,
		Severity: sev,
		Title:    fmt.Sprintf("%s: %d of %d workload pods ask for no memory", capitalize(poolName(pool)), t.unrequested, t.pods),
		Message: fmt.Sprintf("In %s, %d of the %d workload pods have a container with neither a memory request "+
			"nor a limit. The scheduler places them as if they needed no memory, so the pool's spare capacity is not "+
			"sized for them: when an automatic upgrade, a drain or a scale-down restarts many at once, they land "+
			"together on the remaining nodes and can exhaust their memory, then be evicted or OOM-killed and restart "+
			"into the same shortage.", poolName(pool), t.unrequested, t.pods),
		Objects:  ownerRefs(owners),
		Evidence: ev,
		Remediation: "Give every container a memory request that covers what it uses, including while it starts " +
			"(measured from monitoring), or a namespace LimitRange with default requests; schedule managed " +
			"upgrades in a maintenance window with a small surge, and keep headroom in the pool for a node's worth " +
			"of pods.",
		Cases: []string{appfarmCase},
	}, true
}

// topOwners lists owners by how many unrequested pods they have, most first.
func topOwners(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func ownerRefs(owners []string) []finding.ObjectRef {
	var refs []finding.ObjectRef
	for _, o := range owners {
		if len(refs) == check.MaxListedObjects {
			break
		}
		parts := strings.Split(o, "|")
		refs = append(refs, finding.ObjectRef{APIVersion: parts[1], Kind: parts[2], Namespace: parts[0], Name: parts[3]})
	}
	return refs
}

// poolName names a pool in a sentence.
func poolName(pool string) string {
	switch pool {
	case noPool:
		return "nodes without a pool label"
	case unknownNode:
		return "nodes that are not in the input"
	}
	return "pool " + pool
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
