package registries

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/registry-risk.yaml
var registryRiskYAML []byte

// registryFacts is data/registry-risk.yaml.
type registryFacts struct {
	Retired      []retiredRegistry `json:"retired"`
	SinglePoints []singlePoint     `json:"singlePoints"`
}

type retiredRegistry struct {
	ID            string   `json:"id"`
	Host          string   `json:"host"`
	RegionalHosts []string `json:"regionalHosts"`
	// Namespace, when set, narrows the row to one namespace of its host:
	// the first path component of the repository (Docker Hub's "bitnami",
	// cgr.dev's "chainguard"); Docker Hub's official images are "library".
	Namespace string `json:"namespace"`
	// ServedTags, when set, are the tags the registry still serves to
	// everyone: an image on one of them (no tag is latest) or pinned by
	// digest still pulls, so the row matches only images on other tags
	// without a digest.
	ServedTags  []string `json:"servedTags"`
	Status      string   `json:"status"`
	Date        string   `json:"date"`
	What        string   `json:"what"`
	Replacement string   `json:"replacement"`
	Case        string   `json:"case"`
	Sources     []string `json:"sources"`
}

type singlePoint struct {
	Host string `json:"host"`
	What string `json:"what"`
	// NodeStart, when set, says what failed at node start or upgrade when
	// the host did: node-start-pulls then reports the DaemonSets and
	// static control-plane pods pulling from it, whatever their policy.
	NodeStart string   `json:"nodeStart"`
	Case      string   `json:"case"`
	Sources   []string `json:"sources"`
}

var loadRegistryFacts = check.Facts("registry facts", registryRiskYAML, func(f *registryFacts) error {
	for _, r := range f.Retired {
		if r.ID == "" || r.Host == "" || r.Case == "" || len(r.Sources) == 0 {
			return errors.New("registry facts: every retired registry needs id, host, case and sources")
		}
	}
	return nil
})

// Policy, not fact: a registry is the fleet's single point when at least
// this share of the pods in the input pull from it, and the input has at
// least singlePointMinPods pods (below that a share says little).
const (
	singlePointShare   = 0.5
	singlePointMinPods = 20
)

// Rules of registry-risk.
const (
	ruleRetired     = "retired-registries"
	ruleSinglePoint = "single-external-registry"
	ruleNodeStart   = "node-start-pulls"
)

