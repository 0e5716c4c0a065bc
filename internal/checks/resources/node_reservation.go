package resources

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/node-reservation-insufficient.yaml
var reservationYAML []byte

type factRow struct {
	Name    string   `json:"name"`
	What    string   `json:"what"`
	Case    string   `json:"case"`
	Sources []string `json:"sources"`
}

type reservationFacts struct {
	KubeletDefaults []factRow `json:"kubeletDefaults"`
	Observed        []factRow `json:"observed"`
	Providers       []factRow `json:"providers"`
}

var loadReservation = check.Facts[reservationFacts]("node reservation facts", reservationYAML)

// thinReservation is policy, a heuristic: a node holding back less memory
// than this for the kubelet, the runtime and the system is thin. It sits
// above the 100 MiB that failed in the Gardener case (and the kubelet's
// bare eviction default), and below what EKS, AKS and GKE hold back on
// their smallest nodes (EKS: 255 MiB + 11 MiB per pod + 100 MiB).
const thinReservation = 256 << 20

// Rules of node-reservation-insufficient.
const (
	ruleThin      = "thin-reservation"
	ruleSystemOOM = "system-oom"

	gardenerCase = "gardener-kubelet-reserved-100mi-node-notready-2019"
	nuNLCase     = "nu-nl-elastalert-no-limits-2019"
	dfdsCase     = "dfds-rogue-dev-pod-and-agent-memory-node-notready-2024"
	// DFDS again: nodes went NotReady under starvation until
	// systemReserved was raised (which then cost allocatable capacity).
	dfdsReservedCase = "dfds-system-reserved-fix-leaves-workloads-pending-2025"
)

func nodeReservationCheck() check.Check {
	return check.Check{
		ID:       "node-reservation-insufficient",
		Title:    "Nodes that hold back too little memory for themselves",
		Severity: finding.High,
		Description: "Per node, capacity minus allocatable memory: what the kubelet, the container runtime and the " +
			"system keep (kube-reserved, system-reserved and the hard eviction threshold). Medium: under 256 MiB " +
			"(a heuristic line: 100 MiB failed in the Gardener case, and allocatable equal to capacity in " +
			"NU.nl's) while pods without a memory limit run on the node, since one of them can then take the " +
			"memory the kubelet needs and the node goes NotReady instead of evicting. High: such a node also has " +
			"SystemOOM warning events. Managed providers reserve by documented formulas well above the line " +
			"(AKS, EKS, GKE: see the data file), so their nodes are not flagged unless changed. Reservations " +
			"made outside the kubelet (a systemd slice the kubelet does not count) are not visible.",
		Reads: []check.Input{{Resource: snapshot.Nodes}, {Resource: snapshot.Pods}, check.Optional(snapshot.Events)},
		Rules: []check.Rule{
			{ID: ruleThin, Summary: "Nodes reserving under 256 MiB of memory while running pods without memory limits",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.Pods}},
			{ID: ruleSystemOOM, Summary: "Thin-reservation nodes with SystemOOM events",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.Pods, snapshot.Events}},
		},
		Cases: check.Cite(check.Prevents(gardenerCase, nuNLCase, dfdsCase), check.Related(dfdsReservedCase)),
		Run:   runNodeReservation,
	}
}

// unbounded lists the running pods on a node with a container without a
// memory limit.
func unbounded(pods []*snapshot.Pod) []string {
	var out []string
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			if c.Resources.MemoryLimit == 0 {
				out = append(out, p.Namespace+"/"+p.Name)
				break
			}
		}
	}
	return out
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

