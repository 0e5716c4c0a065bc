package resources

import (
	_ "embed"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	daemonOOMID      = "node-critical-daemon-oom"
	ruleDaemonLimit  = "memory-limit-below-reported-bursts"
	daemonOOMSource  = "data/node-critical-daemon-oom.yaml"
	oomKilledReason  = "OOMKilled"
	limitsRequestsEq = "Guaranteed"
)

//go:embed data/node-critical-daemon-oom.yaml
var daemonOOMData []byte

// burstDaemon is a node-critical daemon whose memory grows with bursts of
// work on its node.
type burstDaemon struct {
	ID            string   `json:"id"`
	Role          string   `json:"role"`
	Case          string   `json:"case"`
	RepoSuffix    string   `json:"repoSuffix"`
	TagContains   string   `json:"tagContains"`
	Command       string   `json:"command"`
	ExceededLimit string   `json:"exceededLimit"`
	Note          string   `json:"note"`
	Sources       []string `json:"sources"`

	exceeded resource.Quantity
}

type daemonOOMFacts struct {
	Daemons []*burstDaemon `json:"daemons"`
}

var loadDaemonOOM = check.Facts(daemonOOMSource, daemonOOMData, func(f *daemonOOMFacts) error {
	if len(f.Daemons) == 0 {
		return fmt.Errorf("%s: no daemons", daemonOOMSource)
	}
	for _, d := range f.Daemons {
		q, err := resource.ParseQuantity(d.ExceededLimit)
		if err != nil || d.Case == "" || len(d.Sources) == 0 || d.RepoSuffix == "" && d.Command == "" {
			return fmt.Errorf("%s: %s needs a case, sources, an image or command and a quantity (%v)", daemonOOMSource, d.ID, err)
		}
		d.exceeded = q
	}
	return nil
})

// nodeCriticalDaemonOOMCheck finds node-critical daemons whose memory
// limit is one that public reports saw exceeded when many pods start on a
// node at once: the daemon is OOM-killed just when the node needs it, and
// every pod waiting on it fails.
func nodeCriticalDaemonOOMCheck() check.Check {
	var cases []string
	if f, err := loadDaemonOOM(); err == nil {
		for _, d := range f.Daemons {
			cases = append(cases, d.Case)
		}
	}
	return check.Check{
		ID:       daemonOOMID,
		Title:    "Node-critical daemons with a memory limit that bursts of pod starts are known to exceed",
		Severity: finding.High,
		Description: "Some node-critical daemons do work for every pod that starts on their node, and their memory grows " +
			"with how many start at once. Reads DaemonSets and, for each daemon in data/node-critical-daemon-oom.yaml " +
			"(the Multus thick-plugin daemon: image k8snetworkplumbingwg/multus-cni with a thick tag, or the " +
			"multus-daemon command), compares the daemon container's memory limit with the largest limit a sourced " +
			"report saw it exceed (500Mi): at or below it, medium, since the next node reboot or drain can OOM-kill it " +
			"and leave every new pod on the node without networking; high when one of its pods last terminated " +
			"OOMKilled. The finding also says when an init container without limits leaves the pod Burstable, which " +
			"raises the daemon's OOM score. A daemon with no memory limit is not flagged. Cannot see: how many pods a " +
			"node starts at once, or the daemon's peak use.",
		Reads: append(check.Needs(snapshot.DaemonSets), check.Optional(snapshot.Pods)),
		Rules: []check.Rule{
			{ID: ruleDaemonLimit, Summary: "no burst-sensitive node-critical daemon has a memory limit reports saw exceeded",
				Needs: []snapshot.Resource{snapshot.DaemonSets}},
		},
		Cases: check.Graded(cases, check.Prevents("multus-thick-daemon-oom-cascade-2023-2026")),
		Run:   runNodeCriticalDaemonOOM,
	}
}

