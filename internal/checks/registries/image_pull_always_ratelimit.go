package registries

// image-pull-always's rate-limited-pulls rule: pulls the registry refused with a
// rate limit, from the kubelet's events, matched against
// data/pull-rate-limit.yaml. The check itself is in image_pull_always.go.

import (
	_ "embed"
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

//go:embed data/pull-rate-limit.yaml
var pullRateLimitYAML []byte

// pullRateLimit is data/pull-rate-limit.yaml, compiled.
type pullRateLimit struct {
	PullContext      []string `json:"pullContext"`
	RateLimited      []string `json:"rateLimited"`
	PublicRegistries []string `json:"publicRegistries"`
	Sources          []string `json:"sources"`

	context        []textMatcher
	limited        []*regexp.Regexp
	imageInMessage *regexp.Regexp
	refInMessage   *regexp.Regexp
}

var loadPullRateLimit = sync.OnceValues(func() (*pullRateLimit, error) {
	return parsePullRateLimit(pullRateLimitYAML)
})

func parsePullRateLimit(data []byte) (*pullRateLimit, error) {
	var p pullRateLimit
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("reading pull rate-limit signatures: %w", err)
	}
	if len(p.PullContext) == 0 || len(p.RateLimited) == 0 || len(p.PublicRegistries) == 0 || len(p.Sources) == 0 {
		return nil, errors.New("pull rate-limit signatures: pullContext, rateLimited, publicRegistries and sources are required")
	}
	compile := func(pats []string) ([]*regexp.Regexp, error) {
		var out []*regexp.Regexp
		for _, s := range pats {
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, fmt.Errorf("pull rate-limit signatures: %w", err)
			}
			out = append(out, re)
		}
		return out, nil
	}
	var err error
	contexts, err := compile(p.PullContext)
	if err != nil {
		return nil, err
	}
	for _, re := range contexts {
		p.context = append(p.context, newTextMatcher(re))
	}
	if p.limited, err = compile(p.RateLimited); err != nil {
		return nil, err
	}
	// The kubelet quotes the image it failed to pull: `Failed to pull image "x"`.
	p.imageInMessage = regexp.MustCompile(`(?i)image "([^"]+)"`)
	// The runtime's error repeats it, quoted (sometimes with escaped
	// quotes) after "image" or "reference".
	p.refInMessage = regexp.MustCompile(`(?i)(?:image|reference) \\?"([^"\\\s]+)\\?"`)
	return &p, nil
}

// matches reports whether an event message shows a rate-limited pull, and
// where the rate-limit text starts. The image references the message
// quotes are blanked first: a tag such as 1.0.429 or a repository named
// rate-limiter says nothing about the registry's answer.
func (p *pullRateLimit) matches(msg string) (int, bool) {
	ctx := false
	for _, m := range p.context {
		if m.match(msg) {
			ctx = true
			break
		}
	}
	if !ctx {
		return 0, false
	}
	masked := p.maskImageRefs(msg)
	for _, re := range p.limited {
		if loc := re.FindStringIndex(masked); loc != nil {
			return loc[0], true
		}
	}
	return 0, false
}

// maskImageRefs replaces every occurrence of the image references msg
// quotes with spaces, keeping every other byte where it was.
func (p *pullRateLimit) maskImageRefs(msg string) string {
	var refs []string
	for _, m := range p.refInMessage.FindAllStringSubmatch(msg, -1) {
		if !slices.Contains(refs, m[1]) {
			refs = append(refs, m[1])
		}
	}
	if len(refs) == 0 {
		return msg
	}
	b := []byte(msg)
	for _, ref := range refs {
		for from := 0; ; {
			i := strings.Index(msg[from:], ref)
			if i < 0 {
				break
			}
			for j := from + i; j < from+i+len(ref); j++ {
				b[j] = ' '
			}
			from += i + len(ref)
		}
	}
	return string(b)
}

