package ingress

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/ingress-nginx-legacy-tls.yaml
var legacyTLSYAML []byte

// legacyTLSFacts is data/ingress-nginx-legacy-tls.yaml.
type legacyTLSFacts struct {
	LegacyProtocols   []string `json:"legacyProtocols"`
	LastWorking       string   `json:"lastWorking"`
	FirstBroken       string   `json:"firstBroken"`
	SecurityLevelZero string   `json:"securityLevelZero"`
	ConfigMap         string   `json:"configMap"`
	CiphersChanged    string   `json:"ciphersChanged"`
	Sources           []string `json:"sources"`

	lastWorking, firstBroken, ciphersChanged check.KubeVersion
}

var loadLegacyTLSFacts = check.Facts("ingress-nginx TLS facts", legacyTLSYAML, func(f *legacyTLSFacts) error {
	var ok1, ok2, ok3 bool
	f.lastWorking, ok1 = check.ParseKubeVersion(f.LastWorking)
	f.firstBroken, ok2 = check.ParseKubeVersion(f.FirstBroken)
	f.ciphersChanged, ok3 = check.ParseKubeVersion(f.CiphersChanged)
	if !ok1 || !ok2 || !ok3 || !f.lastWorking.Less(f.firstBroken) || len(f.LegacyProtocols) == 0 || f.SecurityLevelZero == "" ||
		!slices.Contains(snapshot.NamedConfigMaps, f.ConfigMap) {
		return errors.New("ingress-nginx TLS facts: versions (ciphersChanged too), legacyProtocols, securityLevelZero and a ConfigMap kubegap reads are required")
	}
	return nil
})

// Rules of ingress-nginx-legacy-tls.
const (
	ruleLegacyDropped = "legacy-tls-not-offered"
	ruleLegacyUpgrade = "legacy-tls-lost-on-upgrade"
	caseMoJTLS        = "moj-cloud-platform-ingress-nginx-upgrade-drops-legacy-tls-2020"
)

func ingressNginxLegacyTLSCheck() check.Check {
	needs := []snapshot.Resource{snapshot.Deployments, snapshot.DaemonSets, snapshot.ConfigMaps}
	return check.Check{
		ID:       "ingress-nginx-legacy-tls",
		Title:    "ingress-nginx asked for legacy TLS that its build does not offer",
		Severity: finding.Medium,
		Description: "Operators add TLSv1 and TLSv1.1 to ingress-nginx's ssl-protocols for clients that cannot do better " +
			"(old browsers, devices); when an upgrade stops offering them, those clients lose every site behind the " +
			"controller and nobody else notices. ingress-nginx 1.6.4 and later are built on OpenSSL 3, where TLS 1.0 " +
			"and 1.1 need security level 0 (@SECLEVEL=0 in ssl-ciphers). Medium: a controller of 1.6.4 or later whose " +
			"ConfigMap lists a legacy protocol in ssl-protocols without @SECLEVEL=0 in ssl-ciphers; low: a controller " +
			"of 1.5.1 or earlier with such settings, which the upgrade will silently drop. Reads the controller's " +
			"--configmap; kubegap reads only ingress-nginx/ingress-nginx-controller, the name the project's manifests " +
			"and chart use, so other names leave those two rules partial. Releases between 1.5.1 and 1.6.4 are not judged. Low: a " +
			"controller before 0.27.0, whose default ssl-ciphers still has CBC suites, with no ssl-ciphers in its ConfigMap; when " +
			"that ConfigMap is not one kubegap reads, the finding says ssl-ciphers is not known and gives the kubectl command that shows it.",
		Reads: check.Needs(snapshot.Deployments, snapshot.DaemonSets, snapshot.ConfigMaps),
		Rules: []check.Rule{
			{ID: ruleLegacyDropped, Summary: "ingress-nginx 1.6.4+ asked for TLSv1/TLSv1.1 without @SECLEVEL=0", Needs: needs},
			{ID: ruleLegacyUpgrade, Summary: "ingress-nginx 1.5.1 or earlier whose legacy TLS settings an upgrade will drop", Needs: needs},
			{ID: ruleDefaultCiphers, Summary: "ingress-nginx before 0.27.0 on the default ssl-ciphers, which loses its CBC suites on upgrade", Needs: needs},
		},
		Cases: check.Prevents(caseMoJTLS),
		Run:   runIngressNginxLegacyTLS,
	}
}

