package ingress

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

// ruleDefaultCiphers flags a controller from before the release whose
// default ssl-ciphers dropped the CBC suites, when nothing pins the list:
// the upgrade changes which clients can connect without any setting
// changing, as it did for MoJ.
const ruleDefaultCiphers = "cbc-ciphers-lost-on-upgrade"

// judgeDefaultCiphers is the rule for one controller. The ConfigMap is
// judged only when its data is in the input; one kubegap does not read
// leaves ssl-ciphers unknown, and the finding says so with the command
// that shows it, rather than taking it as unset.
func judgeDefaultCiphers(ctx *check.Context, facts *legacyTLSFacts, n nginxController, configMaps map[string]*corev1.ConfigMap) (finding.Finding, bool) {
	if !n.versionKnown {
		ctx.Incomplete(ruleDefaultCiphers, "the version of %s is unknown (image %s)", n.ref, n.image)
		return finding.Finding{}, false
	}
	if !n.version.Less(facts.ciphersChanged) {
		return finding.Finding{}, false // already on the shorter default list
	}
	quote := nginxControllerQuote(ctx.Snapshot, n, "configmap")
	derived := fmt.Sprintf("ingress-nginx %s, from the image tag, is before %s, whose default ssl-ciphers has no CBC suites", n.version, facts.CiphersChanged)
	f := finding.Finding{
		Check:    "ingress-nginx-legacy-tls",
		Severity: finding.Low,
		Title:    fmt.Sprintf("%s will stop offering the CBC cipher suites when upgraded past %s", n.ref, facts.CiphersChanged),
		Objects:  []finding.ObjectRef{n.ref},
		Remediation: "Before upgrading, decide whether clients that need CBC suites (older browsers and devices) still matter. If they " +
			"do, set ssl-ciphers in the controller's ConfigMap to a list that includes the CBC suites they share, and test their " +
			"handshake after the upgrade; if they do not, accept the loss and tell their owners.",
		Cases: []string{caseMoJTLS},
	}
	name := controllerConfigMap(n.configMap, n.ref.Namespace)
	cm := configMaps[name]
	switch {
	case n.configMap == "":
		f.Message = fmt.Sprintf("%s runs ingress-nginx %s with no --configmap, so it serves the default ssl-ciphers. From %s that "+
			"default has no CBC suites: the upgrade cuts off clients that need them with no setting changed, as Internet Explorer 11 "+
			"users were cut off in the MoJ case.", n.ref, n.version, facts.CiphersChanged)
		f.AddEvidence(quote)
		f.Evidence = append(f.Evidence, derived, "no --configmap argument: every setting is the default")
	case cm != nil && (cm.Data != nil || name == facts.ConfigMap):
		if _, set := cm.Data["ssl-ciphers"]; set {
			return finding.Finding{}, false // the list is pinned: the upgrade does not change it
		}
		cmRef := finding.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}
		f.Objects = append(f.Objects, cmRef)
		f.Message = fmt.Sprintf("%s runs ingress-nginx %s and its ConfigMap %s does not set ssl-ciphers, so it serves the default list. "+
			"From %s that default has no CBC suites: the upgrade cuts off clients that need them with no setting changed, as "+
			"Internet Explorer 11 users were cut off in the MoJ case.", n.ref, n.version, name, facts.CiphersChanged)
		f.AddEvidence(quote)
		f.Evidence = append(f.Evidence, derived,
			fmt.Sprintf("ConfigMap %s has no ssl-ciphers key (its data keys: %s)", name, keyList(cm.Data)))
	default:
		ns, cmName, ok := strings.Cut(name, "/")
		if !ok {
			ns, cmName = n.ref.Namespace, name
		}
		f.Message = fmt.Sprintf("%s runs ingress-nginx %s. From %s the default ssl-ciphers has no CBC suites, so if its ConfigMap %s "+
			"does not set ssl-ciphers, the upgrade cuts off clients that need them, as Internet Explorer 11 users were cut off in the "+
			"MoJ case. Whether it sets ssl-ciphers is not known: kubegap did not read that ConfigMap.", n.ref, n.version, facts.CiphersChanged, name)
		// The title must not assert the loss: the unread ConfigMap may pin
		// the list.
		f.Title = fmt.Sprintf("%s may stop offering the CBC cipher suites when upgraded past %s (its ConfigMap %s was not read)",
			n.ref, facts.CiphersChanged, name)
		unknown := fmt.Sprintf("ssl-ciphers in ConfigMap %s is not known: that ConfigMap was not read (kubectl get configmap %s -n %s -o yaml shows it)", name, cmName, ns)
		f.AddEvidence(quote)
		f.Evidence = append(f.Evidence, derived, unknown)
		// The finding may be a false alarm, so the rule is also listed as
		// not complete: the report marks it "findings below, but incomplete".
		ctx.Incomplete(ruleDefaultCiphers, "%s: %s", n.ref, unknown)
	}
	return f, true
}

// keyList names a ConfigMap's data keys, sorted, or says there are none.
func keyList(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
