package ingress

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	defaultCertID   = "default-certificate-hosts"
	ruleDefaultCert = "default-certificate-covers-hosts"
	caseMoJDefault  = "moj-cloud-platform-terraform-wrong-cluster-default-certificate-2021"
	maxHostsListed  = 10
)

//go:embed data/default-certificate-hosts.yaml
var defaultCertYAML []byte

type defaultCertFacts struct {
	Fallback []struct {
		Controller string   `json:"controller"`
		Flag       string   `json:"flag"`
		Fact       string   `json:"fact"`
		Sources    []string `json:"sources"`
	} `json:"fallback"`
	Incident []struct {
		ID      string   `json:"id"`
		Fact    string   `json:"fact"`
		Sources []string `json:"sources"`
	} `json:"incident"`
}

var loadDefaultCertFacts = check.Facts("data/default-certificate-hosts.yaml", defaultCertYAML, func(f *defaultCertFacts) error {
	if len(f.Fallback) != 1 || len(f.Incident) != 1 {
		return errors.New("data/default-certificate-hosts.yaml: one fallback and one incident row are required")
	}
	return nil
})

// defaultCertificateHostsCheck compares the names of ingress-nginx's
// default certificate, as the cert-manager Certificate that issues its
// Secret lists them, with the Ingress hosts that fall back to it. The
// Secret itself is never read; a default certificate no Certificate
// issues stays unknown.
func defaultCertificateHostsCheck() check.Check {
	return check.Check{
		ID:       defaultCertID,
		Title:    "Ingress hosts that fall back to a default certificate not issued for them",
		Severity: finding.High,
		Description: "Reads ingress-nginx controllers' --default-ssl-certificate flag (namespace/Secret) from Deployment and " +
			"DaemonSet templates, the cert-manager Certificate in that namespace whose spec.secretName is that Secret, and the " +
			"Ingresses the controller serves (by IngressClass, class annotation, or without a class when it watches those). " +
			"ingress-nginx serves the default certificate for every Ingress tls section without a secretName: a host there " +
			"that none of the Certificate's spec.dnsNames (or commonName) covers, wildcards matching one label, gets a " +
			"certificate for other names, and its clients fail TLS verification. High. This is the state once a wrong change " +
			"to the default certificate has landed (an apply meant for another cluster), so it detects the incident under " +
			"way rather than preventing it. A default certificate that no Certificate in view issues is unknown: the Secret " +
			"is never read. Other controllers' default certificates are not read.",
		Reads: []check.Input{{Resource: snapshot.Ingresses}, {Resource: snapshot.IngressClasses},
			{Resource: snapshot.Deployments}, {Resource: snapshot.DaemonSets}, {Resource: snapshot.CertManagerCertificates}},
		Rules: []check.Rule{
			{ID: ruleDefaultCert, Summary: "every Ingress host that falls back to ingress-nginx's default certificate is among its names",
				Needs: []snapshot.Resource{snapshot.Ingresses, snapshot.IngressClasses, snapshot.Deployments, snapshot.DaemonSets,
					snapshot.CertManagerCertificates}},
		},
		Cases: check.Detects(caseMoJDefault),
		Run:   runDefaultCertificateHosts,
	}
}

// fallbackHost is one host of an Ingress tls entry without a secretName.
type fallbackHost struct {
	ing  *networkingv1.Ingress
	tls  int
	host string
}