func runIngressNginxLegacyTLS(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadLegacyTLSFacts()
	if err != nil {
		return nil, err
	}
	binding, err := loadNginxFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Deployments) == 0 && len(s.DaemonSets) == 0 && !ctx.Present(snapshot.Deployments) && !ctx.Present(snapshot.DaemonSets) {
		return nil, check.NotEvaluated("the input has no Deployments or DaemonSets")
	}
	controllers := findNginxControllers(s, binding.nginx)
	if len(controllers) == 0 {
		return nil, nil
	}
	// Every ConfigMap keyed by a string, built only when a controller
	// has a --configmap to look up.
	configMaps := check.ConfigMapsByKey(s)
	var out []finding.Finding
	for _, n := range controllers {
		if f, ok := judgeLegacyTLS(ctx, facts, n, configMaps); ok {
			out = append(out, f)
		}
		if f, ok := judgeDefaultCiphers(ctx, facts, n, configMaps); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// controllerConfigMap resolves --configmap for a controller in namespace ns.
func controllerConfigMap(flag, ns string) string {
	return strings.ReplaceAll(flag, "$(POD_NAMESPACE)", ns)
}

func judgeLegacyTLS(ctx *check.Context, facts *legacyTLSFacts, n nginxController, configMaps map[string]*corev1.ConfigMap) (finding.Finding, bool) {
	bothRules := func(format string, args ...any) {
		ctx.Incomplete(ruleLegacyDropped, format, args...)
		ctx.Incomplete(ruleLegacyUpgrade, format, args...)
	}
	name := controllerConfigMap(n.configMap, n.ref.Namespace)
	switch {
	case n.configMap == "":
		return finding.Finding{}, false // no ConfigMap: the defaults offer no legacy TLS to lose
	case name != facts.ConfigMap:
		bothRules("%s reads ConfigMap %s, which kubegap does not read (only %s)", n.ref, name, facts.ConfigMap)
		return finding.Finding{}, false
	}
	cm := configMaps[name]
	if cm == nil {
		if !ctx.Complete(snapshot.ConfigMaps) {
			bothRules("ConfigMap %s of %s is not in the input", name, n.ref)
		}
		return finding.Finding{}, false
	}
	legacy := legacyIn(cm.Data["ssl-protocols"], facts.LegacyProtocols)
	if len(legacy) == 0 || strings.Contains(cm.Data["ssl-ciphers"], facts.SecurityLevelZero) {
		return finding.Finding{}, false
	}
	if !n.versionKnown {
		bothRules("the version of %s is unknown (image %s)", n.ref, n.image)
		return finding.Finding{}, false
	}
	cmRef := finding.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}
	ev := []finding.EvidenceItem{nginxControllerQuote(ctx.Snapshot, n, "configmap"),
		finding.Quote(cmRef, finding.Value("data[ssl-protocols]", cm.Data["ssl-protocols"]),
			finding.Value("data[ssl-ciphers]", cm.Data["ssl-ciphers"]))}
	asked := strings.Join(legacy, " and ")
	derived := fmt.Sprintf("ingress-nginx %s, from the image tag; ssl-protocols lists %s; ssl-ciphers has no %s", n.version, asked, facts.SecurityLevelZero)
	switch {
	case !n.version.Less(facts.firstBroken):
		return legacyFinding(finding.Medium, n, cmRef, ev, derived,
			fmt.Sprintf("%s runs ingress-nginx %s and its ConfigMap %s asks for %s, but from %s the controller is built on OpenSSL 3, "+
				"which offers TLS 1.0 and 1.1 only at security level 0, and ssl-ciphers does not select it. The clients the setting "+
				"was written for cannot connect to any Ingress this controller serves.", n.ref, n.version, name, asked, facts.FirstBroken)), true
	case !facts.lastWorking.Less(n.version):
		return legacyFinding(finding.Low, n, cmRef, ev, derived,
			fmt.Sprintf("%s runs ingress-nginx %s and its ConfigMap %s asks for %s. Upgrading to %s or later drops them without an "+
				"error unless ssl-ciphers also selects security level 0: the clients that need them lose every site at once, "+
				"as Internet Explorer 11 users did in the MoJ case.", n.ref, n.version, name, asked, facts.FirstBroken)), true
	default:
		bothRules("%s runs ingress-nginx %s, between %s and %s, which is not judged", n.ref, n.version, facts.LastWorking, facts.FirstBroken)
		return finding.Finding{}, false
	}
}

