package certs

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The Dapr part of certificate-expiry: Dapr's Sentry signs every
// sidecar's certificate with a root it generates itself, for a year, when
// the operator brings none. From Dapr 1.12 the root is also published in a
// ConfigMap, which the trust-roots rule reads like the Istio and Linkerd
// roots (rootConfigMaps); before 1.12 it is only in a Secret, which
// kubegap never reads, so this rule infers the renewal date from when the
// Sentry Deployment was created and says it is an inference.

const (
	ruleDaprRoot    = "dapr-secret-only-root"
	caseDaprSentry  = "dapr-sentry-one-year-root-cert-expiry-2021-2024"
	daprSentryName  = "dapr-sentry"
	daprTrustBundle = "dapr-trust-bundle"
)

//go:embed data/dapr-trust-bundle.yaml
var daprFactsYAML []byte

type daprFacts struct {
	Namespace []struct {
		Name    string   `json:"name"`
		Sources []string `json:"sources"`
	} `json:"namespace"`
	PublishedFrom []struct {
		Version   string   `json:"version"`
		ConfigMap string   `json:"configMap"`
		Key       string   `json:"key"`
		Sources   []string `json:"sources"`
	} `json:"publishedFrom"`
	SelfSigned []struct {
		Days    int      `json:"days"`
		Sources []string `json:"sources"`
	} `json:"selfSigned"`

	from check.KubeVersion
}

var loadDaprFacts = check.Facts("data/dapr-trust-bundle.yaml", daprFactsYAML, func(f *daprFacts) error {
	if len(f.Namespace) != 1 || len(f.PublishedFrom) != 1 || len(f.SelfSigned) != 1 || f.SelfSigned[0].Days <= 0 {
		return errors.New("data/dapr-trust-bundle.yaml: one namespace, one publishedFrom and one selfSigned row are required")
	}
	v, ok := check.ParseKubeVersion(f.PublishedFrom[0].Version)
	if !ok {
		return fmt.Errorf("data/dapr-trust-bundle.yaml: bad version %q", f.PublishedFrom[0].Version)
	}
	f.from = v
	return nil
})

// daprVersion reads the Dapr release from the Sentry container's image tag
// (daprio/dapr:1.7.2, ghcr.io/dapr/sentry:1.14.4, 1.13.0-mariner); ok is
// false for a digest or a tag that is not a version.
func daprVersion(d *appsv1.Deployment) (container, image string, v check.KubeVersion, ok bool) {
	for _, c := range d.Spec.Template.Spec.Containers {
		if n := check.ImageName(c.Image); n != "dapr" && n != "sentry" {
			continue
		}
		_, tag, _ := check.ImageParts(c.Image)
		v, ok = check.ParseKubeVersion(tag)
		return c.Name, c.Image, v, ok
	}
	if cs := d.Spec.Template.Spec.Containers; len(cs) > 0 {
		return cs[0].Name, cs[0].Image, check.KubeVersion{}, false
	}
	return "", "", check.KubeVersion{}, false
}

// dapr judges every Dapr Sentry Deployment: where its release keeps the
// root, and, when that is a Secret only, how old the install is.
func (r *expiryRun) dapr(s *snapshot.Snapshot) {
	facts, err := loadDaprFacts()
	if err != nil {
		r.ctx.Unknowable(ruleDaprRoot, "%v", err)
		return
	}
	ns := facts.Namespace[0].Name
	pub := facts.PublishedFrom[0]
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Name != daprSentryName {
			continue
		}
		container, image, v, ok := daprVersion(d)
		switch {
		case !ok:
			r.ctx.Unknowable(ruleDaprRoot, "Deployment %s/%s runs %q, whose tag is not a Dapr version: where it keeps its root, "+
				"and when that expires, is unknown", d.Namespace, d.Name, image)
		case !v.Less(facts.from) && d.Namespace != ns:
			r.ctx.Unknowable(ruleDaprRoot, "Dapr %s in namespace %s publishes its root in ConfigMap %s/%s, which kubegap does not "+
				"read (it reads that ConfigMap in %s only)", v, d.Namespace, d.Namespace, pub.ConfigMap, ns)
		case !v.Less(facts.from):
			// The trust-roots rule reads the ConfigMap; say so if it is
			// missing from a read that would have held it.
			if !r.hasConfigMap(s, ns, pub.ConfigMap) && r.ctx.CompleteIn(snapshot.ConfigMaps, ns) {
				r.ctx.Incomplete("trust-roots", "Dapr %s runs in %s, but its ConfigMap %s/%s, which Sentry fills with the root, "+
					"does not exist: the root's end date is unknown", v, ns, ns, pub.ConfigMap)
			}
		default:
			r.daprSecretOnly(d, container, image, v, facts)
		}
	}
}