func runDefaultCertificateHosts(ctx *check.Context) ([]finding.Finding, error) {
	binding, err := loadNginxFacts()
	if err != nil {
		return nil, err
	}
	facts, err := loadDefaultCertFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	classes := classControllers(s)
	var out []finding.Finding
	for _, n := range findNginxControllers(s, binding.nginx) {
		if n.defaultSSLCert == "" {
			continue
		}
		ns, secret, ok := strings.Cut(strings.ReplaceAll(n.defaultSSLCert, "$(POD_NAMESPACE)", n.ref.Namespace), "/")
		if !ok || ns == "" || secret == "" {
			ctx.Incomplete(ruleDefaultCert, "%s %s/%s: --default-ssl-certificate=%s is not namespace/name", n.ref.Kind, n.ref.Namespace,
				n.ref.Name, n.defaultSSLCert)
			continue
		}
		hosts := fallbackHosts(s, n, classes, binding.nginx)
		if len(hosts) == 0 {
			continue
		}
		cert, found := certificateFor(s, ns, secret)
		if !found {
			ctx.Unknowable(ruleDefaultCert, "the default certificate %s/%s of %s %s/%s is issued by no cert-manager Certificate in the "+
				"input, and the Secret is never read: whether it names the %s falling back to it is unknown",
				ns, secret, n.ref.Kind, n.ref.Namespace, n.ref.Name, check.Plural(len(hosts), "host", "hosts"))
			continue
		}
		names := certNames(cert)
		var uncovered []fallbackHost
		for _, h := range hosts {
			if !covered(h.host, names) {
				uncovered = append(uncovered, h)
			}
		}
		if len(uncovered) > 0 {
			out = append(out, defaultCertFinding(s, facts, n, cert, names, uncovered, len(hosts)))
		}
	}
	return out, nil
}

// fallbackHosts are the hosts of tls entries without a secretName on the
// Ingresses controller n serves.
func fallbackHosts(s *snapshot.Snapshot, n nginxController, classes map[string]string, nginx *controllerFacts) []fallbackHost {
	var out []fallbackHost
	for i := range s.Ingresses {
		ing := &s.Ingresses[i]
		if !serves(n, ing, classes, nginx) {
			continue
		}
		for t, tls := range ing.Spec.TLS {
			if tls.SecretName != "" {
				continue
			}
			for _, h := range tls.Hosts {
				out = append(out, fallbackHost{ing: ing, tls: t, host: h})
			}
		}
	}
	return out
}

// classControllers maps each IngressClass's name to its spec.controller,
// the map serves reads.
func classControllers(s *snapshot.Snapshot) map[string]string {
	m := make(map[string]string, len(s.IngressClasses))
	for i := range s.IngressClasses {
		m[s.IngressClasses[i].Name] = s.IngressClasses[i].Spec.Controller
	}
	return m
}

// serves reports whether ingress-nginx n takes ing: the class annotation
// against --ingress-class, ingressClassName against the IngressClasses
// whose spec.controller is its --controller-class, and a class-less
// Ingress when it watches those (or predates classes being required).
func serves(n nginxController, ing *networkingv1.Ingress, classes map[string]string, nginx *controllerFacts) bool {
	if a := ing.Annotations[classAnnotation]; a != "" {
		want := n.ingressClass
		if want == "" {
			want = nginx.DefaultIngressClass
		}
		return a == want
	}
	if ing.Spec.IngressClassName != nil {
		return classes[*ing.Spec.IngressClassName] == n.controllerClass
	}
	from, _ := check.ParseKubeVersion(nginx.ClassRequiredFrom)
	return n.watchWithoutClass || n.versionKnown && n.version.Less(from)
}

// certificateFor is the cert-manager Certificate in ns that issues secret.
func certificateFor(s *snapshot.Snapshot, ns, secret string) (*unstructured.Unstructured, bool) {
	objs := s.CustomObjects(snapshot.CertManagerCertificates)
	for i := range objs {
		u := &objs[i]
		if u.GetNamespace() != ns {
			continue
		}
		if name, _, _ := unstructured.NestedString(u.Object, "spec", "secretName"); name == secret {
			return u, true
		}
	}
	return nil, false
}

// certNames are the names a Certificate is issued for: spec.dnsNames, and
// spec.commonName, which cert-manager also puts in the certificate.
func certNames(u *unstructured.Unstructured) []string {
	names, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "dnsNames")
	if cn, _, _ := unstructured.NestedString(u.Object, "spec", "commonName"); cn != "" {
		names = append(names, cn)
	}
	return names
}

