package certs

import (
	"crypto/x509"
	_ "embed"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
			"said so, with the rule partial since the real end date is unknown. It cannot see other certificates only in " +
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
		},
		Cases: check.Cite(check.Prevents(
			"admission-webhook-cabundle-expired-2020",
			"gitlab-gke-cluster-ca-five-year-expiry-2024",
			"istio-citadel-root-ca-expiry-2019",
			"linkerd-trust-anchor-one-year-expiry-2020",
			"rancher-rke-one-year-cluster-certs-2019",
			caseDaprSentry,
		), check.Detects(caseACMERateLimit)),
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

// webhookOne is one webhook of a configuration, as the check sees it.
type webhookOne struct {
	name   string
	bundle []byte
	fail   bool
	// policy quotes failurePolicy as written: its value, or absent (and
	// then the apiVersion the object was written in, which decides the
	// default, when that was v1beta1).
	policy []finding.Field
}

// policyFields quotes a webhook's failurePolicy as the object writes it.
func policyFields(name string, p *admissionv1.FailurePolicyType, annotations map[string]string) []finding.Field {
	path := "webhooks[name=" + name + "].failurePolicy"
	if p != nil {
		return []finding.Field{finding.Value(path, string(*p))}
	}
	out := []finding.Field{finding.Absent(path)}
	if v := annotations[originalAPIVersionAnnotation]; v != "" {
		out = append(out, finding.Value("apiVersion", v))
	}
	return out
}

func (r *expiryRun) webhooks(s *snapshot.Snapshot) {
	for i := range s.ValidatingWebhookConfigurations {
		cfg := &s.ValidatingWebhookConfigurations[i]
		var hooks []webhookOne
		for _, w := range cfg.Webhooks {
			hooks = append(hooks, webhookOne{w.Name, w.ClientConfig.CABundle, failsClosed(w.FailurePolicy, cfg.Annotations),
				policyFields(w.Name, w.FailurePolicy, cfg.Annotations)})
		}
		r.webhookConfig("ValidatingWebhookConfiguration", check.Ref("admissionregistration.k8s.io/v1",
			"ValidatingWebhookConfiguration", cfg), hooks)
	}
	for i := range s.MutatingWebhookConfigurations {
		cfg := &s.MutatingWebhookConfigurations[i]
		var hooks []webhookOne
		for _, w := range cfg.Webhooks {
			hooks = append(hooks, webhookOne{w.Name, w.ClientConfig.CABundle, failsClosed(w.FailurePolicy, cfg.Annotations),
				policyFields(w.Name, w.FailurePolicy, cfg.Annotations)})
		}
		r.webhookConfig("MutatingWebhookConfiguration", check.Ref("admissionregistration.k8s.io/v1",
			"MutatingWebhookConfiguration", cfg), hooks)
	}
}

// failsClosed applies the failurePolicy default of the API version the
// object was written in: Fail in v1, Ignore in v1beta1.
func failsClosed(p *admissionv1.FailurePolicyType, annotations map[string]string) bool {
	if p != nil {
		return *p == admissionv1.Fail
	}
	return annotations[originalAPIVersionAnnotation] != "admissionregistration.k8s.io/v1beta1"
}

