package ingress

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/external-dns-routing.yaml
var externalDNSYAML []byte

// externalDNSFacts is data/external-dns-routing.yaml.
type externalDNSFacts struct {
	Prefixes        []string `json:"prefixes"`
	SetIdentifier   string   `json:"setIdentifier"`
	RoutingPolicies []string `json:"routingPolicies"`
	Images          []string `json:"images"`
	Provider        string   `json:"provider"`
	OneByOneFrom    string   `json:"oneByOneFrom"`
	Sources         []string `json:"sources"`

	oneByOne check.KubeVersion
	// setIDKeys[i] is Prefixes[i]+SetIdentifier and policyKeys[i] the
	// routing policies under Prefixes[i]: the annotation keys, joined once
	// rather than for every Ingress and Service.
	setIDKeys  []string
	policyKeys [][]string
}

var loadExternalDNSFacts = check.Facts("external-dns facts", externalDNSYAML, func(f *externalDNSFacts) error {
	var ok bool
	f.oneByOne, ok = check.ParseKubeVersion(f.OneByOneFrom)
	if !ok || len(f.Prefixes) == 0 || f.SetIdentifier == "" || len(f.RoutingPolicies) == 0 || len(f.Images) == 0 || f.Provider == "" {
		return errors.New("external-dns facts: prefixes, setIdentifier, routingPolicies, images, provider and oneByOneFrom are required")
	}
	for _, p := range f.Prefixes {
		f.setIDKeys = append(f.setIDKeys, p+f.SetIdentifier)
		var keys []string
		for _, r := range f.RoutingPolicies {
			keys = append(keys, p+r)
		}
		f.policyKeys = append(f.policyKeys, keys)
	}
	return nil
})

const (
	ruleRoutingMissing = "set-identifier-without-policy"
	caseMoJExternalDNS = "moj-cloud-platform-external-dns-blocked-by-unrelated-ingress-2022"
)

func externalDNSRoutingCheck() check.Check {
	return check.Check{
		ID:       "external-dns-routing",
		Title:    "Ingresses and Services whose DNS record Route 53 will reject, stalling external-dns",
		Severity: finding.High,
		Description: "external-dns (AWS provider) writes a Route 53 record with a routing policy for an Ingress or Service " +
			"that carries its set-identifier annotation; the policy itself (aws-weight, aws-region, aws-failover, " +
			"geolocation, geoproximity, multi-value) must come with it, or Route 53 rejects the change. Before " +
			"external-dns v0.13.4 a zone's changes went in batches (1,000 by default) and a rejected change failed " +
			"its whole batch, so one such object blocked the record changes of its zone, other tenants' included (high); from v0.13.4 failed batches are retried change by " +
			"change and only that object's record is held back (medium). Found only where an external-dns " +
			"Deployment runs with --provider=aws; annotations are paired within one prefix " +
			"(external-dns.alpha.kubernetes.io/ up to v0.21, external-dns.kubernetes.io/ from v0.22).",
		Reads: check.Needs(snapshot.Ingresses, snapshot.Services, snapshot.Deployments),
		Rules: []check.Rule{
			{ID: ruleRoutingMissing, Summary: "set-identifier without a routing policy, with external-dns on AWS",
				Needs: []snapshot.Resource{snapshot.Ingresses, snapshot.Services, snapshot.Deployments}},
		},
		Cases: check.Prevents(caseMoJExternalDNS),
		Run:   runExternalDNSRouting,
	}
}

// externalDNS is one external-dns Deployment running the AWS provider.
type externalDNS struct {
	ref          finding.ObjectRef
	image        string
	quote        finding.EvidenceItem // the container's image and its --provider argument
	version      check.KubeVersion
	versionKnown bool
}

func findAWSExternalDNS(s *snapshot.Snapshot, f *externalDNSFacts) []externalDNS {
	var out []externalDNS
	for i := range s.Deployments {
		d := &s.Deployments[i]
		cs := d.Spec.Template.Spec.Containers
		for j := range cs {
			c := &cs[j] // by index: not a copy of every container
			repo, tag, _ := check.ImageParts(c.Image)
			if !imageIsOneOf(repo, f.Images) || !hasProvider(append(append([]string{}, c.Command...), c.Args...), f.Provider) {
				continue
			}
			if d.Spec.Replicas != nil && *d.Spec.Replicas == 0 {
				break // scaled to zero, read only for an external-dns container
			}
			e := externalDNS{ref: check.Ref("apps/v1", "Deployment", d), image: c.Image}
			fields := []finding.Field{finding.Value(check.ContainerField("Deployment", "", c.Name, "image"), c.Image)}
			for _, list := range []struct {
				name string
				argv []string
			}{{"command", c.Command}, {"args", c.Args}} {
				for j, a := range list.argv {
					pair := a == "--provider" && j+1 < len(list.argv) && list.argv[j+1] == f.Provider
					if a == "--provider="+f.Provider || pair || (a == f.Provider && j > 0 && list.argv[j-1] == "--provider") {
						fields = append(fields, finding.Value(check.ContainerField("Deployment", "", c.Name, fmt.Sprintf("%s[%d]", list.name, j)), a))
					}
				}
			}
			e.quote = finding.Quote(e.ref, fields...)
			e.version, e.versionKnown = check.ParseKubeVersion(tag)
			out = append(out, e)
			break
		}
	}
	return out
}