// registryRiskCheck finds images from registries that were frozen, moved
// or shut down, and fleets that hang on one external registry while
// pulling on every start.
func registryRiskCheck() check.Check {
	return check.Check{
		ID:       "registry-risk",
		Title:    "Images from retired registries, or one external registry on every start",
		Severity: finding.High,
		Description: "Images in pods and workload templates (init containers included) from registries whose status " +
			"changed, from a sourced table: k8s.gcr.io (frozen 3 April 2023; medium), Docker Hub's bitnami " +
			"namespace (versioned tags moved to bitnamilegacy from 28 August 2025: high for versioned tags, which " +
			"no longer pull, medium for latest), bitnamilegacy (frozen; medium), cgr.dev/chainguard (from 16 August " +
			"2023 public users pull only latest and latest-dev: high for other tags without a digest; latest, " +
			"latest-dev and digest-pinned images are not flagged) and Google Container Registry hosts " +
			"(shut down for writes 18 March 2025; info, since repositories migrated to Artifact Registry keep " +
			"their gcr.io addresses and the cluster cannot tell which were). Second rule: when at least half of " +
			"the pods (and at least 20) pull from one external registry with sourced outages or pull limits " +
			"(quay.io, docker.io, registry.k8s.io, ghcr.io, cr.l5d.io), and DaemonSets or HPA-scaled workloads on it pull on every start (pull policy " +
			"Always, or :latest), an outage or a rate limit stops node replacement and scale-up at once (medium). " +
			"Third rule: DaemonSets and kubeadm's static control-plane pods (kube-system pods owned by their Node) whose " +
			"images come from a registry whose outages or blocks stopped node starts and upgrades (registry.k8s.io), " +
			"whatever their pull policy: every new node pulls its DaemonSet images and an upgrade pulls the new " +
			"control-plane images (low). Unrendered template placeholders are skipped. The check cannot see registry mirrors configured in " +
			"the container runtime, which rewrite hosts on the node: with a mirror in place, treat the findings " +
			"as an inventory.",
		Reads: []check.Input{{Resource: snapshot.Pods}, {Resource: snapshot.DaemonSets}, {Resource: snapshot.Deployments},
			{Resource: snapshot.StatefulSets}, {Resource: snapshot.CronJobs}, check.Optional(snapshot.ReplicaSets),
			check.Optional(snapshot.HorizontalPodAutoscalers)},
		Rules: []check.Rule{
			{ID: ruleRetired, Summary: "Images from frozen, moved or shut-down registries",
				Needs: []snapshot.Resource{snapshot.Pods, snapshot.DaemonSets, snapshot.Deployments, snapshot.StatefulSets, snapshot.CronJobs}},
			{ID: ruleNodeStart, Summary: "DaemonSets and static control-plane pods pulling from a registry whose outages stopped node starts and upgrades",
				Needs: []snapshot.Resource{snapshot.Pods, snapshot.DaemonSets}},
			{ID: ruleSinglePoint, Summary: "Most pods on one external registry, with DaemonSets or autoscaled workloads pulling on every start",
				Needs: []snapshot.Resource{snapshot.Pods, snapshot.DaemonSets, snapshot.HorizontalPodAutoscalers}},
		},
		// registry.k8s.io's outages are prevented by node-start-pulls: the
		// CSI sidecars of a new node and kubeadm's upgrade pulls fail
		// whatever the pull policy. The ghcr.io and cr.l5d.io reports are CI
		// runners and a fresh Linkerd install: neither shows the fleet shape
		// the single-point rule flags, so they stay related.
		Cases: check.Cite(check.Prevents("k8s-gcr-io-redirect-and-freeze-2023", "bitnami-public-catalog-moved-to-legacy-2025",
			"google-container-registry-shutdown-2025", "chainguard-free-tier-latest-only-2023", "quay-io-outages-2020-2023", "docker-hub-pull-rate-limits",
			"registry-k8s-io-regional-backend-outages-and-blocks-2022-2024"),
			check.Related("project-registries-ghcr-cr-l5d-io-outages-2022-2023")),
		Run: runRegistryRisk,
	}
}

func runRegistryRisk(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadRegistryFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	users := imageUsers(s)
	if len(users) == 0 {
		return nil, check.NotEvaluated("the input has no pods or workloads")
	}
	out := retiredFindings(facts, users)
	covered := "" // the host the single-point finding already reports
	if f, ok := singlePointFinding(ctx, facts, s, users); ok {
		out = append(out, f)
		covered = f.Cases[0]
	}
	out = append(out, nodeStartFindings(facts, s, users, covered)...)
	return out, nil
}

// dockerHubRepo is an image's repository path on Docker Hub ("bitnami/redis"),
// or "" when the image is not on Docker Hub.
func dockerHubRepo(image string) string {
	if registryHost(image) != "docker.io" {
		return ""
	}
	repo, _, _ := check.ImageParts(image)
	for _, p := range []string{"docker.io/", "index.docker.io/", "registry-1.docker.io/"} {
		repo = strings.TrimPrefix(repo, p)
	}
	if !strings.Contains(repo, "/") {
		return "library/" + repo
	}
	return repo
}

// registryHost is an image's registry, with Docker Hub's other host names
// folded into docker.io.
func registryHost(image string) string {
	switch h := check.ImageRegistry(image); h {
	case "index.docker.io", "registry-1.docker.io":
		return "docker.io"
	default:
		return h
	}
}

// matchRetired returns the retired registry an image comes from.
func matchRetired(facts *registryFacts, image string) *retiredRegistry {
	host := registryHost(image)
	for i := range facts.Retired {
		r := &facts.Retired[i]
		switch {
		case r.Namespace != "":
			if host != r.Host || repoNamespace(image) != r.Namespace {
				continue
			}
		case host != r.Host && !slices.Contains(r.RegionalHosts, host):
			continue
		}
		if len(r.ServedTags) > 0 && stillServed(r, image) {
			continue
		}
		return r
	}
	return nil
}

