package certs

// certificate-expiry: the cluster's root CA ConfigMaps and the one-year
// certificates of the control plane.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

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
