package registries

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	pullFailuresID   = "registry-pull-failures"
	pullFailuresRule = "registry-wide-pull-failures"
	// pullFailuresMinWorkloads is policy, not fact: one workload that cannot
	// pull is most often its own tag or credentials; two or more unrelated
	// workloads failing against the same registry at once point at the
	// registry, or the way to it.
	pullFailuresMinWorkloads = 2
	caseChinaMirrors         = "china-docker-hub-mirrors-withdrawn-2022-2024"
	caseProjectRegistries    = "project-registries-ghcr-cr-l5d-io-outages-2022-2023"
)

// pullWaiting are the container waiting reasons of an image that cannot be
// pulled: the kubelet's ErrImagePull, then ImagePullBackOff between retries.
var pullWaiting = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true}

func registryPullFailuresCheck() check.Check {
	return check.Check{
		ID:       pullFailuresID,
		Title:    "Pods of several workloads cannot pull from the same registry",
		Severity: finding.Medium,
		Description: "Reads the pods' container statuses and groups the containers waiting in ErrImagePull or " +
			"ImagePullBackOff by the registry host of their image (docker.io for images without one). When the " +
			"pods of two or more workloads cannot pull from one registry at the same time, the registry or the " +
			"path to it (a withdrawn mirror, an outage, a proxy) is the likely cause rather than one tag, and " +
			"every node that must pull from it, as a new node does, cannot start those pods (medium). Quotes each " +
			"container's waiting reason and image, and the kubelet's Failed event for a few of the pods. It sees " +
			"the failure under way only: a runtime's registry mirrors are node configuration the API does not " +
			"show, and an outage starts outside the cluster.",
		Reads: append(check.Needs(snapshot.Pods), check.Optional(snapshot.Events), check.Optional(snapshot.ReplicaSets)),
		Rules: []check.Rule{{ID: pullFailuresRule, Summary: "no registry refuses the pulls of two or more workloads at once",
			Needs: []snapshot.Resource{snapshot.Pods}}},
		// Both cases start outside the cluster (a mirror withdrawn, a
		// registry's outage): the check sees their pulls fail.
		Cases: check.Cite(check.Detects(caseChinaMirrors, caseProjectRegistries)),
		Run:   runRegistryPullFailures,
	}
}

// pullFailure is one container that cannot pull its image.
type pullFailure struct {
	pod      *snapshot.Pod
	status   *snapshot.ContainerStatus
	image    string
	workload string
}

func runRegistryPullFailures(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	ix := s.Index()
	byRegistry := map[string][]pullFailure{}
	for i := range s.Pods {
		p := &s.Pods[i]
		if check.PodTerminal(p) {
			continue
		}
		for cs := range check.ContainerStatuses(p) {
			w := cs.State.Waiting
			if w == nil || !pullWaiting[w.Reason] {
				continue
			}
			image := cs.Image
			if image == "" {
				continue
			}
			r := check.ImageRegistry(image)
			byRegistry[r] = append(byRegistry[r], pullFailure{pod: p, status: cs, image: image, workload: workloadName(ix, p)})
		}
	}
	registries := make([]string, 0, len(byRegistry))
	for r := range byRegistry {
		registries = append(registries, r)
	}
	sort.Strings(registries)
	var out []finding.Finding
	for _, r := range registries {
		fails := byRegistry[r]
		workloads := map[string]bool{}
		for _, f := range fails {
			workloads[f.workload] = true
		}
		if len(workloads) < pullFailuresMinWorkloads {
			continue
		}
		out = append(out, pullFailuresFinding(s, r, fails, len(workloads)))
	}
	if !ctx.Complete(snapshot.Pods) {
		ctx.Incomplete(pullFailuresRule, "pods were not read completely: other pods may be failing to pull from a registry")
	}
	return out, nil
}

// workloadName names the pod's workload (its top controller), or the pod
// itself when it has none.
func workloadName(ix *snapshot.Index, p *snapshot.Pod) string {
	if ref, ok := ix.WorkloadOf(p); ok {
		return ref.Kind + " " + p.Namespace + "/" + ref.Name
	}
	return "Pod " + p.Namespace + "/" + p.Name
}