// repoNamespace is the first path component of an image's repository on
// its host ("bitnami" for bitnami/redis, "chainguard" for
// cgr.dev/chainguard/postgres), or "" when the repository has a single
// component there (quay.io/tool).
func repoNamespace(image string) string {
	if registryHost(image) == "docker.io" {
		ns, _, _ := strings.Cut(dockerHubRepo(image), "/")
		return ns
	}
	repo, _, _ := check.ImageParts(image)
	_, path, _ := strings.Cut(repo, "/")
	ns, _, found := strings.Cut(path, "/")
	if !found {
		return ""
	}
	return ns
}

// stillServed reports whether an image is on a tag the row's registry
// still serves (no tag means latest) or pinned by digest.
func stillServed(r *retiredRegistry, image string) bool {
	_, tag, digest := check.ImageParts(image)
	if digest != "" {
		return true
	}
	if tag == "" {
		tag = "latest"
	}
	return slices.Contains(r.ServedTags, tag)
}

// retiredHit is one container on a retired registry.
type retiredHit struct {
	user      *imageUser
	container string
	image     string
	ci        containerImage
}

func retiredSeverity(r *retiredRegistry, hits []retiredHit) finding.Severity {
	switch r.ID {
	case "bitnami":
		for _, h := range hits {
			if !floatingTag(h.image) {
				return finding.High // versioned tags were moved away: pulls fail
			}
		}
		return finding.Medium
	case "google-container-registry":
		return finding.Info
	case "chainguard":
		return finding.High // only unserved version tags match: pulls fail
	}
	return finding.Medium
}

func retiredFindings(facts *registryFacts, users []imageUser) []finding.Finding {
	hits := map[string][]retiredHit{}
	for i := range users {
		u := &users[i]
		for _, ci := range u.images {
			if ci.image == "" || check.IsTemplated(ci.image) {
				continue
			}
			if r := matchRetired(facts, ci.image); r != nil {
				hits[r.ID] = append(hits[r.ID], retiredHit{u, ci.container, ci.image, ci})
			}
		}
	}
	var out []finding.Finding
	for i := range facts.Retired {
		r := &facts.Retired[i]
		hs := hits[r.ID]
		if len(hs) == 0 {
			continue
		}
		sort.Slice(hs, func(a, b int) bool { return hs[a].user.ref.String() < hs[b].user.ref.String() })
		var objs []finding.ObjectRef
		var ev []string
		var items []finding.EvidenceItem
		seen := map[finding.ObjectRef]bool{}
		for _, h := range hs {
			if !seen[h.user.ref] {
				seen[h.user.ref] = true
				if len(objs) < check.MaxListedObjects {
					objs = append(objs, h.user.ref)
				}
			}
			if len(ev) < check.MaxEvidence {
				items = append(items, h.user.imageQuote(h.ci))
			}
		}
		if len(hs) > check.MaxEvidence {
			ev = append(ev, fmt.Sprintf("and %d more containers", len(hs)-check.MaxEvidence))
		}
		ev = append(ev, fmt.Sprintf("%s (%s, since %s); sources: %s", r.Host+nsSuffix(r), r.Status, r.Date, strings.Join(r.Sources, " ")))
		more := ""
		if len(seen) > len(objs) {
			more = fmt.Sprintf(" (the first %d are listed)", len(objs))
		}
		f := finding.Finding{
			Check:    "registry-risk",
			Severity: retiredSeverity(r, hs),
			Title:    fmt.Sprintf("%s from %s, %s since %s", check.Subject(len(seen), "workload", "workloads", "pulls", "pull"), r.Host+nsSuffix(r), r.Status, r.Date),
			Message: fmt.Sprintf("%s images from %s%s: %s. A pod that lands on a node without the image cached "+
				"depends on what that registry still serves.", check.Subject(len(seen), "workload", "workloads", "runs", "run"), r.Host+nsSuffix(r), more, r.What),
			Objects:     objs,
			Evidence:    ev,
			Remediation: fmt.Sprintf("Repoint the images to %s, or mirror them into a registry you control and pin them by digest.", r.Replacement),
			Cases:       []string{r.Case},
		}
		f.AddEvidence(items...)
		out = append(out, f)
	}
	return out
}

func nsSuffix(r *retiredRegistry) string {
	if r.Namespace != "" {
		return "/" + r.Namespace
	}
	return ""
}