func runNodeCriticalDaemonOOM(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadDaemonOOM()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	ix := s.Index()
	var out []finding.Finding
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		spec := &ds.Spec.Template.Spec
		for j := range spec.Containers {
			c := &spec.Containers[j]
			d := burstDaemonOf(facts, c)
			if d == nil {
				continue
			}
			limit, ok := c.Resources.Limits[corev1.ResourceMemory]
			if !ok || limit.Cmp(d.exceeded) > 0 {
				continue // no limit, or above every reported burst
			}
			pods := ix.PodsControlledBy(snapshot.IDOf("DaemonSet", &ds.ObjectMeta))
			if !ctx.CompleteIn(snapshot.Pods, ds.Namespace) {
				ctx.Incomplete(ruleDaemonLimit, "DaemonSet %s/%s: its pods were not all read, and it is high if one was OOM-killed",
					ds.Namespace, ds.Name)
			}
			out = append(out, daemonOOMFinding(ds, c, d, limit, pods))
		}
	}
	return out, nil
}

// burstDaemonOf finds the daemon row a container runs: by image
// repository and tag, or by command.
func burstDaemonOf(facts *daemonOOMFacts, c *corev1.Container) *burstDaemon {
	repo, tag, _ := check.ImageParts(c.Image)
	for _, d := range facts.Daemons {
		if d.RepoSuffix != "" && (repo == d.RepoSuffix || strings.HasSuffix(repo, "/"+d.RepoSuffix)) &&
			strings.Contains(tag, d.TagContains) {
			return d
		}
		if d.Command != "" {
			for _, arg := range c.Command {
				if arg == d.Command || strings.HasSuffix(arg, "/"+d.Command) {
					return d
				}
			}
		}
	}
	return nil
}

func daemonOOMFinding(ds *appsv1.DaemonSet, c *corev1.Container, d *burstDaemon, limit resource.Quantity, pods []*snapshot.Pod) finding.Finding {
	ref := check.Ref("apps/v1", "DaemonSet", ds)
	base := "spec.template.spec.containers[name=" + c.Name + "]."
	f := finding.Finding{
		Check: daemonOOMID, Rule: ruleDaemonLimit, Severity: finding.Medium, Cases: []string{d.Case},
		Objects: []finding.ObjectRef{ref},
		Title: fmt.Sprintf("%s (%s) limits memory to %s, at or below the %s a reported burst exceeded",
			ref, d.Role, limit.String(), d.exceeded.String()),
		Message: strings.TrimSpace(d.Note),
	}
	f.AddEvidence(finding.Quote(ref, finding.Value(base+"image", c.Image),
		finding.Value(base+"resources.limits.memory", limit.String())))
	var killed finding.Grouper
	n := 0
	for _, p := range pods {
		for _, st := range p.Status.ContainerStatuses {
			if st.Name == c.Name && st.LastTerminationState.Terminated != nil && st.LastTerminationState.Terminated.Reason == oomKilledReason {
				n++
				if n <= check.MaxListedObjects {
					pr := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
					f.Objects = append(f.Objects, pr)
					killed.Add(pr, finding.Value("status.containerStatuses[name="+st.Name+"].lastState.terminated.reason", oomKilledReason))
				}
			}
		}
	}
	if n > 0 {
		f.Severity = finding.High
		f.Title += fmt.Sprintf("; %s OOM-killed", check.Plural(n, "pod was", "pods were"))
		f.AddEvidence(killed.Items()...)
	}
	if init := initWithoutLimits(ds.Spec.Template.Spec.InitContainers); init != "" {
		f.Message += fmt.Sprintf(" Init container %s sets no limits, so the pod's QoS class is Burstable, not %s, "+
			"and the kernel gives the daemon a high OOM score.", init, limitsRequestsEq)
		f.AddEvidence(finding.Quote(ref, finding.Absent("spec.template.spec.initContainers[name="+init+"].resources.limits")))
	}
	f.Evidence = append(f.Evidence, "daemon row "+d.ID+"; sources: "+strings.Join(d.Sources, ", "))
	f.Remediation = "Size the daemon's memory for the worst burst of pod starts on your densest node, or remove the limit " +
		"and keep a request (as Nutanix did), and give its init containers limits equal to their requests so the pod " +
		"is Guaranteed. Then reboot one busy node and watch the daemon's restarts."
	return f
}

// initWithoutLimits names the first init container with no limits.
func initWithoutLimits(cs []corev1.Container) string {
	for _, c := range cs {
		if len(c.Resources.Limits) == 0 {
			return c.Name
		}
	}
	return ""
}