// pullRateLimitFindings reports pull events refused by a registry rate
// limit, one finding per registry.
func pullRateLimitFindings(s *snapshot.Snapshot, rl *pullRateLimit) []finding.Finding {
	type hit struct {
		e    *corev1.Event
		pod  *snapshot.Pod
		node string
		at   int
	}
	byReg := map[string][]hit{}
	ix := s.Index()
	// The pods of each namespace an event names, by name, built for that
	// namespace on its first hit: a map of every pod in the input, keyed by
	// a "namespace/name" string built per pod, was most of this check's
	// cost at 100,000 pods.
	podsByName := map[string]map[string]*snapshot.Pod{}
	for i := range s.Events {
		e := &s.Events[i]
		if e.Type != "" && e.Type != corev1.EventTypeWarning {
			continue
		}
		if e.InvolvedObject.Kind != "Pod" {
			continue
		}
		at, ok := rl.matches(e.Message)
		if !ok {
			continue
		}
		ns := e.InvolvedObject.Namespace
		byName, built := podsByName[ns]
		if !built {
			inNS := ix.PodsInNamespace(ns)
			byName = make(map[string]*snapshot.Pod, len(inNS))
			for _, p := range inNS {
				// The last of a name wins, as it did in the map of every pod.
				byName[p.Name] = p
			}
			podsByName[ns] = byName
		}
		pod := byName[e.InvolvedObject.Name]
		node := e.Source.Host
		if pod != nil && pod.Spec.NodeName != "" {
			node = pod.Spec.NodeName
		}
		reg := "unknown registry"
		if m := rl.imageInMessage.FindStringSubmatch(e.Message); m != nil {
			reg = check.ImageRegistry(m[1])
		}
		byReg[reg] = append(byReg[reg], hit{e: e, pod: pod, node: node, at: at})
	}
	var out []finding.Finding
	for _, reg := range slices.Sorted(maps.Keys(byReg)) {
		hits := byReg[reg]
		sort.Slice(hits, func(i, j int) bool {
			a, b := hits[i].e, hits[j].e
			if a.InvolvedObject.Namespace != b.InvolvedObject.Namespace {
				return a.InvolvedObject.Namespace < b.InvolvedObject.Namespace
			}
			return a.InvolvedObject.Name < b.InvolvedObject.Name
		})
		refs := check.NewCappedRefs()
		var ev []string
		var items []finding.EvidenceItem
		for _, h := range hits {
			refs.Add(check.ResourceRef(snapshot.Pods, h.e.InvolvedObject.Namespace, h.e.InvolvedObject.Name))
			if h.node != "" {
				refs.Add(check.ResourceRef(snapshot.Nodes, "", h.node))
			}
			if len(ev) < check.MaxListedObjects/5 {
				ev = append(ev, fmt.Sprintf("Event %s/%s reason=%s count=%d involvedObject=Pod %s/%s node=%s message=%q",
					h.e.Namespace, h.e.Name, h.e.Reason, max(h.e.Count, 1), h.e.InvolvedObject.Namespace, h.e.InvolvedObject.Name,
					h.node, check.QuoteMessage(h.e.Message, h.at, check.EventQuoteLen)))
				items = append(items, finding.Quote(check.ResourceRef(snapshot.Events, h.e.Namespace, h.e.Name), finding.Value("reason", h.e.Reason),
					finding.Value("involvedObject.kind", h.e.InvolvedObject.Kind), finding.Value("involvedObject.name", h.e.InvolvedObject.Name)))
			}
		}
		if len(hits) > len(ev) {
			ev = append(ev, fmt.Sprintf("… and %d more rate-limited pull events", len(hits)-len(ev)))
		}
		f := finding.Finding{
			Check:    "image-pull-always",
			Severity: finding.High,
			Title:    fmt.Sprintf("%s refuses image pulls with a rate limit", reg),
			Message: fmt.Sprintf("Image pulls from %s fail because the registry is rate limiting: %s on %s. Pods that "+
				"need a pull, new ones and restarts with imagePullPolicy Always alike, cannot start until the limit resets, "+
				"and retries spend the same budget. Limits count per source IP, so nodes behind one NAT address share them.",
				reg, refs.Summary(snapshot.Pods.Kind, "pod", "pods", 5), refs.Summary(snapshot.Nodes.Kind, "node", "nodes", 5)),
			Objects:  refs.List(),
			Evidence: ev,
			Remediation: "Pull through a mirror or pull-through cache close to the cluster, authenticate pulls " +
				"(imagePullSecrets) so the per-account limit applies, and stop pulls that are not needed: " +
				"imagePullPolicy IfNotPresent with pinned tags.",
			Cases: []string{"docker-hub-pull-rate-limits", "daemonset-pull-always-nat-ratelimit"},
		}
		f.AddEvidence(items...)
		out = append(out, f)
	}
	return out
}
