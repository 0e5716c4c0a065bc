package checks

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/sandbox-signatures.yaml
var sandboxSignaturesYAML []byte

// sandboxSignature is one entry of data/sandbox-signatures.yaml.
type sandboxSignature struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Known       bool     `json:"known"`
	Patterns    []string `json:"patterns"`
	Cases       []string `json:"cases"`
	Remediation string   `json:"remediation"`
	Sources     []string `json:"sources"`

	res []*regexp.Regexp
}

// match returns where the first matching pattern first matches msg and the
// distinct texts it matches (the GLIBC message names each missing version);
// a signature without patterns matches everything, at -1 with no text.
func (sig *sandboxSignature) match(msg string) (int, []string, bool) {
	if len(sig.res) == 0 {
		return -1, nil, true
	}
	for _, re := range sig.res {
		locs := re.FindAllStringIndex(msg, 4)
		if locs == nil {
			continue
		}
		var texts []string
		for _, l := range locs {
			if t := msg[l[0]:l[1]]; !slices.Contains(texts, t) {
				texts = append(texts, t)
			}
		}
		return locs[0][0], texts, true
	}
	return 0, nil, false
}

// loadSandboxSignatures parses and validates the embedded table once.
var loadSandboxSignatures = sync.OnceValues(func() ([]sandboxSignature, error) {
	return parseSandboxSignatures(sandboxSignaturesYAML)
})

func parseSandboxSignatures(data []byte) ([]sandboxSignature, error) {
	var doc struct {
		Signatures []sandboxSignature `json:"signatures"`
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("reading sandbox signatures: %w", err)
	}
	sigs := doc.Signatures
	if len(sigs) == 0 {
		return nil, errors.New("sandbox signatures: no entries")
	}
	ids := map[string]bool{}
	for i := range sigs {
		s := &sigs[i]
		switch {
		case s.ID == "" || s.Title == "" || s.Remediation == "":
			return nil, fmt.Errorf("sandbox signature %d: id, title and remediation are required", i+1)
		case ids[s.ID]:
			return nil, fmt.Errorf("sandbox signature %q: duplicate id", s.ID)
		case len(s.Cases) == 0 || len(s.Sources) == 0:
			return nil, fmt.Errorf("sandbox signature %q: cases and sources are required", s.ID)
		case len(s.Patterns) == 0 && i != len(sigs)-1:
			return nil, fmt.Errorf("sandbox signature %q: only the last entry may have no pattern", s.ID)
		case len(s.Patterns) > 0 && i == len(sigs)-1:
			return nil, fmt.Errorf("sandbox signature %q: the last entry must have no pattern, to catch every other message", s.ID)
		}
		ids[s.ID] = true
		for _, p := range s.Patterns {
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, fmt.Errorf("sandbox signature %q: %w", s.ID, err)
			}
			s.res = append(s.res, re)
		}
	}
	return sigs, nil
}

// sandboxEventReason is the kubelet's event reason for a failed sandbox.
const sandboxEventReason = "FailedCreatePodSandBox"

// sandboxQuoteLen bounds a quoted event message in evidence.
const sandboxQuoteLen = 300

// podSandboxFailuresCheck finds pods stuck before their containers start
// because the node cannot create the pod sandbox, and names the cause when
// the kubelet's event carries a known signature.
func podSandboxFailuresCheck() Check {
	sigs, _ := loadSandboxSignatures()
	var cases []string
	seen := map[string]bool{}
	for _, s := range sigs {
		for _, c := range s.Cases {
			if !seen[c] {
				seen[c] = true
				cases = append(cases, c)
			}
		}
	}
	return Check{
		ID:       "pod-sandbox-failures",
		Title:    "Pods stuck because the node cannot create their sandbox",
		Severity: finding.High,
		Description: "Pods that stay Pending on a node with no container started, whose FailedCreatePodSandBox " +
			"warning events show why: a CNI binary that needs a newer glibc than the node has, a chained CNI " +
			"plugin that cannot find its link after a containerd update, or a node that cannot resolve names. " +
			"The node itself stays Ready, so nothing else reports it; during an upgrade these pods are the " +
			"replacements for drained ones. Findings are grouped by error signature and list the nodes. " +
			"An unrecognised error is still reported, at medium. Nodes, when read, add their OS and runtime.",
		Reads: append(Needs(snapshot.Pods, snapshot.Events), Optional(snapshot.Nodes)),
		Cases: cases,
		Run:   runPodSandboxFailures,
	}
}

// sandboxHit is one stuck pod with the latest sandbox event about it.
type sandboxHit struct {
	pod   *snapshot.Pod
	event *corev1.Event
	at    int      // where the signature matched in the message
	texts []string // what the signature matched
}