func singlePointFinding(ctx *check.Context, facts *registryFacts, s *snapshot.Snapshot, users []imageUser) (finding.Finding, bool) {
	if len(s.Pods) < singlePointMinPods {
		if !ctx.Complete(snapshot.Pods) {
			ctx.Incomplete(ruleSinglePoint, "the input has %d pods, too few to judge the fleet's registries", len(s.Pods))
		}
		return finding.Finding{}, false
	}
	perRegistry := podsPerRegistry(s.Pods)
	for _, sp := range facts.SinglePoints {
		n := perRegistry[sp.Host]
		share := float64(n) / float64(len(s.Pods))
		if share < singlePointShare {
			continue
		}
		var objs []finding.ObjectRef
		var ev []string
		var items []finding.EvidenceItem
		exposed := 0
		for i := range users {
			u := &users[i]
			if !u.daemonSet && !u.autoscaled {
				continue
			}
			for _, ci := range u.images {
				if ci.image == "" || check.IsTemplated(ci.image) || registryHost(ci.image) != sp.Host {
					continue
				}
				floating := floatingTag(ci.image)
				if ci.policy != corev1.PullAlways && !floating {
					continue
				}
				exposed++
				if len(objs) < check.MaxListedObjects {
					objs = append(objs, u.ref)
				}
				if len(ev) < check.MaxEvidence {
					why := "imagePullPolicy Always"
					if floating {
						why = "a floating tag"
					}
					role := "DaemonSet"
					if !u.daemonSet {
						role = "scaled by an HPA"
					}
					ev = append(ev, fmt.Sprintf("%s (%s): container %s with %s", u.ref, role, ci.container, why))
					items = append(items, u.imageQuote(ci))
				}
				break
			}
		}
		if exposed == 0 {
			continue
		}
		ev = append([]string{fmt.Sprintf("%d of %d pods (%.0f%%) run at least one container from %s; %s; sources: %s",
			n, len(s.Pods), share*100, sp.Host, sp.What, strings.Join(sp.Sources, " "))}, ev...)
		f := finding.Finding{
			Check:    "registry-risk",
			Severity: finding.Medium,
			Title:    fmt.Sprintf("%.0f%% of pods depend on %s, and %s pull it on every start", share*100, sp.Host, check.Plural(exposed, "node-wide or autoscaled workload", "node-wide or autoscaled workloads")),
			Message: fmt.Sprintf("Most of the fleet pulls from %s, and DaemonSets or HPA-scaled workloads on it pull on every "+
				"start. While %s is down or limiting pulls, new nodes and scale-ups cannot start these pods, all at once.", sp.Host, sp.Host),
			Objects:     objs,
			Evidence:    ev,
			Remediation: "Mirror the images into a registry you control (or put a pull-through cache in front), pin them by digest and use imagePullPolicy IfNotPresent.",
			Cases:       []string{sp.Case},
		}
		f.AddEvidence(items...)
		return f, true
	}
	return finding.Finding{}, false
}

// podsPerRegistry counts, per registry host, the pods with at least one
// container from it. A pod's registries are deduplicated in a slice
// reused from pod to pod (a map per pod was most of this loop's cost at
// 100k pods). The pods of a template come one after another with the same
// images (in one shared slice when the snapshot interned them, in slices
// of their own when not), so a run of pods whose container images equal
// the previous pod's is counted at once, its registries worked out (and
// its images parsed) for the first pod only: a pod's registries depend on
// its images alone.
func podsPerRegistry(pods []snapshot.Pod) map[string]int {
	perRegistry := map[string]int{}
	var regs []string
	var last []snapshot.Container // the containers of the run's first pod
	run := 0
	flush := func() {
		for _, r := range regs {
			perRegistry[r] += run
		}
	}
	for i := range pods {
		cs := pods[i].Spec.Containers
		if run > 0 && sameImages(cs, last) {
			run++
			continue
		}
		flush()
		regs, run, last = regs[:0], 1, cs
		for j := range cs {
			if image := cs[j].Image; image != "" && !check.IsTemplated(image) {
				if h := registryHost(image); !slices.Contains(regs, h) {
					regs = append(regs, h)
				}
			}
		}
	}
	flush()
	return perRegistry
}

// sameImages reports whether two container lists run the same images in
// the same order: one shared slice at once, others image by image.
func sameImages(a, b []snapshot.Container) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i].Image != b[i].Image {
			return false
		}
	}
	return true
}