// covered reports whether a certificate for names serves host: an exact
// name (case-insensitive), or a wildcard *.rest matching one more label.
func covered(host string, names []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, n := range names {
		n = strings.ToLower(strings.TrimSuffix(n, "."))
		if n == host {
			return true
		}
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			if label, parent, ok := strings.Cut(host, "."); ok && label != "" && label != "*" && parent == rest {
				return true
			}
		}
	}
	return false
}

func defaultCertFinding(s *snapshot.Snapshot, facts *defaultCertFacts, n nginxController, cert *unstructured.Unstructured, names []string,
	uncovered []fallbackHost, total int) finding.Finding {
	fb, inc := facts.Fallback[0], facts.Incident[0]
	certRef := check.Ref("cert-manager.io/v1", "Certificate", cert)
	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	sort.SliceStable(uncovered, func(i, j int) bool { return uncovered[i].host < uncovered[j].host })
	var hostList []string
	seenIng := map[string]bool{}
	objects := []finding.ObjectRef{certRef, n.ref}
	var ingQuotes finding.Grouper
	for _, h := range uncovered {
		hostList = append(hostList, h.host)
		key := h.ing.Namespace + "/" + h.ing.Name
		if seenIng[key] || len(seenIng) == check.MaxListedObjects {
			continue
		}
		seenIng[key] = true
		ref := check.Ref("networking.k8s.io/v1", "Ingress", h.ing)
		objects = append(objects, ref)
		ingQuotes.Add(ref, finding.Value(fmt.Sprintf("spec.tls[%d].hosts", h.tls), finding.JSONText(h.ing.Spec.TLS[h.tls].Hosts)),
			finding.Absent(fmt.Sprintf("spec.tls[%d].secretName", h.tls)))
	}
	f := finding.Finding{
		Check:    defaultCertID,
		Severity: finding.High,
		Title: fmt.Sprintf("%s fall back to the default certificate %s/%s, whose Certificate %s does not name them",
			check.Plural(len(uncovered), "Ingress host", "Ingress hosts"), cert.GetNamespace(), secret, cert.GetName()),
		Message: fmt.Sprintf("%s %s/%s serves Secret %s/%s (--default-ssl-certificate) for every Ingress tls section without a "+
			"secretName. cert-manager Certificate %s/%s issues that Secret for %s, which cover %d of the %d hosts falling back "+
			"to it and not %s: clients of those hosts are handed a certificate for other names and fail TLS verification. "+
			"A default certificate changed for the wrong cluster breaks every host at once; this is that state, not its cause.",
			n.ref.Kind, n.ref.Namespace, n.ref.Name, cert.GetNamespace(), secret, cert.GetNamespace(), cert.GetName(),
			strings.Join(names, ", "), total-len(uncovered), total, check.ListText(hostList, maxHostsListed)),
		Objects: objects,
		Remediation: fmt.Sprintf("If the Certificate's names were changed by mistake, restore them (kubectl -n %s edit certificate %s) "+
			"and find the writer in its metadata.managedFields; make every tool that applies to a cluster name its target "+
			"explicitly. If the hosts are new, add them to the Certificate or give their Ingresses a secretName of their own.",
			cert.GetNamespace(), cert.GetName()),
		Cases: []string{caseMoJDefault},
	}
	f.AddEvidence(finding.Quote(certRef, finding.Value("spec.secretName", secret), dnsNamesField(cert)),
		nginxControllerQuote(s, n, fb.Flag))
	f.AddEvidence(ingQuotes.Items()...)
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("%s (%s)", strings.TrimSpace(fb.Fact), strings.Join(fb.Sources, ", ")),
		fmt.Sprintf("%s (%s)", strings.TrimSpace(inc.Fact), strings.Join(inc.Sources, ", ")))
	return f
}

// dnsNamesField quotes spec.dnsNames as the object holds it.
func dnsNamesField(u *unstructured.Unstructured) finding.Field {
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "dnsNames")
	if !found || v == nil {
		return finding.Absent("spec.dnsNames")
	}
	return finding.Value("spec.dnsNames", finding.JSONText(v))
}
