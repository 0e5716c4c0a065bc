package versions

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/stale-token-clients.yaml
var staleTokenYAML []byte

type staleClient struct {
	Name    string   `json:"name"`
	Images  []string `json:"images"`
	Fixed   string   `json:"fixed"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
	fixed   check.KubeVersion
}

type tokenProvider struct {
	Name    string   `json:"name"`
	Days    int      `json:"days"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
}

type staleTokenFacts struct {
	Clients   []staleClient   `json:"clients"`
	Providers []tokenProvider `json:"providers"`
}

var loadStaleToken = check.Facts("stale-token facts", staleTokenYAML, func(f *staleTokenFacts) error {
	if len(f.Clients) == 0 || len(f.Providers) == 0 {
		return errors.New("stale-token facts: clients and providers are required")
	}
	for i := range f.Clients {
		v, ok := check.ParseKubeVersion(f.Clients[i].Fixed)
		if !ok {
			return fmt.Errorf("stale-token facts: %s: bad version %q", f.Clients[i].Name, f.Clients[i].Fixed)
		}
		f.Clients[i].fixed = v
	}
	return nil
})

const (
	staleTokenID   = "stale-token-clients"
	staleTokenRule = "known-stale-clients"
	eks121Case     = "eks-121-bound-sa-token-90-day-stale-2022"
)

func staleTokenClientsCheck() check.Check { return staleTokenClientsCheckAt(time.Now) }

// staleTokenClientsCheckAt judges pod ages at now(), which tests fix.
func staleTokenClientsCheckAt(now func() time.Time) check.Check {
	return check.Check{
		ID:       staleTokenID,
		Title:    "Add-ons on releases that never re-read their ServiceAccount token",
		Severity: finding.High,
		Description: "Matches running pods' images against a sourced list of add-on releases that read their " +
			"projected ServiceAccount token once and keep it (Kiali before 1.56, kiam before 4.2). Such a pod " +
			"works until the API server stops accepting the token it started with: on EKS, 90 days after the pod " +
			"started. Medium on EKS, high there once such a pod is 90 days old; low elsewhere, where the limit is " +
			"an API server flag kubegap does not read. The list covers add-ons only: which client library a " +
			"workload's own image embeds is not visible, and the authoritative signal (the stale-token audit " +
			"annotation) is in the API server's audit log. An image whose tag is not a version is reported as " +
			"not judged.",
		Reads: []check.Input{{Resource: snapshot.Pods}, check.Optional(snapshot.Nodes)},
		Rules: []check.Rule{
			{ID: staleTokenRule, Summary: "Pods running add-on releases that keep their first ServiceAccount token",
				Needs: []snapshot.Resource{snapshot.Pods}},
		},
		Cases: check.Prevents(eks121Case),
		Run:   func(ctx *check.Context) ([]finding.Finding, error) { return runStaleTokenClients(ctx, now()) },
	}
}

// staleHit collects the pods of one client below its fixed release.
type staleHit struct {
	client   *staleClient
	versions []string
	owners   []string // ownerKey of each affected pod's controller
	oldest   time.Time
	pods     int
	// images groups the affected pods by the container and image that
	// matched; oldestPod is the pod whose creationTimestamp is oldest.
	images    finding.Grouper
	oldestPod finding.ObjectRef
}

func runStaleTokenClients(ctx *check.Context, now time.Time) ([]finding.Finding, error) {
	facts, err := loadStaleToken()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	hits := map[string]*staleHit{}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			judgeImage(ctx, facts, p, c, hits)
		}
	}
	provider := check.ClusterManagedProvider(s.Nodes)
	if provider == "" && len(hits) > 0 && !ctx.Complete(snapshot.Nodes) {
		// The provider, told by the nodes, sets the token limit that
		// raises these findings to medium or high.
		ctx.Incomplete(staleTokenRule, "nodes were not read completely: on a managed provider whose token lifetime kubegap knows, these findings are medium or high")
	}
	var out []finding.Finding
	for _, name := range sortedHitNames(hits) {
		out = append(out, staleFinding(hits[name], provider, facts, now))
	}
	return out, nil
}

