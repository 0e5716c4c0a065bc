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
		Cases: []string{caseDFDSNodes},
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
		f := daemonPriorityFinding(ds, comp, pods)
		if f.Severity == finding.Medium && !ctx.CompleteIn(snapshot.Pods, ds.Namespace) {
			// Pending pods raise it, and only the pods show them.
			ctx.Incomplete(ruleDaemonPriority, "DaemonSet %s/%s: its pods were not all read, and it is high if any of them waits to be scheduled",
				ds.Namespace, ds.Name)
		}
		out = append(out, f)
	}
	return out, nil
}

func daemonPriorityFinding(ds *appsv1.DaemonSet, comp *daemonComponent, pods []*snapshot.Pod) finding.Finding {
	var pending []*snapshot.Pod
	var priorities finding.Grouper
	for _, p := range pods {
		if p.Spec.Priority != nil {
			priorities.Add(podRef(p), finding.Value("spec.priority", *p.Spec.Priority))
		}
		if p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil {
			pending = append(pending, p)
		}
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].Name < pending[j].Name })
	ref := fmt.Sprintf("DaemonSet %s/%s", ds.Namespace, ds.Name)
	dsRef := check.Ref("apps/v1", "DaemonSet", ds)
	f := finding.Finding{
		Check:    daemonPriorityID,
		Severity: finding.Medium,
		Title:    fmt.Sprintf("%s (%s) has no system priority class", ref, comp.Role),
		Message: fmt.Sprintf("%s provides %s but its pods carry no priority class, so on a node that is full or being "+
			"re-filled after a replacement they cannot preempt ordinary pods and may not run there at all, leaving "+
			"that node's pods without it.", ref, comp.Role),
		Objects:  []finding.ObjectRef{dsRef},
		Cases:    []string{caseDFDSNodes},
		Evidence: []string{fmt.Sprintf("%s runs %s (matched as %s)", ref, comp.Role, comp.ID)},
		Remediation: fmt.Sprintf("Set spec.template.spec.priorityClassName: system-node-critical on %s (kubectl -n %s patch daemonset %s "+
			"--type merge -p '{\"spec\":{\"template\":{\"spec\":{\"priorityClassName\":\"system-node-critical\"}}}}'); outside "+
			"kube-system a ResourceQuota may have to allow the class.", ref, ds.Namespace, ds.Name),
	}
	f.AddEvidence(finding.Quote(dsRef, finding.Absent("spec.template.spec.priorityClassName")))
	// A DaemonSet from files (helm template, a GitOps repository) has no
	// status: its counts read zero in the typed object, which would claim
	// "0 nodes should run it". Say the status is absent instead.
	if st := ds.Status; st.ObservedGeneration == 0 && st.DesiredNumberScheduled == 0 && st.CurrentNumberScheduled == 0 &&
		st.NumberAvailable == 0 && st.NumberReady == 0 && len(st.Conditions) == 0 {
		f.Evidence = append(f.Evidence, "status absent (or not yet written by the DaemonSet controller): how many nodes should run it, "+
			"and how many do, is not in the input")
	} else {
		f.AddEvidence(finding.Quote(dsRef, finding.Value("status.desiredNumberScheduled", st.DesiredNumberScheduled),
			omitZero("status.numberAvailable", st.NumberAvailable)))
	}
	if items := priorities.Items(); len(items) > 0 {
		f.AddEvidence(items...)
		f.Evidence = append(f.Evidence, "spec.priority is the priority the pods were admitted with (a global default class, if any, applies to ordinary pods too)")
	}
	if len(pending) > 0 {
		f.Severity = finding.High
		f.Title = fmt.Sprintf("%s (%s) has no system priority class and %s waiting to be scheduled",
			ref, comp.Role, check.Plural(len(pending), "pod", "pods"))
		var waiting finding.Grouper
		for _, p := range pending {
			waiting.Add(podRef(p), finding.Value("status.phase", p.Status.Phase), finding.Absent("spec.nodeName"))
		}
		f.AddEvidence(waiting.Items()...)
	}
	return f
}

// omitZero quotes an int field the API omits when it is zero (omitempty):
// zero reads as absent, which is what the object shows.
func omitZero(path string, v int32) finding.Field {
	if v == 0 {
		return finding.Absent(path)
	}
	return finding.Value(path, v)
}

func podRef(p *snapshot.Pod) finding.ObjectRef {
	return finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
}
