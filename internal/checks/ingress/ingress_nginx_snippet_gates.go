package ingress

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/ingress-nginx-snippet-gates.yaml
var snippetGatesYAML []byte

type snippetGateFacts struct {
	Annotations  []string `json:"annotations"`
	AllowKey     string   `json:"allowKey"`
	AllowOffFrom string   `json:"allowOffFrom"`
	RiskKey      string   `json:"riskKey"`
	RiskNeeded   string   `json:"riskNeeded"`
	RiskHighFrom string   `json:"riskHighFrom"`
	ConfigMap    string   `json:"configMap"`
	Sources      []string `json:"sources"`

	allowOff, riskHigh check.KubeVersion
}

var loadSnippetGateFacts = check.Facts("ingress-nginx snippet gate facts", snippetGatesYAML, func(f *snippetGateFacts) error {
	var ok1, ok2 bool
	f.allowOff, ok1 = check.ParseKubeVersion(f.AllowOffFrom)
	f.riskHigh, ok2 = check.ParseKubeVersion(f.RiskHighFrom)
	if !ok1 || !ok2 || len(f.Annotations) == 0 || f.AllowKey == "" || f.RiskKey == "" || f.ConfigMap == "" {
		return fmt.Errorf("ingress-nginx snippet gate facts: versions %q, %q or keys missing", f.AllowOffFrom, f.RiskHighFrom)
	}
	return nil
})

const (
	snippetGatesID   = "ingress-nginx-snippet-gates"
	ruleSnippetsGate = "snippets-refused"
	caseSnippets     = "ingress-nginx-snippets-disabled-and-risk-level-2023-2025"
	maxSnippetsShown = 5
)

func ingressNginxSnippetGatesCheck() check.Check {
	needs := []snapshot.Resource{snapshot.Ingresses, snapshot.IngressClasses, snapshot.Deployments, snapshot.DaemonSets, snapshot.ConfigMaps}
	return check.Check{
		ID:       snippetGatesID,
		Title:    "Ingress snippet annotations that ingress-nginx refuses, or will refuse after an upgrade",
		Severity: finding.High,
		Description: "Reads the Ingresses each ingress-nginx controller serves that carry snippet annotations " +
			"(configuration-, server-, stream- and auth-snippet), against the controller's version (image tag) and the " +
			"allow-snippet-annotations and annotations-risk-level keys of its ConfigMap. Snippets are taken only when " +
			"allow-snippet-annotations is \"true\" (the default before 1.9.0) and annotations-risk-level is Critical (the " +
			"default before 1.12.0, High from then). High where they are refused now: the webhook denies the next apply " +
			"and the controller drops the snippets, so what they configured (headers, auth, rewrites) is gone from the " +
			"routes. Medium where they are taken only by a default the next upgrade changes. Only " +
			"ingress-nginx/ingress-nginx-controller is read as the ConfigMap; another, or an unknown version, leaves the " +
			"rule partial.",
		Reads: check.Needs(needs...),
		Rules: []check.Rule{
			{ID: ruleSnippetsGate, Summary: "no Ingress snippet annotation that ingress-nginx refuses now or after its next upgrade", Needs: needs},
		},
		Cases: check.Prevents(caseSnippets),
		Run:   runIngressNginxSnippetGates,
	}
}

