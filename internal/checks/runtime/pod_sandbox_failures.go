package runtime

import (
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

// sandboxEventReason is the kubelet's event reason for a failed sandbox.
const sandboxEventReason = "FailedCreatePodSandBox"

// podSandboxFailuresCheck finds pods stuck before their containers start
// because the node cannot create the pod sandbox, and names the cause when
// the kubelet's event carries a known signature.
func podSandboxFailuresCheck() check.Check {
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
	return check.Check{
		ID:       "pod-sandbox-failures",
		Title:    "Pods stuck because the node cannot create their sandbox",
		Severity: finding.High,
		Description: "Pods that stay Pending on a node with no container started, whose FailedCreatePodSandBox " +
			"warning events show why: a CNI binary that needs a newer glibc than the node has, a chained CNI " +
			"plugin that cannot find its link after a containerd update, or a node that cannot resolve names. " +
			"The node itself stays Ready, so nothing else reports it; during an upgrade these pods are the " +
			"replacements for drained ones. Findings are grouped by error signature and list the nodes. " +
			"An unrecognised error is still reported, at medium. Nodes, when read, add their OS and runtime. \"Link not found\" " +
			"is blamed on the containerd chained-CNI regression only when the pod's node runs an affected containerd and the " +
			"attachment is a chain (the event names a consumer plugin, or its NetworkAttachmentDefinition is one); a " +
			"missing master interface of macvlan, ipvlan, vlan or SR-IOV is another CNI failure. Pods whose sandbox exists " +
			"(a container waiting on its image, started or restarted) are not counted, whatever old events say. When the events " +
			"name a binary in a host binary directory (/opt/cni/bin and the others host-binary-glibc knows), the DaemonSets " +
			"that mount that directory writable and have a pod on a failing node (or no pod in the input, said to be " +
			"unconfirmed) are named with the finding: they installed the binary.",
		Reads: append(check.Needs(snapshot.Pods, snapshot.Events), check.Optional(snapshot.Nodes), check.Optional(snapshot.NetworkAttachmentDefinitions),
			check.Optional(snapshot.DaemonSets)),
		Rules: []check.Rule{{ID: ruleStuckSandboxes, Summary: "no pod bound to a node waits on a sandbox the node cannot create",
			Needs: []snapshot.Resource{snapshot.Pods, snapshot.Events}}},
		Cases: check.Detects(cases...),
		Run:   runPodSandboxFailures,
	}
}

// sandboxGroup is one finding: the signature that matched, and the more
// specific one that might have, had the input shown its context.
type sandboxGroup struct {
	sig     int
	maybe   string // signature ID
	unknown string // what was missing to tell
}

// sandboxHit is one stuck pod with the latest sandbox event about it.
type sandboxHit struct {
	pod   *snapshot.Pod
	event *corev1.Event
	at    int      // where the signature matched in the message
	texts []string // what the signature matched
	// context is the evidence for the signature's requirements, and for
	// why more specific signatures did not apply.
	context []string
}

// ruleStuckSandboxes is pod-sandbox-failures' one rule.
const ruleStuckSandboxes = "stuck-sandboxes"

func runPodSandboxFailures(ctx *check.Context) ([]finding.Finding, error) {
	sigs, err := loadSandboxSignatures()
	if err != nil {
		return nil, err
	}
	facts, err := loadContainerdFacts()
	if err != nil {
		return nil, err
	}
	hostFacts, err := loadHostBinaryFacts()
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
	if !ctx.Present(snapshot.Events) {
		ctx.Skip(ruleStuckSandboxes, "%d pods are bound but not started, and events are not in the input (%s)",
			len(stuck), s.Status(snapshot.Events).Status)
		return nil, nil
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
		if p == nil || (e.InvolvedObject.UID != "" && !p.UID.IsZero() && !p.UID.Is(e.InvolvedObject.UID)) {
			continue
		}
		if prev := latest[p]; prev == nil || eventUnix(e) > eventUnix(prev) {
			latest[p] = e
		}
	}
	// An event older than the pod's latest change of state is history: the
	// pod moved on after it.
	for p, e := range latest {
		if t, st := eventUnix(e), podStateUnix(p); t != 0 && st != 0 && t < st {
			delete(latest, p)
		}
	}

	ix := s.Index()
	sc := sandboxContext{ctx: ctx, facts: facts, ix: ix, nodesSeen: ctx.Present(snapshot.Nodes)}
	groups := map[sandboxGroup][]sandboxHit{}
	for p, e := range latest {
		h := sandboxHit{pod: p, event: e}
		var partly *sandboxSignature
		var unknown string
		for si := range sigs {
			sig := &sigs[si]
			at, texts, ok := sig.match(e.Message)
			if !ok {
				continue
			}
			if t := sig.ruledOut(e.Message); t != "" {
				h.context = append(h.context, fmt.Sprintf("Event %s/%s says %q, which rules out: %s", e.Namespace, e.Name, t, sig.Title))
				continue
			}
			v, err := sc.judge(sig, p, e)
			if err != nil {
				return nil, err
			}
			h.context = append(h.context, v.evidence...)
			if !v.applies {
				if v.unknown != "" && partly == nil {
					partly, unknown = sig, v.unknown
				}
				continue
			}
			h.at, h.texts = at, texts
			g := sandboxGroup{sig: si}
			if partly != nil {
				g.maybe, g.unknown = partly.ID, unknown
			}
			groups[g] = append(groups[g], h)
			break
		}
	}
	sc.noteUnknown()

	var nodes map[string]*corev1.Node
	if sc.nodesSeen {
		nodes = map[string]*corev1.Node{}
		for _, hits := range groups {
			for _, h := range hits {
				if n := h.pod.Spec.NodeName; n != "" {
					nodes[n] = ix.Node(n)
				}
			}
		}
	}

	keys := slices.SortedFunc(maps.Keys(groups), func(a, b sandboxGroup) int {
		if a.sig != b.sig {
			return a.sig - b.sig
		}
		return strings.Compare(a.maybe+a.unknown, b.maybe+b.unknown)
	})
	var out []finding.Finding
	for _, g := range keys {
		var maybe *sandboxSignature
		for i := range sigs {
			if sigs[i].ID == g.maybe {
				maybe = &sigs[i]
			}
		}
		f := sandboxFinding(&sigs[g.sig], maybe, g.unknown, groups[g], nodes)
		addInstallers(&f, s, hostFacts, groups[g])
		out = append(out, f)
	}
	return out, nil
}

// sandboxStuck reports whether a pod is bound to a node and still waits for
// its sandbox: Pending, and nothing shows the sandbox was ever made. A
// container waiting on its image, or one that started, ran or restarted,
// means the sandbox exists, whatever an older event said.
func sandboxStuck(p *snapshot.Pod) bool {
	if check.PodTerminal(p) || p.Spec.NodeName == "" {
		return false
	}
	if p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
		return false
	}
	if check.PodReady(p) {
		return false
	}
	for _, list := range [][]snapshot.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for i := range list {
			if containerBeyondSandbox(&list[i]) {
				return false
			}
		}
	}
	return true
}

