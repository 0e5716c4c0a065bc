package runtime

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
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
	// Unless are patterns that rule the signature out when one matches too.
	Unless []string `json:"unless"`
	// Requires is what the pod's context must show for the signature to
	// apply; without it the message is matched against later entries.
	Requires *struct {
		Regression string `json:"regression"`
		Chain      bool   `json:"chain"`
	} `json:"requires"`

	res, unless []*regexp.Regexp
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

// ruledOut returns the text of an unless pattern that matches msg, or "".
func (sig *sandboxSignature) ruledOut(msg string) string {
	for _, re := range sig.unless {
		if t := re.FindString(msg); t != "" {
			return t
		}
	}
	return ""
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
		for _, p := range s.Unless {
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, fmt.Errorf("sandbox signature %q: unless: %w", s.ID, err)
			}
			s.unless = append(s.unless, re)
		}
		if r := s.Requires; r != nil {
			if len(s.Patterns) == 0 {
				return nil, fmt.Errorf("sandbox signature %q: the catch-all cannot have requirements", s.ID)
			}
			if r.Regression == "" && !r.Chain {
				return nil, fmt.Errorf("sandbox signature %q: requires names nothing", s.ID)
			}
		}
	}
	return sigs, nil
}

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
		if p == nil || (e.InvolvedObject.UID != "" && p.UID != "" && e.InvolvedObject.UID != p.UID) {
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

// sandboxContext judges a signature's requirements against the pod's node
// and attachments, and remembers what it could not judge.
type sandboxContext struct {
	ctx       *check.Context
	facts     *containerdFacts
	ix        *snapshot.Index
	nodesSeen bool
	// unknown counts pods whose requirements could not be judged, by
	// signature title and what was missing.
	unknown map[string]int
}

// consumerTypeRE finds plugin types an event names: plugin type="bond".
var consumerTypeRE = regexp.MustCompile(`type="?([A-Za-z0-9_.-]+)"?`)

// attachmentNameRE finds the attachment an event names: Multus's
// [ns/pod:net] or the runtime's error adding container to network "net".
var attachmentNameRE = regexp.MustCompile(`(?:to network "([^"]+)"|\[[^/\]]+/[^:\]]+:([^\]]+)\])`)

// sigVerdict is whether a signature's requirements hold for one pod.
type sigVerdict struct {
	applies bool
	// unknown says what the input lacked to tell, when it could not.
	unknown string
	// evidence shows why the signature applies, or why it does not.
	evidence []string
}

// judge checks sig's requirements against pod p's node and attachments.
func (sc *sandboxContext) judge(sig *sandboxSignature, p *snapshot.Pod, e *corev1.Event) (sigVerdict, error) {
	r := sig.Requires
	if r == nil {
		return sigVerdict{applies: true}, nil
	}
	var v sigVerdict
	if r.Regression != "" {
		var reg *runtimeRegression
		for i := range sc.facts.Regressions {
			if sc.facts.Regressions[i].ID == r.Regression {
				reg = &sc.facts.Regressions[i]
			}
		}
		if reg == nil {
			return v, fmt.Errorf("sandbox signature %q requires unknown regression %q", sig.ID, r.Regression)
		}
		n := sc.ix.Node(p.Spec.NodeName)
		if n == nil {
			v.unknown = "node not in the input"
			sc.unknownFor(sig, "their nodes are not in the input, so the container runtime version is unknown")
			return v, nil
		}
		rv := n.Status.NodeInfo.ContainerRuntimeVersion
		if !reg.affects(rv) {
			v.evidence = append(v.evidence, fmt.Sprintf("Node %s status.nodeInfo.containerRuntimeVersion=%s is outside the range of %s (%s), which rules out: %s",
				n.Name, rv, reg.ID, reg.rangeText(), sig.Title))
			return v, nil
		}
		v.evidence = append(v.evidence, fmt.Sprintf("Node %s status.nodeInfo.containerRuntimeVersion=%s is in the affected range: %s",
			n.Name, rv, reg.rangeText()))
	}
	if r.Chain {
		ev, chained, unknown := sc.chainOf(sig, p, e)
		v.evidence = append(v.evidence, ev...)
		switch {
		case chained:
		case unknown != "":
			v.unknown = unknown
			return v, nil
		default:
			if len(ev) == 0 {
				v.evidence = append(v.evidence, fmt.Sprintf("Event %s/%s names no chained plugin and no attachment, which rules out: %s",
					e.Namespace, e.Name, sig.Title))
			}
			return v, nil
		}
	}
	v.applies = true
	return v, nil
}

// chainOf looks at the attachment pod p failed on: whether it is a
// creator-then-consumer chain, with evidence either way, or what the input
// lacked to tell.
func (sc *sandboxContext) chainOf(sig *sandboxSignature, p *snapshot.Pod, e *corev1.Event) (ev []string, chained bool, unknown string) {
	consumer := map[string]bool{}
	for _, t := range sc.facts.Chains.Consumers {
		consumer[t] = true
	}
	for _, m := range consumerTypeRE.FindAllStringSubmatch(e.Message, -1) {
		if consumer[m[1]] {
			return []string{fmt.Sprintf("Event %s/%s names plugin type %s, which consumes interfaces an earlier plugin of its chain created",
				e.Namespace, e.Name, m[1])}, true, ""
		}
	}
	var names []string
	for _, m := range attachmentNameRE.FindAllStringSubmatch(e.Message, -1) {
		names = append(names, m[1]+m[2])
	}
	names = append(names, podNetworks(p.Annotations["k8s.v1.cni.cncf.io/networks"])...)
	nads := sc.ctx.Snapshot.CustomObjects(snapshot.NetworkAttachmentDefinitions)
	missing := false
	seen := map[string]bool{}
	for _, name := range names {
		ns, n := p.Namespace, name
		if i := strings.IndexByte(name, '/'); i >= 0 {
			ns, n = name[:i], name[i+1:]
		}
		if seen[ns+"/"+n] {
			continue
		}
		seen[ns+"/"+n] = true
		found := false
		for i := range nads {
			if nads[i].GetNamespace() != ns || nads[i].GetName() != n {
				continue
			}
			found = true
			if c := sc.facts.chainedNAD(&nads[i]); c != "" {
				return append(ev, c), true, ""
			}
			ev = append(ev, fmt.Sprintf("NetworkAttachmentDefinition %s/%s spec.config has no plugin consuming interfaces an earlier one created, which rules out: %s",
				ns, n, sig.Title))
		}
		if !found && !sc.ctx.CompleteIn(snapshot.NetworkAttachmentDefinitions, ns) {
			missing = true
		}
	}
	if missing {
		sc.unknownFor(sig, "their NetworkAttachmentDefinitions are not in the input, so whether the attachment is a chain is unknown")
		return ev, false, "attachment not in the input"
	}
	return ev, false, ""
}

// podNetworks reads the attachment names of a Multus networks annotation:
// "a, ns/b" or a JSON list of {"name", "namespace"}.
func podNetworks(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if strings.HasPrefix(v, "[") {
		var list []struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		}
		if json.Unmarshal([]byte(v), &list) != nil {
			return nil
		}
		var out []string
		for _, n := range list {
			if n.Namespace != "" {
				out = append(out, n.Namespace+"/"+n.Name)
			} else if n.Name != "" {
				out = append(out, n.Name)
			}
		}
		return out
	}
	var out []string
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if i := strings.IndexByte(part, '@'); i >= 0 { // net@ifname
			part = part[:i]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

func (sc *sandboxContext) unknownFor(sig *sandboxSignature, why string) {
	if sc.unknown == nil {
		sc.unknown = map[string]int{}
	}
	sc.unknown[sig.ID+"|"+why]++
}

// noteUnknown records, on the rule, the pods whose cause could not be
// pinned down: they are reported under a broader signature.
func (sc *sandboxContext) noteUnknown() {
	for _, k := range slices.Sorted(maps.Keys(sc.unknown)) {
		id, why, _ := strings.Cut(k, "|")
		sc.ctx.Incomplete(ruleStuckSandboxes, "%d stuck pods match signature %s only in part (%s); they are reported under a broader one",
			sc.unknown[k], id, why)
	}
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