func judgeImage(ctx *check.Context, facts *staleTokenFacts, p *snapshot.Pod, c snapshot.Container, hits map[string]*staleHit) {
	image := c.Image
	name := check.ImageName(image)
	for i := range facts.Clients {
		cl := &facts.Clients[i]
		if !slices.Contains(cl.Images, name) {
			continue
		}
		_, tag, _ := check.ImageParts(image)
		v, ok := check.ParseKubeVersion(tag)
		if !ok {
			ctx.Incomplete(staleTokenRule, "pod %s/%s runs %s, whose tag %q is not a version", p.Namespace, p.Name, image, tag)
			return
		}
		if !v.Less(cl.fixed) {
			return
		}
		h := hits[cl.Name]
		if h == nil {
			h = &staleHit{client: cl}
			hits[cl.Name] = h
		}
		h.pods++
		ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		h.images.Add(ref, finding.Value(check.ContainerField("Pod", "", c.Name, "image"), image))
		if !slices.Contains(h.versions, tag) {
			h.versions = append(h.versions, tag)
		}
		if o := controllerOf(p); !slices.Contains(h.owners, o) {
			h.owners = append(h.owners, o)
		}
		if t := p.CreationTimestamp.Time; !t.IsZero() && (h.oldest.IsZero() || t.Before(h.oldest)) {
			h.oldest = t
			h.oldestPod = ref
		}
		return
	}
}

// controllerOf names p's controller (else p) as "namespace|apiVersion|kind|name".
func controllerOf(p *snapshot.Pod) string {
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return strings.Join([]string{p.Namespace, o.APIVersion, o.Kind, o.Name}, "|")
		}
	}
	return strings.Join([]string{p.Namespace, "v1", "Pod", p.Name}, "|")
}

func sortedHitNames(m map[string]*staleHit) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func staleFinding(h *staleHit, provider string, facts *staleTokenFacts, now time.Time) finding.Finding {
	sev, limit := finding.Low, "the API server's limit on old tokens (a flag kubegap does not read)"
	ev := []string{fmt.Sprintf("%s %s %s, below %s", check.Plural(h.pods, "pod runs", "pods run"), h.client.Name,
		strings.Join(h.versions, ", "), h.client.Fixed), strings.TrimSpace(h.client.Fact)}
	days, age := -1, ""
	if !h.oldest.IsZero() && !now.IsZero() {
		days = int(now.Sub(h.oldest).Hours() / 24)
		age = fmt.Sprintf("; the oldest started %d days ago", days)
	}
	for _, pr := range facts.Providers {
		if pr.Name != provider {
			continue
		}
		sev, limit = finding.Medium, fmt.Sprintf("%s's %d-day limit", pr.Name, pr.Days)
		if days >= pr.Days {
			sev = finding.High
		}
		ev = append(ev, strings.TrimSpace(pr.Fact))
	}
	var refs []finding.ObjectRef
	for _, o := range h.owners {
		if len(refs) == check.MaxListedObjects {
			break
		}
		parts := strings.Split(o, "|")
		refs = append(refs, finding.ObjectRef{APIVersion: parts[1], Kind: parts[2], Namespace: parts[0], Name: parts[3]})
	}
	f := finding.Finding{
		Check:    staleTokenID,
		Severity: sev,
		Title:    fmt.Sprintf("%s %s keeps the ServiceAccount token it started with", h.client.Name, strings.Join(h.versions, ", ")),
		Message: fmt.Sprintf("%s %s %s, a release that reads its projected ServiceAccount token once and never "+
			"again%s. Its API requests carry an ever older token and fail with 401 once the token passes %s; the "+
			"kubelet keeps rotating the file, but the process does not look.", check.Plural(h.pods, "pod runs", "pods run"), h.client.Name,
			strings.Join(h.versions, ", "), age, limit),
		Objects:  refs,
		Evidence: ev,
		Remediation: fmt.Sprintf("Upgrade %s to %s or later. Until then, restart its pods well before the limit; "+
			"the stale-token annotation in the API server's audit log names any other workload that does the same.",
			h.client.Name, h.client.Fixed),
		Cases: []string{eks121Case},
	}
	// The pods' images, grouped, and the creation time the oldest pod's
	// age is counted from.
	f.AddEvidence(h.images.Items()...)
	if !h.oldest.IsZero() {
		f.AddEvidence(finding.Quote(h.oldestPod, finding.Value("metadata.creationTimestamp", h.oldest.UTC().Format(time.RFC3339))))
	}
	return f
}