func runIngressNginxSnippetGates(ctx *check.Context) ([]finding.Finding, error) {
	binding, err := loadNginxFacts()
	if err != nil {
		return nil, err
	}
	facts, err := loadSnippetGateFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	classes := classControllers(s)
	configMaps := check.ConfigMapsByKey(s)
	var out []finding.Finding
	for _, n := range findNginxControllers(s, binding.nginx) {
		var objs []finding.ObjectRef
		var shown []string
		for i := range s.Ingresses {
			ing := &s.Ingresses[i]
			if !serves(n, ing, classes, binding.nginx) {
				continue
			}
			// The snippets' text is never read (the loader keeps only
			// that they are there): it can hold credentials.
			var keys []string
			for k := range ing.Annotations {
				if slices.Contains(facts.Annotations, k) {
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				continue
			}
			sort.Strings(keys)
			ref := check.Ref("networking.k8s.io/v1", "Ingress", ing)
			objs = append(objs, ref)
			if len(shown) < maxSnippetsShown {
				shown = append(shown, ref.String()+" ("+strings.Join(keys, ", ")+")")
			}
		}
		if len(objs) == 0 {
			continue
		}
		if f, ok := judgeSnippetGates(ctx, n, objs, shown, configMaps, facts); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

func judgeSnippetGates(ctx *check.Context, n nginxController, objs []finding.ObjectRef, shown []string,
	configMaps map[string]*corev1.ConfigMap, facts *snippetGateFacts) (finding.Finding, bool) {
	if !n.versionKnown {
		ctx.Incomplete(ruleSnippetsGate, "the version of %s is unknown (image %s)", n.ref, n.image)
		return finding.Finding{}, false
	}
	var cm *corev1.ConfigMap
	if n.configMap != "" {
		name := controllerConfigMap(n.configMap, n.ref.Namespace)
		cm = configMaps[name]
		switch {
		case name != facts.ConfigMap:
			ctx.Incomplete(ruleSnippetsGate, "%s reads ConfigMap %s, which kubegap does not read (only %s)", n.ref, name, facts.ConfigMap)
			return finding.Finding{}, false
		case cm == nil && !ctx.Complete(snapshot.ConfigMaps):
			ctx.Incomplete(ruleSnippetsGate, "ConfigMap %s of %s is not in the input", name, n.ref)
			return finding.Finding{}, false
		}
	}
	allow, risk := "", ""
	if cm != nil {
		allow, risk = cm.Data[facts.AllowKey], cm.Data[facts.RiskKey]
	}
	allowOffNow := !n.version.Less(facts.allowOff)
	riskHighNow := !n.version.Less(facts.riskHigh)
	// Each gate: refused now, taken only by a default an upgrade changes,
	// or set explicitly open.
	var refused, upgrade []string
	// The controller parses the key as a boolean ("True" and "1" open
	// the gate too) and the risk level without regard to case.
	allowOn, _ := strconv.ParseBool(allow)
	switch {
	case allowOn:
	case allow == "" && !allowOffNow:
		upgrade = append(upgrade, fmt.Sprintf("%s is unset, and from %s its default turns snippets off", facts.AllowKey, facts.AllowOffFrom))
	default:
		refused = append(refused, fmt.Sprintf("%s is %s", facts.AllowKey, orDefault(allow, "unset (off by default from "+facts.AllowOffFrom+")")))
	}
	switch {
	case strings.EqualFold(risk, facts.RiskNeeded):
	case risk == "" && !riskHighNow:
		upgrade = append(upgrade, fmt.Sprintf("%s is unset, and from %s its default, High, refuses snippets (which need %s)",
			facts.RiskKey, facts.RiskHighFrom, facts.RiskNeeded))
	default:
		refused = append(refused, fmt.Sprintf("%s is %s, and snippets need %s", facts.RiskKey,
			orDefault(risk, "unset (High by default from "+facts.RiskHighFrom+")"), facts.RiskNeeded))
	}
	if len(refused) == 0 && len(upgrade) == 0 {
		return finding.Finding{}, false
	}
	sev, title := finding.High, fmt.Sprintf("%s refuses the snippet annotations of %s", n.ref, check.Plural(len(objs), "Ingress", "Ingresses"))
	why := strings.Join(refused, "; ")
	effect := "its admission webhook denies the next apply of these Ingresses, and the controller drops the snippets, so " +
		"what they configure (headers, authentication, rewrites) no longer applies to the routes"
	if len(refused) == 0 {
		sev, title = finding.Medium, fmt.Sprintf("Upgrading %s will refuse the snippet annotations of %s", n.ref, check.Plural(len(objs), "Ingress", "Ingresses"))
		why = strings.Join(upgrade, "; ")
		effect = "after that upgrade its admission webhook denies the next apply of these Ingresses and the controller drops the snippets"
	}
	f := finding.Finding{
		Check:    snippetGatesID,
		Rule:     ruleSnippetsGate,
		Severity: sev,
		Title:    title,
		Message: fmt.Sprintf("ingress-nginx %s: %s. %s carry snippet annotations; %s.", n.version, why,
			check.Plural(len(objs), "Ingress", "Ingresses"), effect),
		Objects: append([]finding.ObjectRef{n.ref}, objs...),
		Remediation: "Decide whether snippets are still wanted: they let whoever writes an Ingress inject NGINX configuration, " +
			"which is why they were turned off. If they are, set " + facts.AllowKey + ": \"true\" and " + facts.RiskKey + ": " +
			facts.RiskNeeded + " in the controller's ConfigMap (chart values controller.allowSnippetAnnotations and " +
			"controller.config) before upgrading; otherwise replace each snippet with the dedicated annotation or ConfigMap " +
			"setting for what it does.",
		Cases: []string{caseSnippets},
	}
	f.AddEvidence(nginxControllerQuote(ctx.Snapshot, n, "configmap"))
	if cm != nil {
		cmRef := finding.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}
		var fields []finding.Field
		for _, k := range []string{facts.AllowKey, facts.RiskKey} {
			if v, ok := cm.Data[k]; ok {
				fields = append(fields, finding.Entry("data["+k+"]", v))
			} else {
				fields = append(fields, finding.Absent("data["+k+"]"))
			}
		}
		f.AddEvidence(finding.Quote(cmRef, fields...))
	}
	f.Evidence = append(f.Evidence, "Ingresses with snippets: "+check.ListText(shown, maxSnippetsShown),
		"sources: "+strings.Join(facts.Sources, ", "))
	return f, true
}

func orDefault(v, unset string) string {
	if v == "" {
		return unset
	}
	return fmt.Sprintf("%q", v)
}