func runNodeReservation(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadReservation()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input has no Nodes")
	}
	ix := s.Index()
	oom := map[string]int{}
	for i := range s.Events {
		e := &s.Events[i]
		if e.Reason == "SystemOOM" && e.InvolvedObject.Kind == "Node" {
			oom[e.InvolvedObject.Name] += max(int(e.Count), 1)
		}
	}
	type thin struct {
		node      *corev1.Node
		reserved  int64
		cap       int64
		unbounded []string
		ooms      int
	}
	var thins []thin
	unknown := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		c, okC := n.Status.Capacity[corev1.ResourceMemory]
		a, okA := n.Status.Allocatable[corev1.ResourceMemory]
		if !okC || !okA {
			unknown++
			continue
		}
		reserved := c.Value() - a.Value()
		if reserved >= thinReservation {
			continue
		}
		ub := unbounded(ix.PodsOnNode(n.Name))
		if len(ub) == 0 {
			continue
		}
		thins = append(thins, thin{n, reserved, c.Value(), ub, oom[n.Name]})
	}
	if unknown > 0 {
		ctx.Incomplete(ruleThin, "%d nodes report no memory capacity or allocatable", unknown)
	}
	if len(thins) == 0 {
		return nil, nil
	}
	sort.Slice(thins, func(i, j int) bool { return thins[i].reserved < thins[j].reserved })
	var high, medium []thin
	for _, t := range thins {
		if t.ooms > 0 {
			high = append(high, t)
		} else {
			medium = append(medium, t)
		}
	}
	src := func(rows []factRow) string {
		var out []string
		for _, r := range rows {
			out = append(out, r.What+" ("+strings.Join(r.Sources, " ")+")")
		}
		return strings.Join(out, "; ")
	}
	var out []finding.Finding
	for _, g := range []struct {
		ts  []thin
		sev finding.Severity
	}{{high, finding.High}, {medium, finding.Medium}} {
		if len(g.ts) == 0 {
			continue
		}
		var objs []finding.ObjectRef
		var ev []string
		var memory finding.Grouper
		for _, t := range g.ts {
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, check.NodeRef(t.node.Name))
			}
			c, a := t.node.Status.Capacity[corev1.ResourceMemory], t.node.Status.Allocatable[corev1.ResourceMemory]
			memory.Add(check.NodeRef(t.node.Name), finding.Value("status.capacity[memory]", c.String()),
				finding.Value("status.allocatable[memory]", a.String()))
			if len(ev) < check.MaxEvidence {
				line := fmt.Sprintf("Node %s: capacity %s, allocatable %s, held back %s; %s without a memory limit: %s",
					t.node.Name, mib(t.cap), mib(t.cap-t.reserved), mib(t.reserved),
					check.Plural(len(t.unbounded), "pod", "pods"), check.ListText(t.unbounded, 5))
				if t.ooms > 0 {
					line += fmt.Sprintf("; %d SystemOOM events", t.ooms)
				}
				ev = append(ev, line)
			}
		}
		ev = append(ev, "kubelet defaults: "+src(facts.KubeletDefaults), "observed: "+src(facts.Observed))
		title := check.Subject(len(g.ts), "node", "nodes", "holds back under 256 MiB of memory and runs", "hold back under 256 MiB of memory and run") +
			" pods without memory limits"
		if g.sev == finding.High {
			title = fmt.Sprintf("%s with thin memory reservations already hit SystemOOM", check.Plural(len(g.ts), "node", "nodes"))
		}
		f := finding.Finding{
			Check: "node-reservation-insufficient", Severity: g.sev,
			Title: title,
			Message: "These nodes keep almost no memory for the kubelet, the container runtime and the system, and run " +
				"pods whose memory use nothing bounds. When such a pod grows, the kernel's OOM killer and memory " +
				"starvation hit the node's own daemons before the kubelet can evict, and the node goes NotReady, " +
				"taking every pod on it along.",
			Objects:     objs,
			Evidence:    ev,
			Remediation: "Set kube-reserved and system-reserved (and a hard eviction threshold) on these nodes' kubelets in line with your provider's formula, and give pods memory limits (a LimitRange default per namespace).",
			Cases:       []string{gardenerCase, nuNLCase, dfdsCase, dfdsReservedCase},
		}
		f.AddEvidence(memory.Items()...)
		out = append(out, f)
	}
	return out, nil
}