func (r *expiryRun) webhookConfig(kind string, ref finding.ObjectRef, hooks []webhookOne) {
	const rule = "webhook-ca-bundles"
	var worst *certInfo
	var worstHook webhookOne
	var ev []string
	var fields []finding.Field // each reported webhook's caBundle and failurePolicy
	anyFail := false
	for _, h := range hooks {
		if len(h.bundle) == 0 {
			continue // the API server's own trust roots: nothing to read
		}
		certs, err := parseBundle(h.bundle)
		if err != nil {
			r.ctx.Unknowable(rule, "%s %s webhook %s: caBundle %v", kind, ref.Name, h.name, err)
			continue
		}
		c := latest(certs)
		left := daysLeft(c.NotAfter, r.at)
		if _, ok := r.severity(left, finding.Critical); !ok {
			continue
		}
		anyFail = anyFail || h.fail && left < 0
		ev = append(ev, fmt.Sprintf("webhooks[%s].clientConfig.caBundle: latest certificate %q %s (failurePolicy %s)",
			h.name, c.Subject, r.when(c), map[bool]string{true: "Fail", false: "Ignore"}[h.fail]))
		// The bundle as the API shows it (base64), from which the dates
		// are read, and the policy that decides what expiry does.
		fields = append(fields, finding.Value("webhooks[name="+h.name+"].clientConfig.caBundle", base64.StdEncoding.EncodeToString(h.bundle)))
		fields = append(fields, h.policy...)
		if worst == nil || c.NotAfter.Before(worst.NotAfter) {
			cc := c
			worst, worstHook = &cc, h
		}
	}
	if worst == nil {
		return
	}
	left := daysLeft(worst.NotAfter, r.at)
	expiredSev := finding.High
	if anyFail {
		expiredSev = finding.Critical
	}
	sev, _ := r.severity(left, expiredSev)
	msg := fmt.Sprintf("The caBundle of webhook %s %s: the API server stops trusting the webhook's serving certificate "+
		"when the last certificate in the bundle expires.", worstHook.name, r.when(*worst))
	if left < 0 && anyFail {
		msg += " With failurePolicy Fail, every request the webhook matches is rejected."
	} else if left < 0 {
		msg += " With failurePolicy Ignore, the webhook is skipped: its policy or mutation is silently not applied."
	}
	if len(ev) > check.MaxEvidence {
		ev = ev[:check.MaxEvidence]
	}
	f := finding.Finding{
		Check:    "certificate-expiry",
		Severity: sev,
		Title:    fmt.Sprintf("%s %s: webhook CA bundle %s", kind, ref.Name, r.horizonText(left)),
		Message:  msg,
		Objects:  []finding.ObjectRef{ref},
		Remediation: "Renew the webhook's CA and serving certificate and update the caBundle (cert-manager's CA injector " +
			"can keep both in step); then make renewal someone's job: an operator that rotates its own certificates, " +
			"or cert-manager.",
		Cases: []string{"admission-webhook-cabundle-expired-2020", "istio-citadel-root-ca-expiry-2019",
			"linkerd-trust-anchor-one-year-expiry-2020"},
	}
	// The dates first, in one line each; then the bundles they are read
	// from, which are long (and a PEM spans lines).
	f.Evidence = append(f.Evidence, ev...)
	f.AddEvidence(finding.Quote(ref, fields...))
	r.findings = append(r.findings, f)
}

// bundleField reads a base64 caBundle string from an unstructured object:
// decoded, and as written.
func bundleField(u *unstructured.Unstructured, fields ...string) (b []byte, raw string, found bool, err error) {
	v, found, err := unstructured.NestedString(u.Object, fields...)
	if err != nil || !found || v == "" {
		return nil, "", false, err
	}
	b, err = base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, v, true, fmt.Errorf("is not base64: %w", err)
	}
	return b, v, true, nil
}

func (r *expiryRun) apiServices(s *snapshot.Snapshot) {
	const rule = "apiservice-ca-bundles"
	objs := s.CustomObjects(snapshot.APIServices)
	for i := range objs {
		u := &objs[i]
		if skip, _, _ := unstructured.NestedBool(u.Object, "spec", "insecureSkipTLSVerify"); skip {
			continue // no CA is checked at all; another matter
		}
		b, raw, found, err := bundleField(u, "spec", "caBundle")
		if err == nil && found {
			// insecureSkipTLSVerify, read above, is quoted with the bundle:
			// not set (or false), so the bundle is what is checked.
			skip := finding.Absent("spec.insecureSkipTLSVerify")
			if v, found, _ := unstructured.NestedBool(u.Object, "spec", "insecureSkipTLSVerify"); found {
				skip = finding.Value("spec.insecureSkipTLSVerify", v)
			}
			r.bundle(rule, "APIService "+u.GetName(), "spec.caBundle", raw, b, []finding.Field{skip}, check.Ref("apiregistration.k8s.io/v1", "APIService", u),
				"The API server stops trusting the aggregated API server when the last certificate in the bundle expires: "+
					"its API group fails, and with it discovery and namespace deletion.",
				"Renew the aggregated API server's certificate and the APIService caBundle together (cert-manager's CA injector can).",
				[]string{"admission-webhook-cabundle-expired-2020"}, finding.Critical)
		} else if err != nil {
			r.ctx.Unknowable(rule, "APIService %s: spec.caBundle %v", u.GetName(), err)
		}
	}
}

