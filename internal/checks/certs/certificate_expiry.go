package certs

import (
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/certificate-expiry.yaml
var expiryFactsYAML []byte

// horizonFact is one row of data/certificate-expiry.yaml.
type horizonFact struct {
	Name    string   `json:"name"`
	Days    int      `json:"days"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
}

type expiryFacts struct {
	Horizons []horizonFact `json:"horizons"`
	OneYear  []horizonFact `json:"oneYear"`
}

var loadExpiryFacts = check.Facts("certificate expiry facts", expiryFactsYAML, func(f *expiryFacts) error {
	if len(f.Horizons) == 0 || len(f.OneYear) == 0 {
		return errors.New("certificate expiry facts: horizons and oneYear are required")
	}
	for _, h := range append(append([]horizonFact{}, f.Horizons...), f.OneYear...) {
		if h.Days <= 0 || len(h.Sources) == 0 {
			return fmt.Errorf("certificate expiry facts: %s needs days > 0 and sources", h.Name)
		}
	}
	return nil
})

// failDays is the shortest horizon in the facts: inside it, someone else
// (GKE, Linkerd's own check) already acts or complains.
func (f *expiryFacts) failDays() (int, horizonFact) {
	best := f.Horizons[0]
	for _, h := range f.Horizons[1:] {
		if h.Days < best.Days {
			best = h
		}
	}
	return best.Days, best
}

// shortLifetimeDays is the lifetime at or under which a root counts as a
// one-year certificate: the longest one-year fact plus shortLifetimeSlack.
func (f *expiryFacts) shortLifetimeDays() int {
	longest := 0
	for _, h := range f.OneYear {
		longest = max(longest, h.Days)
	}
	return longest + shortLifetimeSlack
}

// Policy, not fact: warn a quarter ahead, time to plan a rotation as a
// change of one's own before any provider or project window opens; and
// let a "one-year" certificate run a month long (issuers back-date
// NotBefore and round lifetimes).
const (
	warnDays           = 90
	shortLifetimeSlack = 31
)

// now is the check's clock; tests set a fixed time.
var now = time.Now

// rootConfigMaps are the ConfigMaps that publish a trust root, with the key
// holding the PEM bundle: the cluster CA that Kubernetes copies into every
// namespace, and the Istio and Linkerd mesh roots.
var rootConfigMaps = []struct {
	nn, key, what string
	cases         []string
}{
	{"kube-system/kube-root-ca.crt", "ca.crt", "cluster CA",
		[]string{"gitlab-gke-cluster-ca-five-year-expiry-2024", "rancher-rke-one-year-cluster-certs-2019"}},
	{"istio-system/istio-ca-root-cert", "root-cert.pem", "Istio mesh root",
		[]string{"istio-citadel-root-ca-expiry-2019"}},
	{"linkerd/linkerd-identity-trust-roots", "ca-bundle.crt", "Linkerd trust anchor",
		[]string{"linkerd-trust-anchor-one-year-expiry-2020"}},
	// Dapr 1.12 and later (data/dapr-trust-bundle.yaml); older releases
	// keep the root in a Secret only (certificate_expiry_dapr.go).
	{"dapr-system/dapr-trust-bundle", "ca.crt", "Dapr trust anchor",
		[]string{caseDaprSentry}},
}

const originalAPIVersionAnnotation = "kubegap.dev/original-api-version"

func certificateExpiryCheck() check.Check {
	return check.Check{
		ID:       "certificate-expiry",
		Title:    "Certificates the API exposes that expire soon or have expired",
		Severity: finding.Critical,
		Description: "Reads the end date (NotAfter, parsed with crypto/x509) of every certificate the API shows without " +
			"Secret access: the caBundles of admission webhooks, APIServices and CRD conversion webhooks, the cluster CA " +
			"in kube-system/kube-root-ca.crt, the Istio, Linkerd and Dapr (1.12 and later) roots in their ConfigMaps, and the status.notAfter " +
			"of cert-manager Certificates. A bundle stays trusted while its latest certificate is valid. Expired is " +
			"critical (a fail-closed webhook then rejects every request it matches; an expired root stops the mesh or the " +
			"cluster), high inside 30 days (GKE starts its own CA rotation about 30 days ahead; Linkerd's check complains " +
			"inside 60), medium inside 90 days (policy: a quarter to plan the rotation). cert-manager Certificates are " +
			"reported only when their renewal time has passed, since cert-manager renews them itself. Roots published in " +
			"ConfigMaps whose whole lifetime is about a year (Istio 1.0/1.1 Citadel, Linkerd anchors made by hand, " +
			"Dapr Sentry's self-generated root, kubeadm-style one-year certificates) are low when no cert-manager CA Certificate in their namespace owns " +
			"their rotation. Dapr before 1.12 keeps its Sentry root in a Secret only: when its dapr-sentry Deployment is " +
			"within 90 days of a year old (Sentry's self-generated root lives a year), medium, inferred from the age and " +
			"said so, with the rule partial since the real end date is unknown. Control-plane nodes that Cluster API made " +
			"(Tanzu/VKS guest clusters among them; the Node carries the cluster.x-k8s.io/machine annotation) get one-year kubeadm " +
			"certificates when they boot, renewed only by replacing the machine: a node within 90 days of a year old, or older, " +
			"is medium, dated from the Node's creation and said so, the rule partial. " +
			"Kubelet client (kubernetes.io/kube-apiserver-client-kubelet) " +
			"and serving (kubernetes.io/kubelet-serving) CertificateSigningRequests with no Approved, Denied or Failed condition " +
			"more than 15 minutes after they were made (policy) mean kubelets waiting for credentials, as after a cluster was " +
			"powered off past its kubelet certificates' renewal: high for client requests (the nodes cannot authenticate), " +
			"medium for serving ones (logs, exec and metrics against those kubelets fail); this is seen only under way. It cannot see other certificates only in " +
			"Secrets or on hosts (webhook serving certificates, kubeadm and kubelet credentials), nor the API server's " +
			"serving certificate.",
		Reads: []check.Input{
			check.Optional(snapshot.ValidatingWebhookConfigurations),
			check.Optional(snapshot.MutatingWebhookConfigurations),
			check.Optional(snapshot.APIServices),
			check.Optional(snapshot.CustomResourceDefinitions),
			check.Optional(snapshot.ConfigMaps),
			check.Optional(snapshot.CertManagerCertificates),
			check.Optional(snapshot.Deployments),
			check.Optional(snapshot.Nodes),
			check.Optional(snapshot.CertificateSigningRequests),
		},
		Rules: []check.Rule{
			{ID: "webhook-ca-bundles", Summary: "admission webhook caBundles expire within 90 days",
				Needs: []snapshot.Resource{snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations}},
			{ID: "apiservice-ca-bundles", Summary: "APIService caBundles expire within 90 days",
				Needs: []snapshot.Resource{snapshot.APIServices}},
			{ID: "crd-conversion-ca-bundles", Summary: "CRD conversion webhook caBundles expire within 90 days",
				Needs: []snapshot.Resource{snapshot.CustomResourceDefinitions}},
			{ID: "trust-roots", Summary: "the cluster CA or a mesh root expires within 90 days",
				Needs: []snapshot.Resource{snapshot.ConfigMaps}},
			{ID: "cert-manager-renewal", Summary: "cert-manager Certificates past their renewal time expire within 90 days",
				Needs: []snapshot.Resource{snapshot.CertManagerCertificates}},
			{ID: "one-year-roots", Summary: "trust roots with a lifetime of about a year and no cert-manager owner",
				Needs: []snapshot.Resource{snapshot.ConfigMaps, snapshot.CertManagerCertificates}},
			{ID: ruleDaprRoot, Summary: "Dapr releases that keep their root in a Secret only, installed nearly a year ago or more",
				Needs: []snapshot.Resource{snapshot.Deployments}},
			{ID: ruleCAPINodeAge, Summary: "Cluster API control-plane nodes nearly a year old or more, whose kubeadm certificates date from their creation",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleNodeCSRs, Summary: "kubelet client or serving CertificateSigningRequests pending for over 15 minutes",
				Needs: []snapshot.Resource{snapshot.CertificateSigningRequests}},
		},
		Cases: check.Cite(check.Prevents(
			"admission-webhook-cabundle-expired-2020",
			"gitlab-gke-cluster-ca-five-year-expiry-2024",
			"istio-citadel-root-ca-expiry-2019",
			"linkerd-trust-anchor-one-year-expiry-2020",
			"rancher-rke-one-year-cluster-certs-2019",
			caseDaprSentry,
			caseCAPINodeAge,
		), check.Detects(caseACMERateLimit, caseShutdownCSRs)),
		Run: runCertificateExpiry,
	}
}

// certInfo is what the check reads of one certificate.
type certInfo struct {
	Subject             string
	NotBefore, NotAfter time.Time
}

// parseBundle reads every CERTIFICATE block of a PEM bundle, skipping
// other blocks. Data with no certificate, or a block that does not parse,
// is an error: never a panic, whatever the bytes.
func parseBundle(data []byte) ([]certInfo, error) {
	var out []certInfo
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d does not parse: %w", len(out)+1, err)
		}
		out = append(out, certInfo{Subject: c.Subject.String(), NotBefore: c.NotBefore, NotAfter: c.NotAfter})
	}
	if len(out) == 0 {
		return nil, errors.New("holds no PEM certificate")
	}
	return out, nil
}

// upperFirst capitalises the first letter of s, for a title.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// latest is the certificate of a bundle that stays valid longest: a client
// trusting the bundle trusts it until then.
func latest(certs []certInfo) certInfo {
	best := certs[0]
	for _, c := range certs[1:] {
		if c.NotAfter.After(best.NotAfter) {
			best = c
		}
	}
	return best
}

// daysLeft is how many whole days remain until t, negative once past.
func daysLeft(t, at time.Time) int {
	d := t.Sub(at)
	if d < 0 {
		return -int((-d).Hours()/24) - 1
	}
	return int(d.Hours() / 24)
}

type expiryRun struct {
	ctx      *check.Context
	at       time.Time
	failDays int
	fail     horizonFact
	findings []finding.Finding
}

// severity grades days left; ok is false outside the warning horizon.
func (r *expiryRun) severity(left int, expiredSev finding.Severity) (finding.Severity, bool) {
	switch {
	case left < 0:
		return expiredSev, true
	case left < r.failDays:
		return finding.High, true
	case left < warnDays:
		return finding.Medium, true
	}
	return finding.Info, false
}

func (r *expiryRun) when(c certInfo) string {
	left := daysLeft(c.NotAfter, r.at)
	if left < 0 {
		return fmt.Sprintf("expired on %s, %d days ago", c.NotAfter.UTC().Format(time.DateOnly), -left)
	}
	return fmt.Sprintf("expires on %s, in %d days", c.NotAfter.UTC().Format(time.DateOnly), left)
}

func certEvidence(field string, certs []certInfo) []string {
	var ev []string
	for i, c := range certs {
		if i == check.MaxEvidence {
			break
		}
		ev = append(ev, fmt.Sprintf("%s certificate %d: subject %q, valid %s to %s", field, i+1, c.Subject,
			c.NotBefore.UTC().Format(time.DateOnly), c.NotAfter.UTC().Format(time.DateOnly)))
	}
	return ev
}

func runCertificateExpiry(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadExpiryFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	r := &expiryRun{ctx: ctx, at: now()}
	r.failDays, r.fail = facts.failDays()
	r.webhooks(s)
	r.apiServices(s)
	r.crdConversions(s)
	r.roots(s, facts)
	r.certManager(s)
	r.dapr(s)
	r.capiNodes(s, facts)
	r.nodeCSRs(s)
	sort.SliceStable(r.findings, func(i, j int) bool { return r.findings[i].Severity > r.findings[j].Severity })
	return r.findings, nil
}

func (r *expiryRun) horizonText(left int) string {
	switch {
	case left < 0:
		return "has expired"
	case left < r.failDays:
		return fmt.Sprintf("expires within %d days", r.failDays)
	}
	return fmt.Sprintf("expires within %d days", warnDays)
}