func imageIsOneOf(repo string, images []string) bool {
	for _, im := range images {
		// repo is im, or ends in "/"+im (without joining that per image).
		if repo == im || (len(repo) > len(im) && strings.HasSuffix(repo, im) && repo[len(repo)-len(im)-1] == '/') {
			return true
		}
	}
	return false
}

// hasProvider reports whether argv selects the provider, as --provider=aws
// or --provider aws.
func hasProvider(argv []string, provider string) bool {
	for i, a := range argv {
		if a == "--provider="+provider || (a == "--provider" && i+1 < len(argv) && argv[i+1] == provider) {
			return true
		}
	}
	return false
}

func runExternalDNSRouting(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadExternalDNSFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Ingresses) == 0 && len(s.Services) == 0 && !ctx.Present(snapshot.Ingresses) && !ctx.Present(snapshot.Services) {
		return nil, check.NotEvaluated("the input has no Ingresses or Services")
	}
	controllers := findAWSExternalDNS(s, facts)
	if len(controllers) == 0 {
		if !ctx.Complete(snapshot.Deployments) {
			ctx.Incomplete(ruleRoutingMissing, "no external-dns Deployment with --provider=%s is in the input, and Deployments are not all there", facts.Provider)
		}
		return nil, nil
	}
	var out []finding.Finding
	judge := func(apiVersion, kind string, m *metav1.ObjectMeta) {
		if len(m.Annotations) == 0 {
			return // missingPolicy finds nothing without annotations
		}
		if f, ok := routingFinding(facts, controllers, check.Ref(apiVersion, kind, m), m.Annotations); ok {
			out = append(out, f)
		}
	}
	for i := range s.Ingresses {
		judge("networking.k8s.io/v1", "Ingress", &s.Ingresses[i].ObjectMeta)
	}
	for i := range s.Services {
		judge("v1", "Service", &s.Services[i].ObjectMeta)
	}
	return out, nil
}

// missingPolicy returns the set-identifier annotation an object carries
// without any routing policy under the same prefix, or "".
func missingPolicy(f *externalDNSFacts, ann map[string]string) (key, value string) {
	if len(ann) == 0 {
		return "", ""
	}
	for i, setID := range f.setIDKeys {
		id, ok := ann[setID]
		if !ok {
			continue
		}
		policy := false
		for _, r := range f.policyKeys[i] {
			if _, ok := ann[r]; ok {
				policy = true
				break
			}
		}
		if !policy {
			return setID, id
		}
	}
	return "", ""
}

func routingFinding(f *externalDNSFacts, controllers []externalDNS, ref finding.ObjectRef, ann map[string]string) (finding.Finding, bool) {
	key, id := missingPolicy(f, ann)
	if key == "" {
		return finding.Finding{}, false
	}
	prefix := strings.TrimSuffix(key, f.SetIdentifier)
	// The set identifier as written, and every routing policy under its
	// prefix as absent.
	fields := []finding.Field{finding.Value("metadata.annotations["+key+"]", id)}
	for _, r := range f.RoutingPolicies {
		fields = append(fields, finding.Absent("metadata.annotations["+prefix+r+"]"))
	}
	ev := []finding.EvidenceItem{finding.Quote(ref, fields...)}
	var versions []string
	objects := []finding.ObjectRef{ref}
	batched := false // some external-dns fails a whole batch on one rejected change
	for _, c := range controllers {
		objects = append(objects, c.ref)
		v := "unknown version"
		if c.versionKnown {
			v = "v" + c.version.String()
			batched = batched || c.version.Less(f.oneByOne)
		}
		ev = append(ev, c.quote)
		versions = append(versions, fmt.Sprintf("%s: external-dns %s, from the image tag", c.ref, v))
	}
	sev := finding.Medium
	effect := "external-dns retries the rejected change on every loop and this object's hostname gets no record, " +
		"while its error log and alarms fill up"
	if batched {
		sev = finding.High
		effect = fmt.Sprintf("an external-dns older than v%s sends a hosted zone's changes in batches (1,000 by default) and "+
			"drops a whole batch when one change is rejected, so the record changes of other Ingresses in the zone fail with it: "+
			"records that are deleted or changed are not restored until the annotation is fixed", f.OneByOneFrom)
	}
	out := finding.Finding{
		Check:    "external-dns-routing",
		Severity: sev,
		Title:    fmt.Sprintf("%s asks external-dns for a Route 53 routing record without a routing policy", ref),
		Message: fmt.Sprintf("%s carries %s but no routing policy annotation, so the Route 53 record external-dns writes for it is "+
			"rejected; %s.", ref, key, effect),
		Objects: objects,
		Remediation: fmt.Sprintf("Add the routing policy the set identifier is for (for weighted routing %saws-weight) or remove "+
			"the set-identifier; validate external-dns annotations at admission in shared clusters; upgrade external-dns to "+
			"v%s or later so one bad object cannot block a whole zone; alert on external-dns errors at high priority.",
			prefix, f.OneByOneFrom),
		Cases: []string{caseMoJExternalDNS},
	}
	out.AddEvidence(ev...)
	out.Evidence = append(out.Evidence, versions...)
	return out, true
}