func (r *expiryRun) crdConversions(s *snapshot.Snapshot) {
	const rule = "crd-conversion-ca-bundles"
	objs := s.CustomObjects(snapshot.CustomResourceDefinitions)
	for i := range objs {
		u := &objs[i]
		if st, _, _ := unstructured.NestedString(u.Object, "spec", "conversion", "strategy"); st != "Webhook" {
			continue
		}
		b, raw, found, err := bundleField(u, "spec", "conversion", "webhook", "clientConfig", "caBundle")
		if err == nil && found {
			r.bundle(rule, "CustomResourceDefinition "+u.GetName(), "spec.conversion.webhook.clientConfig.caBundle", raw, b,
				[]finding.Field{finding.Value("spec.conversion.strategy", "Webhook")},
				check.Ref("apiextensions.k8s.io/v1", "CustomResourceDefinition", u),
				"The API server stops trusting the conversion webhook when the last certificate in the bundle expires: "+
					"reads and writes of the resource in any version but the stored one fail.",
				"Renew the conversion webhook's certificate and the CRD's caBundle together (cert-manager's CA injector can).",
				[]string{"admission-webhook-cabundle-expired-2020"}, finding.Critical)
		} else if err != nil {
			r.ctx.Unknowable(rule, "CustomResourceDefinition %s: conversion caBundle %v", u.GetName(), err)
		}
	}
}

// bundle reports one PEM bundle that expires inside the warning horizon.
// raw is the field as the object writes it (base64 or PEM), quoted with
// more of the object's fields; the dates are derived from it.
func (r *expiryRun) bundle(rule, what, field, raw string, data []byte, more []finding.Field, ref finding.ObjectRef, impact, fix string,
	cases []string, expiredSev finding.Severity) (certInfo, []certInfo, bool) {
	certs, err := parseBundle(data)
	if err != nil {
		r.ctx.Incomplete(rule, "%s: %s %v", what, field, err)
		return certInfo{}, nil, false
	}
	c := latest(certs)
	left := daysLeft(c.NotAfter, r.at)
	sev, ok := r.severity(left, expiredSev)
	if !ok {
		return c, certs, true
	}
	if left < 0 {
		fix = "It has already expired: replace it now, then keep its successor's end date where an alert fires " +
			"months ahead. " + fix
	}
	ev := append([]string{fmt.Sprintf("%s: the latest certificate, %q, %s", field, c.Subject, r.when(c))},
		certEvidence(field, certs)...)
	if left >= 0 && left < r.failDays {
		ev = append(ev, fmt.Sprintf("%d days: %s", r.failDays, strings.TrimSpace(r.fail.Fact)))
	}
	f := finding.Finding{
		Check:       "certificate-expiry",
		Severity:    sev,
		Title:       fmt.Sprintf("%s: certificate %s", upperFirst(what), r.horizonText(left)),
		Message:     fmt.Sprintf("The %s of %s %s. %s", field, what, r.when(c), impact),
		Objects:     []finding.ObjectRef{ref},
		Remediation: fix,
		Cases:       cases,
	}
	f.Evidence = append(f.Evidence, ev...)
	f.AddEvidence(finding.Quote(ref, append([]finding.Field{finding.Value(field, raw)}, more...)...))
	r.findings = append(r.findings, f)
	return c, certs, true
}