// containerBeyondSandbox reports whether a container status shows that the
// pod's sandbox was created: the kubelet pulls images and creates
// containers only inside an existing sandbox, and reports a container
// without one as waiting in ContainerCreating (PodInitializing while init
// containers have not run).
func containerBeyondSandbox(cs *snapshot.ContainerStatus) bool {
	switch {
	case cs.State.Running != nil, cs.State.Terminated != nil:
		return true
	case cs.LastTerminationState.Running != nil, cs.LastTerminationState.Terminated != nil:
		return true
	case cs.RestartCount > 0, cs.ImageID != "", cs.Started != nil && *cs.Started:
		return true
	case cs.State.Waiting != nil:
		switch cs.State.Waiting.Reason {
		case "", "ContainerCreating", "PodInitializing":
			return false
		}
		return true // ImagePullBackOff, ErrImagePull, CrashLoopBackOff, CreateContainerError...
	}
	return false
}

// podStateUnix is when the pod's state last changed, as far as the kept
// status shows: the latest condition transition or container start or end.
func podStateUnix(p *snapshot.Pod) int64 {
	var t int64
	for _, c := range p.Status.Conditions {
		if !c.LastTransitionTime.IsZero() {
			t = max(t, c.LastTransitionTime.UnixNano())
		}
	}
	return t
}

// eventUnix is when an event last occurred, whichever field its source
// filled; 0 when it has no time.
func eventUnix(e *corev1.Event) int64 {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.UnixNano()
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.UnixNano()
	case !e.EventTime.IsZero():
		return e.EventTime.UnixNano()
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.UnixNano()
	}
	return 0
}

