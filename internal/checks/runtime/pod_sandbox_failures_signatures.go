package runtime

// pod-sandbox-failures' signatures: the table of known sandbox errors
// (data/sandbox-signatures.yaml), how an event message matches one, and how
// the cluster's objects confirm or rule out the cause it names (whether the
// attachment a pod failed on is a chained CNI). The check itself, with its
// one rule stuck-sandboxes, is in pod_sandbox_failures.go.

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
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
