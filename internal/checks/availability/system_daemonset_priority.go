package availability

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/system-daemonset-priority.yaml
var daemonPriorityYAML []byte

type daemonComponent struct {
	ID           string   `json:"id"`
	Role         string   `json:"role"`
	ImageNames   []string `json:"imageNames"`
	RepoSuffixes []string `json:"repoSuffixes"`
	Note         string   `json:"note"`
	Sources      []string `json:"sources"`
}

type daemonPriorityFacts struct {
	Behaviour []struct {
		ID      string   `json:"id"`
		Note    string   `json:"note"`
		Sources []string `json:"sources"`
	} `json:"behaviour"`
	Components []daemonComponent `json:"components"`
}

var loadDaemonPriorityFacts = check.Facts("system DaemonSet facts", daemonPriorityYAML, func(f *daemonPriorityFacts) error {
	if len(f.Components) == 0 {
		return errors.New("system DaemonSet facts: no components")
	}
	return nil
})

const (
	daemonPriorityID   = "system-daemonset-priority"
	ruleDaemonPriority = "node-critical-without-system-priority"
	caseDFDSNodes      = "dfds-all-nodes-deleted-no-priority-classes-2019"
)

func systemDaemonSetPriorityCheck() check.Check {
	return check.Check{
		ID:       daemonPriorityID,
		Title:    "Node-critical DaemonSets without a system priority class",
		Severity: finding.High,
		Description: "Pod networking (Calico, Cilium, the Amazon VPC CNI, flannel, kindnet), kube-proxy, NodeLocal " +
			"DNSCache, CSI node plugins and node credential agents (kiam, kube2iam) must run on a node before " +
			"the pods there work. Daemon pods are placed by the default scheduler, which makes room for a pod " +
			"that does not fit only by preempting pods of lower priority: a daemon pod without a priority class " +
			"outranks nothing, so on a full or freshly re-provisioned node ordinary pods can take the room first " +
			"and the node stays without networking, DNS, volumes or credentials. Medium for each such DaemonSet " +
			"(recognised by container image, table in data/system-daemonset-priority.yaml) whose template sets no " +
			"priorityClassName; high when some of its pods are Pending unscheduled. A template naming a class " +
			"of its own is left alone. Log and metrics agents are not counted: losing them costs telemetry, and " +
			"a system class would let them preempt applications.",
		Reads: append(check.Needs(snapshot.DaemonSets), check.Optional(snapshot.Pods)),
		Rules: []check.Rule{
			{ID: ruleDaemonPriority, Summary: "node-critical DaemonSets whose template sets no priorityClassName",
				Needs: []snapshot.Resource{snapshot.DaemonSets}},
		},
		Cases: check.Prevents(caseDFDSNodes),
		Run:   runSystemDaemonSetPriority,
	}
}

// daemonRole is the first component a DaemonSet's containers match.
func daemonRole(spec *corev1.PodSpec, comps []daemonComponent) *daemonComponent {
	for _, c := range spec.Containers {
		name := check.ImageName(c.Image)
		repo, _, _ := check.ImageParts(c.Image)
		for i := range comps {
			if componentMatches(&comps[i], name, repo) {
				return &comps[i]
			}
		}
	}
	return nil
}

func componentMatches(comp *daemonComponent, name, repo string) bool {
	for _, n := range comp.ImageNames {
		if name == n {
			return true
		}
	}
	for _, s := range comp.RepoSuffixes {
		if repo == s || strings.HasSuffix(repo, "/"+s) {
			return true
		}
	}
	return false
}

func runSystemDaemonSetPriority(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadDaemonPriorityFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	ix := s.Index()
	var out []finding.Finding
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		spec := &ds.Spec.Template.Spec
		if spec.PriorityClassName != "" {
			continue // system or its own: a deliberate choice
		}
		comp := daemonRole(spec, facts.Components)
		if comp == nil {
			continue
		}
		pods := ix.PodsControlledBy(snapshot.IDOf("DaemonSet", &ds.ObjectMeta))
		out = append(out, daemonPriorityFinding(ds, comp, pods))
	}
	return out, nil
}

func daemonPriorityFinding(ds *appsv1.DaemonSet, comp *daemonComponent, pods []*snapshot.Pod) finding.Finding {
	var pending []string
	var prio *int32
	for _, p := range pods {
		if p.Spec.Priority != nil {
			prio = p.Spec.Priority
		}
		if p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil {
			pending = append(pending, p.Name)
		}
	}
	sort.Strings(pending)
	ref := fmt.Sprintf("DaemonSet %s/%s", ds.Namespace, ds.Name)
	ev := []string{
		fmt.Sprintf("%s runs %s (matched as %s)", ref, comp.Role, comp.ID),
		"template: no priorityClassName",
		fmt.Sprintf("status: %d nodes should run it, %d run an available pod", ds.Status.DesiredNumberScheduled, ds.Status.NumberAvailable),
	}
	if prio != nil {
		ev = append(ev, fmt.Sprintf("its pods' resolved priority: %d (a global default class, if any, applies to ordinary pods too)", *prio))
	}
	f := finding.Finding{
		Check:    daemonPriorityID,
		Severity: finding.Medium,
		Title:    fmt.Sprintf("%s (%s) has no system priority class", ref, comp.Role),
		Message: fmt.Sprintf("%s provides %s but its pods carry no priority class, so on a node that is full or being "+
			"re-filled after a replacement they cannot preempt ordinary pods and may not run there at all, leaving "+
			"that node's pods without it.", ref, comp.Role),
		Objects: []finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", ds)},
		Cases:   []string{caseDFDSNodes},
		Remediation: fmt.Sprintf("Set spec.template.spec.priorityClassName: system-node-critical on %s (kubectl -n %s patch daemonset %s "+
			"--type merge -p '{\"spec\":{\"template\":{\"spec\":{\"priorityClassName\":\"system-node-critical\"}}}}'); outside "+
			"kube-system a ResourceQuota may have to allow the class.", ref, ds.Namespace, ds.Name),
	}
	if len(pending) > 0 {
		f.Severity = finding.High
		f.Title = fmt.Sprintf("%s (%s) has no system priority class and %s waiting to be scheduled",
			ref, comp.Role, check.Plural(len(pending), "pod", "pods"))
		ev = append(ev, "Pending and unscheduled: "+check.ListText(pending, 10))
	}
	f.Evidence = ev
	return f
}