// sandboxFinding reports the pods whose latest sandbox event matched sig.
// maybe is a more specific signature that matched the message, but whose
// context the input did not show (unknown says what it lacked).
func sandboxFinding(sig, maybe *sandboxSignature, unknown string, hits []sandboxHit, nodes map[string]*corev1.Node) finding.Finding {
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
	refs := check.NewCappedRefs()
	byNode := map[string][]sandboxHit{}
	var nodeOrder []string
	matched := map[string]bool{}
	var matchedList []string
	for _, h := range hits {
		refs.AddPodAndNode(h.pod)
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
	var items []finding.EvidenceItem
	var stuckNodes []*corev1.Node // the nodes listed, for their OS and runtime
	for i, n := range nodeOrder {
		if i >= check.MaxListedObjects/2 {
			ev = append(ev, fmt.Sprintf("… and %d more nodes", len(nodeOrder)-i))
			break
		}
		hs := byNode[n]
		ev = append(ev, fmt.Sprintf("Node %s: %d pod%s stuck with no container started", n, len(hs), check.PluralS(len(hs))))
		if node := nodes[n]; node != nil {
			stuckNodes = append(stuckNodes, node)
		}
		// One quoted event per node: they repeat the same error.
		h := hs[0]
		ev = append(ev, fmt.Sprintf("Event %s/%s reason=%s count=%d involvedObject=Pod %s/%s message=%q",
			h.event.Namespace, h.event.Name, h.event.Reason, max(h.event.Count, 1), h.pod.Namespace, h.pod.Name,
			check.QuoteMessage(h.event.Message, h.at, check.EventQuoteLen)))
		if i < 5 {
			items = append(items, finding.Quote(check.ResourceRef(snapshot.Events, h.event.Namespace, h.event.Name), finding.Value("reason", h.event.Reason),
				finding.Value("involvedObject.kind", "Pod"), finding.Value("involvedObject.name", h.pod.Name)))
		}
	}
	items = append(check.NodeValues(stuckNodes, func(n *corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage),
			finding.Value("status.nodeInfo.containerRuntimeVersion", n.Status.NodeInfo.ContainerRuntimeVersion)}
	}), items...)
	// Why the signature applies, or why more specific ones did not.
	var context []string
	for _, h := range hits {
		for _, c := range h.context {
			if !slices.Contains(context, c) {
				context = append(context, c)
			}
		}
	}
	if len(context) > check.MaxListedObjects/2 {
		context = append(context[:check.MaxListedObjects/2], fmt.Sprintf("… and %d more", len(context)-check.MaxListedObjects/2))
	}
	ev = append(ev, context...)

	sev := finding.Medium
	if sig.Known {
		sev = finding.High
	}
	verb := "are bound to %s but have no container started"
	if len(hits) == 1 {
		verb = "is bound to %s but has no container started"
	}
	msg := fmt.Sprintf("%s "+verb+", and the kubelet reports %s: %s.",
		refs.Summary(snapshot.Pods.Kind, "pod", "pods", 5),
		refs.Summary(snapshot.Nodes.Kind, "node", "nodes", 5), sandboxEventReason, sig.Title)
	if len(matchedList) > 0 {
		msg += " The events say: " + strings.Join(matchedList, "; ") + "."
	}
	if maybe != nil {
		msg += fmt.Sprintf(" The message also fits a more specific signature (%s), but the input does not show its context (%s),"+
			" so it is reported under this broader one.", maybe.Title, unknown)
	} else if !sig.Known {
		msg += " The error matches no documented signature; the cited cases are the closest known class."
	}
	if len(nodeOrder) == 1 {
		msg += " The node stays Ready, so new pods keep landing there and waiting; nothing reschedules them."
	} else {
		msg += " The nodes stay Ready, so new pods keep landing there and waiting; nothing reschedules them."
	}
	title := fmt.Sprintf("%d pod%s cannot start on %d node%s: %s", len(hits), check.PluralS(len(hits)), len(nodeOrder), check.PluralS(len(nodeOrder)), sig.Title)
	if maybe != nil {
		title += fmt.Sprintf(" (perhaps %s; %s)", maybe.ID, unknown)
	}
	f := finding.Finding{
		Check:       "pod-sandbox-failures",
		Severity:    sev,
		Title:       title,
		Message:     msg,
		Objects:     refs.List(),
		Evidence:    ev,
		Remediation: sig.Remediation,
		Cases:       append([]string(nil), sig.Cases...),
	}
	f.AddEvidence(items...)
	return f
}