func pullFailuresFinding(s *snapshot.Snapshot, registry string, fails []pullFailure, workloads int) finding.Finding {
	sort.Slice(fails, func(i, j int) bool {
		a, b := fails[i].pod, fails[j].pod
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	refs := check.NewCappedRefs()
	var items []finding.EvidenceItem
	var names []string
	seenWorkload := map[string]bool{}
	pods := map[string]*snapshot.Pod{}
	for i, f := range fails {
		refs.AddPodAndNode(f.pod)
		pods[f.pod.Namespace+"/"+f.pod.Name] = f.pod
		if !seenWorkload[f.workload] {
			seenWorkload[f.workload] = true
			if len(names) < 5 {
				names = append(names, f.workload)
			}
		}
		if i < check.MaxEvidence {
			path := "status.containerStatuses[name=" + f.status.Name + "]"
			if isInit(f.pod, f.status.Name) {
				path = "status.initContainerStatuses[name=" + f.status.Name + "]"
			}
			items = append(items, finding.Quote(check.ResourceRef(snapshot.Pods, f.pod.Namespace, f.pod.Name),
				finding.Value(path+".state.waiting.reason", f.status.State.Waiting.Reason),
				finding.Value(path+".image", f.image)))
		}
	}
	var ev []string
	quoted := 0
	for i := range s.Events {
		e := &s.Events[i]
		if quoted == 5 || e.Reason != "Failed" || (e.InvolvedObject.Kind != "" && e.InvolvedObject.Kind != "Pod") {
			continue
		}
		p := pods[e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name]
		if p == nil || !strings.Contains(strings.ToLower(e.Message), "pull") {
			continue
		}
		quoted++
		ev = append(ev, fmt.Sprintf("Event %s/%s reason=Failed involvedObject=Pod %s/%s message=%q", e.Namespace, e.Name,
			p.Namespace, p.Name, check.QuoteMessage(e.Message, pullErrorAt(e.Message), check.EventQuoteLen)))
		items = append(items, finding.Quote(check.ResourceRef(snapshot.Events, e.Namespace, e.Name), finding.Value("reason", e.Reason),
			finding.Value("involvedObject.name", p.Name)))
	}
	more := ""
	if workloads > len(names) {
		more = fmt.Sprintf(" and %d more", workloads-len(names))
	}
	f := finding.Finding{
		Check:    pullFailuresID,
		Rule:     pullFailuresRule,
		Severity: finding.Medium,
		Title:    fmt.Sprintf("Pods of %d workloads cannot pull their images from %s", workloads, registry),
		Message: fmt.Sprintf("%s cannot pull %s from %s (ErrImagePull or ImagePullBackOff): %s%s. When unrelated "+
			"workloads fail against one registry at once, the registry or the way to it (a mirror the runtime "+
			"uses, a proxy, an outage) is the likely cause; until it answers, no node that lacks the images can "+
			"start these pods, and a node added or replaced now lacks them all.",
			refs.Summary(snapshot.Pods.Kind, "pod", "pods", 5), map[bool]string{true: "its image", false: "their images"}[len(fails) == 1],
			registry, strings.Join(names, ", "), more),
		Remediation: "Read the Failed events' messages for the host that refused or timed out (a registry mirror the " +
			"container runtime is configured with appears there, not in the image reference); pull one image by " +
			"hand from an affected node; point the runtime at a working mirror or pull-through cache, or copy the " +
			"images to a registry you run, and pin critical images so that nodes already holding them keep running.",
		Objects: refs.List(),
		Cases:   []string{caseChinaMirrors, caseProjectRegistries},
	}
	f.Evidence = append(f.Evidence, ev...)
	f.AddEvidence(items...)
	return f
}

// pullErrorMarks are the parts of a kubelet pull error that say what the
// registry (or the way to it) answered, where a long message is quoted.
var pullErrorMarks = []string{"status code", "Service Unavailable", "Forbidden", "Too Many Requests", "Timeout", "timeout", "403", "503"}

// pullErrorAt is where the registry's answer starts in msg, or -1 (the
// start) when no mark is there.
func pullErrorAt(msg string) int {
	at := -1
	for _, m := range pullErrorMarks {
		if i := strings.Index(msg, m); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	return at
}

// isInit reports whether the pod's init containers include name.
func isInit(p *snapshot.Pod, name string) bool {
	for _, c := range p.Status.InitContainerStatuses {
		if c.Name == name {
			return true
		}
	}
	return false
}