func (r *expiryRun) hasConfigMap(s *snapshot.Snapshot, ns, name string) bool {
	for i := range s.ConfigMaps {
		if s.ConfigMaps[i].Namespace == ns && s.ConfigMaps[i].Name == name {
			return true
		}
	}
	return false
}

// daprSecretOnly reports a Dapr release that keeps its root in the Secret
// only, once its Sentry Deployment is within warnDays of a year old: the
// date on which a root Sentry generated at install expires, unless it was
// renewed or brought by the operator, which the API does not show.
func (r *expiryRun) daprSecretOnly(d *appsv1.Deployment, container, image string, v check.KubeVersion, facts *daprFacts) {
	pub, life := facts.PublishedFrom[0], facts.SelfSigned[0]
	r.ctx.Unknowable(ruleDaprRoot, "Dapr %s in %s keeps its root only in Secret %s/%s, which kubegap never reads: its end date "+
		"is unknown", v, d.Namespace, d.Namespace, daprTrustBundle)
	created := d.CreationTimestamp.Time
	if created.IsZero() {
		return
	}
	due := created.Add(time.Duration(life.Days) * 24 * time.Hour)
	left := daysLeft(due, r.at)
	if left >= warnDays {
		return
	}
	day := due.UTC().Format(time.DateOnly)
	when, then := fmt.Sprintf("would expire on %s, in %d days", day, left), fmt.Sprintf("expire on %s, in %d days", day, left)
	if left < 0 {
		when, then = fmt.Sprintf("would have expired on %s, %d days ago", day, -left), fmt.Sprintf("expired on %s, %d days ago", day, -left)
	}
	ref := check.Ref("apps/v1", "Deployment", d)
	f := finding.Finding{
		Check:    "certificate-expiry",
		Severity: finding.Medium,
		Title: fmt.Sprintf("Dapr %s in %s keeps its root in a Secret only, and a root Sentry generated at install %s",
			v, d.Namespace, when),
		Message: fmt.Sprintf("Dapr releases before %s keep the Sentry root and issuer only in Secret %s/%s. When the operator "+
			"brings no certificates, Sentry generates both at its first start, valid for %d days, and nothing renews them; "+
			"Deployment %s was created on %s, so if Sentry generated them then and nobody renewed them, they %s. Every "+
			"sidecar talks mTLS to the control plane, whatever the mTLS setting, so once they expire daprd cannot start. "+
			"This is inferred from the Deployment's age: kubegap never reads the Secret, so the real end date is unknown.",
			pub.Version, d.Namespace, daprTrustBundle, life.Days, d.Name, created.UTC().Format(time.DateOnly), then),
		Objects: []finding.ObjectRef{ref},
		Remediation: fmt.Sprintf("Read the real end date (dapr mtls expiry, or kubectl -n %s get secret %s -o jsonpath='{.data.ca\\.crt}' "+
			"| base64 -d | openssl x509 -noout -enddate, both of which read the Secret). Before it, renew with dapr mtls "+
			"renew-certificate -k --valid-until DAYS --restart, or bring your own longer-lived root, and restart the "+
			"Dapr-enabled Deployments; from Dapr %s the root is also published in ConfigMap %s, where kubegap reads its end date.",
			d.Namespace, daprTrustBundle, pub.Version, pub.ConfigMap),
		Cases: []string{caseDaprSentry},
	}
	f.AddEvidence(finding.Quote(ref,
		finding.Value(check.ContainerField("Deployment", "", container, "image"), image),
		finding.Value("metadata.creationTimestamp", created.UTC().Format(time.RFC3339))))
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("root published in ConfigMap %s key %s from Dapr %s; in the Secret only before (%s)", pub.ConfigMap, pub.Key,
			pub.Version, strings.Join(pub.Sources, ", ")),
		fmt.Sprintf("Sentry's self-generated root and issuer live %d days (%s)", life.Days, strings.Join(life.Sources, ", ")))
	r.findings = append(r.findings, f)
}