// legacyIn returns the legacy protocols a ssl-protocols value lists.
func legacyIn(protocols string, legacy []string) []string {
	var out []string
	for _, p := range strings.Fields(protocols) {
		if slices.Contains(legacy, p) {
			out = append(out, p)
		}
	}
	return out
}

func legacyFinding(sev finding.Severity, n nginxController, cm finding.ObjectRef, ev []finding.EvidenceItem, derived, msg string) finding.Finding {
	title := fmt.Sprintf("%s does not offer the legacy TLS versions its ConfigMap asks for", n.ref)
	if sev == finding.Low {
		title = fmt.Sprintf("%s will stop offering the legacy TLS versions its ConfigMap asks for when upgraded", n.ref)
	}
	f := finding.Finding{
		Check:    "ingress-nginx-legacy-tls",
		Severity: sev,
		Title:    title,
		Message:  msg,
		Objects:  []finding.ObjectRef{n.ref, cm},
		Remediation: "Decide whether the legacy clients still matter. If they do, add @SECLEVEL=0 to ssl-ciphers (with a cipher " +
			"list the clients share, such as Mozilla's 'old' profile) and test a TLS 1.0/1.1 handshake after every " +
			"controller upgrade; if they do not, remove TLSv1 and TLSv1.1 from ssl-protocols so the setting says what is served.",
		Cases: []string{caseMoJTLS},
	}
	f.AddEvidence(ev...)
	f.Evidence = append(f.Evidence, derived)
	return f
}

// nginxControllerQuote quotes the controller container's image and its
// --flag argument (configmap, default-ssl-certificate), as the workload's
// template writes them.
func nginxControllerQuote(s *snapshot.Snapshot, n nginxController, flag string) finding.EvidenceItem {
	var spec *corev1.PodSpec
	switch n.ref.Kind {
	case "Deployment":
		for i := range s.Deployments {
			if d := &s.Deployments[i]; d.Namespace == n.ref.Namespace && d.Name == n.ref.Name {
				spec = &d.Spec.Template.Spec
			}
		}
	case "DaemonSet":
		for i := range s.DaemonSets {
			if d := &s.DaemonSets[i]; d.Namespace == n.ref.Namespace && d.Name == n.ref.Name {
				spec = &d.Spec.Template.Spec
			}
		}
	}
	var fields []finding.Field
	if spec != nil {
		for _, c := range spec.Containers {
			if c.Image != n.image {
				continue
			}
			fields = append(fields, finding.Value(check.ContainerField(n.ref.Kind, "", c.Name, "image"), c.Image))
			for _, list := range []struct {
				field string
				argv  []string
			}{{"command", c.Command}, {"args", c.Args}} {
				for i, a := range list.argv {
					if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name == flag {
						fields = append(fields, finding.Value(check.ContainerField(n.ref.Kind, "", c.Name, fmt.Sprintf("%s[%d]", list.field, i)), a))
					}
				}
			}
			break
		}
	}
	return finding.Quote(n.ref, fields...)
}
