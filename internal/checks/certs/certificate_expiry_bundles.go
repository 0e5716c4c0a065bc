package certs

// certificate-expiry: the CA bundles the API server trusts to reach other
// servers (webhook configurations, APIServices, CRD conversion webhooks).

import (
	"encoding/base64"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

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