func (r *expiryRun) roots(s *snapshot.Snapshot, facts *expiryFacts) {
	byName := map[string]int{}
	for i := range s.ConfigMaps {
		byName[s.ConfigMaps[i].Namespace+"/"+s.ConfigMaps[i].Name] = i
	}
	owners := caOwners(s)
	ownersKnown := r.ctx.Complete(snapshot.CertManagerCertificates)
	limit := facts.shortLifetimeDays()
	for _, rc := range rootConfigMaps {
		i, ok := byName[rc.nn]
		if !ok {
			continue
		}
		cm := &s.ConfigMaps[i]
		data, ok := cm.Data[rc.key]
		if !ok {
			r.ctx.Incomplete("trust-roots", "ConfigMap %s has no key %s", rc.nn, rc.key)
			continue
		}
		ref := check.Ref("v1", "ConfigMap", cm)
		field := "data[" + rc.key + "]"
		c, certs, ok := r.bundle("trust-roots", "the "+rc.what+" in ConfigMap "+rc.nn, field, data, []byte(data), nil, ref,
			"Everything that trusts this root stops trusting its peers at once when it expires.",
			"Plan the rotation of the "+rc.what+" as a change of your own, before any automatic or forced rotation: "+
				"list the clients that pin the old CA (kubeconfigs, CI, static ServiceAccount token Secrets) and follow "+
				"the provider's or the mesh's rotation procedure.",
			rc.cases, finding.Critical)
		if !ok || daysLeft(c.NotAfter, r.at) < warnDays {
			continue // unreadable, or already reported for its end date
		}
		lifetime := int(c.NotAfter.Sub(c.NotBefore).Hours() / 24)
		if lifetime > limit {
			continue
		}
		if owners[cm.Namespace] != "" {
			continue
		}
		if !ownersKnown {
			r.ctx.Incomplete("one-year-roots", "the %s lives %d days, but cert-manager Certificates were not read "+
				"completely, so whether one rotates it is unknown", rc.what, lifetime)
			continue
		}
		var why []string
		for _, h := range facts.OneYear {
			why = append(why, strings.TrimSpace(h.Fact))
		}
		f := finding.Finding{
			Check:    "certificate-expiry",
			Severity: finding.Low,
			Title:    fmt.Sprintf("The %s in ConfigMap %s lives only %d days and no cert-manager Certificate rotates it", rc.what, rc.nn, lifetime),
			Message: fmt.Sprintf("The %s was issued for %d days and %s. No cert-manager CA Certificate in namespace %s "+
				"owns its renewal, so unless something outside the cluster does, it will expire the way one-year roots "+
				"installers generated once have expired before.", rc.what, lifetime, r.when(c), cm.Namespace),
			Objects: []finding.ObjectRef{ref},
			Remediation: "Give the root an owner: issue it (or an intermediate under a long-lived offline root) from " +
				"cert-manager or trust-manager with renewal, or record its end date where an alert will fire months ahead.",
			Cases: oneYearCases(rc.cases),
		}
		// The root as the ConfigMap holds it, after the lines that give
		// its lifetime and dates, which are derived from it.
		f.Evidence = append(f.Evidence, certEvidence(field, certs[:1])...)
		f.Evidence = append(f.Evidence, fmt.Sprintf("lifetime %d days (%s to %s); cert-manager Certificates read completely, none with isCA in %s",
			lifetime, c.NotBefore.UTC().Format(time.DateOnly), c.NotAfter.UTC().Format(time.DateOnly), cm.Namespace))
		f.Evidence = append(f.Evidence, why...)
		f.AddEvidence(finding.Quote(ref, finding.Value(field, data)))
		r.findings = append(r.findings, f)
	}
}