func runPodSandboxFailures(ctx *Context) ([]finding.Finding, error) {
	sigs, err := loadSandboxSignatures()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot

	stuck := map[string]*snapshot.Pod{}
	for i := range s.Pods {
		p := &s.Pods[i]
		if sandboxStuck(p) {
			stuck[p.Namespace+"/"+p.Name] = p
		}
	}
	if len(stuck) == 0 {
		return nil, nil
	}
	// Stuck pods without events: the cause cannot be told (files often
	// leave events out, and the API keeps them for an hour only).
	if st := s.Status(snapshot.Events).Status; st != snapshot.StatusRead {
		return nil, NotEvaluated("%d pods are bound but not started, and events were not read (%s)", len(stuck), st)
	}

	// The latest sandbox event per stuck pod; events of an earlier pod with
	// the same name (a StatefulSet replica) are told apart by UID.
	latest := map[*snapshot.Pod]*corev1.Event{}
	for i := range s.Events {
		e := &s.Events[i]
		if e.Reason != sandboxEventReason || (e.InvolvedObject.Kind != "" && e.InvolvedObject.Kind != "Pod") {
			continue
		}
		p := stuck[e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name]
		if p == nil || (e.InvolvedObject.UID != "" && p.UID != "" && e.InvolvedObject.UID != p.UID) {
			continue
		}
		if prev := latest[p]; prev == nil || eventUnix(e) > eventUnix(prev) {
			latest[p] = e
		}
	}

	bySig := map[int][]sandboxHit{}
	for p, e := range latest {
		for si := range sigs {
			if at, texts, ok := sigs[si].match(e.Message); ok {
				bySig[si] = append(bySig[si], sandboxHit{pod: p, event: e, at: at, texts: texts})
				break
			}
		}
	}

	var nodes map[string]*corev1.Node
	if s.Status(snapshot.Nodes).Status == snapshot.StatusRead {
		nodes = map[string]*corev1.Node{}
		ix := s.Index()
		for _, hits := range bySig {
			for _, h := range hits {
				if n := h.pod.Spec.NodeName; n != "" {
					nodes[n] = ix.Node(n)
				}
			}
		}
	}

	var out []finding.Finding
	for si := range sigs {
		if hits := bySig[si]; len(hits) > 0 {
			out = append(out, sandboxFinding(&sigs[si], hits, nodes))
		}
	}
	return out, nil
}

// sandboxStuck reports whether a pod is bound to a node but none of its
// containers has started: the state a failed sandbox leaves it in.
func sandboxStuck(p *snapshot.Pod) bool {
	if podTerminal(p) || p.Spec.NodeName == "" {
		return false
	}
	if p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
		return false
	}
	for cs := range containerStatuses(p) {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			return false
		}
	}
	return true
}

// eventUnix is when an event last occurred, whichever field its source
// filled.
func eventUnix(e *corev1.Event) int64 {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.UnixNano()
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.UnixNano()
	case !e.EventTime.IsZero():
		return e.EventTime.UnixNano()
	default:
		return e.FirstTimestamp.UnixNano()
	}
}

func sandboxFinding(sig *sandboxSignature, hits []sandboxHit, nodes map[string]*corev1.Node) finding.Finding {
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i].pod, hits[j].pod
		if a.Spec.NodeName != b.Spec.NodeName {
			return a.Spec.NodeName < b.Spec.NodeName
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	refs := newCappedRefs()
	byNode := map[string][]sandboxHit{}
	var nodeOrder []string
	matched := map[string]bool{}
	var matchedList []string
	for _, h := range hits {
		refs.addPodAndNode(h.pod)
		n := h.pod.Spec.NodeName
		if _, ok := byNode[n]; !ok {
			nodeOrder = append(nodeOrder, n)
		}
		byNode[n] = append(byNode[n], h)
		for _, t := range h.texts {
			if !matched[t] && len(matchedList) < 5 {
				matched[t] = true
				matchedList = append(matchedList, t)
			}
		}
	}

	var ev []string
	for i, n := range nodeOrder {
		if i >= listCap/2 {
			ev = append(ev, fmt.Sprintf("… and %d more nodes", len(nodeOrder)-i))
			break
		}
		hs := byNode[n]
		line := fmt.Sprintf("Node %s: %d pod%s stuck with no container started", n, len(hs), pluralS(len(hs)))
		if node := nodes[n]; node != nil {
			line += fmt.Sprintf(", status.nodeInfo.osImage=%q containerRuntimeVersion=%q",
				node.Status.NodeInfo.OSImage, node.Status.NodeInfo.ContainerRuntimeVersion)
		}
		ev = append(ev, line)
		// One quoted event per node: they repeat the same error.
		h := hs[0]
		ev = append(ev, fmt.Sprintf("Event %s/%s reason=%s count=%d involvedObject=Pod %s/%s message=%q",
			h.event.Namespace, h.event.Name, h.event.Reason, max(h.event.Count, 1), h.pod.Namespace, h.pod.Name,
			quoteMessage(h.event.Message, h.at, sandboxQuoteLen)))
	}

	sev := finding.Medium
	if sig.Known {
		sev = finding.High
	}
	verb := "are bound to %s but have no container started"
	if len(hits) == 1 {
		verb = "is bound to %s but has no container started"
	}
	msg := fmt.Sprintf("%s "+verb+", and the kubelet reports %s: %s.",
		refs.summary(snapshot.Pods.Kind, "pod", "pods", 5),
		refs.summary(snapshot.Nodes.Kind, "node", "nodes", 5), sandboxEventReason, sig.Title)
	if len(matchedList) > 0 {
		msg += " The events say: " + strings.Join(matchedList, "; ") + "."
	}
	if !sig.Known {
		msg += " The error matches no documented signature; the cited cases are the closest known class."
	}
	if len(nodeOrder) == 1 {
		msg += " The node stays Ready, so new pods keep landing there and waiting; nothing reschedules them."
	} else {
		msg += " The nodes stay Ready, so new pods keep landing there and waiting; nothing reschedules them."
	}
	return finding.Finding{
		Check:       "pod-sandbox-failures",
		Severity:    sev,
		Title:       fmt.Sprintf("%d pod%s cannot start on %d node%s: %s", len(hits), pluralS(len(hits)), len(nodeOrder), pluralS(len(nodeOrder)), sig.Title),
		Message:     msg,
		Objects:     refs.list(),
		Evidence:    ev,
		Remediation: sig.Remediation,
		Cases:       append([]string(nil), sig.Cases...),
	}
}