// oneYearCases are the cases a one-year root cites: the one-year root
// incidents, and the root's own cases.
func oneYearCases(own []string) []string {
	out := []string{"istio-citadel-root-ca-expiry-2019", "linkerd-trust-anchor-one-year-expiry-2020",
		"rancher-rke-one-year-cluster-certs-2019"}
	for _, id := range own {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// caOwners maps a namespace to a cert-manager Certificate in it that
// issues a CA (spec.isCA): the owner of a root's rotation there.
func caOwners(s *snapshot.Snapshot) map[string]string {
	out := map[string]string{}
	objs := s.CustomObjects(snapshot.CertManagerCertificates)
	for i := range objs {
		if isCA, _, _ := unstructured.NestedBool(objs[i].Object, "spec", "isCA"); isCA {
			out[objs[i].GetNamespace()] = objs[i].GetName()
		}
	}
	return out
}

// caseACMERateLimit is the case of renewals refused by ACME rate limits:
// the cert-manager rule sees it once the renewal time has passed unrenewed.
const caseACMERateLimit = "cert-manager-acme-rate-limit-renewal-loops-2020-2026"

func (r *expiryRun) certManager(s *snapshot.Snapshot) {
	const rule = "cert-manager-renewal"
	objs := s.CustomObjects(snapshot.CertManagerCertificates)
	for i := range objs {
		u := &objs[i]
		na, found, _ := unstructured.NestedString(u.Object, "status", "notAfter")
		if !found || na == "" {
			continue // not issued yet: another problem, not an end date
		}
		notAfter, err := time.Parse(time.RFC3339, na)
		if err != nil {
			r.ctx.Incomplete(rule, "Certificate %s/%s: status.notAfter %q is not a time", u.GetNamespace(), u.GetName(), na)
			continue
		}
		left := daysLeft(notAfter, r.at)
		sev, ok := r.severity(left, finding.Critical)
		if !ok {
			continue
		}
		fields := []finding.Field{finding.Value("status.notAfter", na)}
		var ev []string
		if rt, found, _ := unstructured.NestedString(u.Object, "status", "renewalTime"); found && rt != "" {
			renewal, err := time.Parse(time.RFC3339, rt)
			if err == nil && renewal.After(r.at) && left >= 0 {
				continue // cert-manager has not tried yet: its renewal is due later
			}
			fields = append(fields, finding.Value("status.renewalTime", rt))
			ev = append(ev, fmt.Sprintf("status.renewalTime %s has passed", rt))
		} else {
			fields = append(fields, finding.Absent("status.renewalTime"))
		}
		fields = append(fields, readyFields(u)...)
		c := certInfo{NotAfter: notAfter}
		f := finding.Finding{
			Check:    "certificate-expiry",
			Severity: sev,
			Title:    fmt.Sprintf("cert-manager Certificate %s/%s %s and was not renewed", u.GetNamespace(), u.GetName(), r.horizonText(left)),
			Message: fmt.Sprintf("The certificate %s, and its renewal time has passed: cert-manager tried to renew it "+
				"and failed, or is not running.", r.when(c)),
			Objects: []finding.ObjectRef{check.Ref("cert-manager.io/v1", "Certificate", u)},
			Remediation: "Find why renewal fails (kubectl describe certificate, the CertificateRequest and the issuer's " +
				"status; cert-manager's logs) and fix the issuer; cmctl renew forces a new attempt.",
			Cases: []string{"linkerd-trust-anchor-one-year-expiry-2020", caseACMERateLimit},
		}
		f.AddEvidence(finding.Quote(check.Ref("cert-manager.io/v1", "Certificate", u), fields...))
		f.Evidence = append(f.Evidence, ev...)
		r.findings = append(r.findings, f)
	}
}

// readyFields quotes the Ready condition of a cert-manager Certificate
// when it is not True: its status, reason and message, each as written or
// absent (the old text printed a missing reason as "<nil>").
func readyFields(u *unstructured.Unstructured) []finding.Field {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" || m["status"] == "True" {
			continue
		}
		var out []finding.Field
		for _, key := range []string{"status", "reason", "message"} {
			path := "status.conditions[type=Ready]." + key
			if v, ok := m[key].(string); ok && v != "" {
				out = append(out, finding.Value(path, v))
			} else {
				out = append(out, finding.Absent(path))
			}
		}
		return out
	}
	return nil
}
