package ingress

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/ingress-nginx-path-validation.yaml
var pathValidationYAML []byte

type pathValidationFacts struct {
	ConfigMapKey  string   `json:"configMapKey"`
	Pattern       string   `json:"pattern"`
	OptionFrom    string   `json:"optionFrom"`
	DefaultOnFrom string   `json:"defaultOnFrom"`
	ConfigMap     string   `json:"configMap"`
	Sources       []string `json:"sources"`

	valid                 *regexp.Regexp
	optionFrom, defaultOn check.KubeVersion
}

var loadPathValidationFacts = check.Facts("ingress-nginx path validation facts", pathValidationYAML, func(f *pathValidationFacts) error {
	var err error
	if f.valid, err = regexp.Compile(f.Pattern); err != nil {
		return err
	}
	var ok1, ok2 bool
	f.optionFrom, ok1 = check.ParseKubeVersion(f.OptionFrom)
	f.defaultOn, ok2 = check.ParseKubeVersion(f.DefaultOnFrom)
	if !ok1 || !ok2 || f.ConfigMapKey == "" || f.ConfigMap == "" {
		return fmt.Errorf("ingress-nginx path validation facts: versions %q, %q, key %q, ConfigMap %q", f.OptionFrom, f.DefaultOnFrom, f.ConfigMapKey, f.ConfigMap)
	}
	return nil
})

const (
	pathValidationID   = "ingress-nginx-path-validation"
	rulePathsRejected  = "paths-strict-validation-rejects"
	casePathValidation = "ingress-nginx-path-validation-breaks-upgrades-2023-2025"
	maxPathsShown      = 5
)

func ingressNginxPathValidationCheck() check.Check {
	needs := []snapshot.Resource{snapshot.Ingresses, snapshot.IngressClasses, snapshot.Deployments, snapshot.DaemonSets, snapshot.ConfigMaps}
	return check.Check{
		ID:       pathValidationID,
		Title:    "Ingress paths that ingress-nginx's strict path validation refuses",
		Severity: finding.High,
		Description: "Reads the Ingresses each ingress-nginx controller serves and their paths of pathType Exact or Prefix " +
			"that hold characters other than alphanumerics, \"/\", \"_\" and \"-\" (regular expressions, dots, colons), " +
			"against the controller's version (image tag) and the strict-validate-path-type key of its ConfigMap. " +
			"High where the validation is on (1.12.0 and later unless the key is \"false\", 1.8 to 1.11 where it is " +
			"\"true\"): the admission webhook refuses the next apply of these Ingresses, so Helm installs and upgrades " +
			"of the applications fail while the live objects keep serving. Medium on 1.8 to 1.11 with the key unset: the " +
			"upgrade to 1.12 turns the validation on. Only ingress-nginx/ingress-nginx-controller is read as the " +
			"ConfigMap; a controller reading another, or of unknown version, leaves the rule partial.",
		Reads: check.Needs(needs...),
		Rules: []check.Rule{
			{ID: rulePathsRejected, Summary: "no Exact or Prefix Ingress path that ingress-nginx's strict path validation refuses", Needs: needs},
		},
		Cases: check.Prevents(casePathValidation),
		Run:   runIngressNginxPathValidation,
	}
}

// badPath is one Ingress path the validation refuses.
type badPath struct {
	ing        *networkingv1.Ingress
	rule, path int
	value      string
	pathType   string
}

func runIngressNginxPathValidation(ctx *check.Context) ([]finding.Finding, error) {
	binding, err := loadNginxFacts()
	if err != nil {
		return nil, err
	}
	facts, err := loadPathValidationFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	classes := classControllers(s)
	configMaps := check.ConfigMapsByKey(s)
	var out []finding.Finding
	for _, n := range findNginxControllers(s, binding.nginx) {
		bad := rejectedPaths(s, n, classes, binding.nginx, facts)
		if len(bad) == 0 {
			continue
		}
		if f, ok := judgePathValidation(ctx, n, bad, configMaps, facts); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// rejectedPaths are the Exact and Prefix paths of the Ingresses n serves
// that the strict validation refuses.
func rejectedPaths(s *snapshot.Snapshot, n nginxController, classes map[string]string, nginx *controllerFacts, facts *pathValidationFacts) []badPath {
	var out []badPath
	for i := range s.Ingresses {
		ing := &s.Ingresses[i]
		if !serves(n, ing, classes, nginx) {
			continue
		}
		for r, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			for p, path := range rule.HTTP.Paths {
				if path.PathType == nil {
					continue
				}
				pt := string(*path.PathType)
				if pt != string(networkingv1.PathTypeExact) && pt != string(networkingv1.PathTypePrefix) {
					continue
				}
				if !facts.valid.MatchString(path.Path) {
					out = append(out, badPath{ing: ing, rule: r, path: p, value: path.Path, pathType: pt})
				}
			}
		}
	}
	return out
}

func judgePathValidation(ctx *check.Context, n nginxController, bad []badPath, configMaps map[string]*corev1.ConfigMap,
	facts *pathValidationFacts) (finding.Finding, bool) {
	if !n.versionKnown {
		ctx.Incomplete(rulePathsRejected, "the version of %s is unknown (image %s)", n.ref, n.image)
		return finding.Finding{}, false
	}
	setting, cmRef, known := "", (*finding.ObjectRef)(nil), true
	if n.configMap != "" {
		name := controllerConfigMap(n.configMap, n.ref.Namespace)
		switch cm := configMaps[name]; {
		case name != facts.ConfigMap:
			ctx.Incomplete(rulePathsRejected, "%s reads ConfigMap %s, which kubegap does not read (only %s)", n.ref, name, facts.ConfigMap)
			known = false
		case cm == nil && !ctx.Complete(snapshot.ConfigMaps):
			ctx.Incomplete(rulePathsRejected, "ConfigMap %s of %s is not in the input", name, n.ref)
			known = false
		case cm != nil:
			setting = cm.Data[facts.ConfigMapKey]
			cmRef = &finding.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}
		}
	}
	if !known {
		return finding.Finding{}, false
	}
	onByDefault := !n.version.Less(facts.defaultOn)
	var sev finding.Severity
	var state string
	switch {
	case setting == "false" && !n.version.Less(facts.optionFrom):
		return finding.Finding{}, false
	case setting == "true" && !n.version.Less(facts.optionFrom) || onByDefault:
		sev = finding.High
		state = fmt.Sprintf("ingress-nginx %s validates paths (%s %s)", n.version, facts.ConfigMapKey,
			map[bool]string{true: "true", false: "on by default from " + facts.DefaultOnFrom}[setting == "true"])
	default:
		sev = finding.Medium
		// Before 1.8 the key does not exist, so whatever it says, the
		// upgrade to 1.12 brings the validation on.
		state = fmt.Sprintf("ingress-nginx %s does not validate paths yet (%s not \"true\", or older than %s, which added it), "+
			"but %s and later do by default", n.version, facts.ConfigMapKey, facts.OptionFrom, facts.DefaultOnFrom)
	}
	return pathValidationFinding(ctx.Snapshot, n, bad, cmRef, setting, sev, state, facts), true
}

func pathValidationFinding(s *snapshot.Snapshot, n nginxController, bad []badPath, cmRef *finding.ObjectRef, setting string, sev finding.Severity, state string,
	facts *pathValidationFacts) finding.Finding {
	objs := []finding.ObjectRef{n.ref}
	var g finding.Grouper
	var shown []string
	seen := map[string]bool{}
	for i, b := range bad {
		ref := check.Ref("networking.k8s.io/v1", "Ingress", b.ing)
		if !seen[ref.String()] {
			seen[ref.String()] = true
			objs = append(objs, ref)
		}
		if i < maxPathsShown {
			base := fmt.Sprintf("spec.rules[%d].http.paths[%d]", b.rule, b.path)
			g.Add(ref, finding.Value(base+".path", b.value), finding.Value(base+".pathType", b.pathType))
			shown = append(shown, fmt.Sprintf("%s %s (%s)", ref, b.value, b.pathType))
		}
	}
	what := "the admission webhook refuses the next apply of these Ingresses"
	title := fmt.Sprintf("%s refuses %s of the Ingresses it serves on their next apply",
		n.ref, check.Plural(len(bad), "path", "paths"))
	if sev == finding.Medium {
		what = "after the upgrade to " + facts.DefaultOnFrom + " or later the admission webhook refuses their next apply"
		title = fmt.Sprintf("Upgrading %s to ingress-nginx %s will refuse %s of the Ingresses it serves",
			n.ref, facts.DefaultOnFrom, check.Plural(len(bad), "path", "paths"))
	}
	f := finding.Finding{
		Check:    pathValidationID,
		Rule:     rulePathsRejected,
		Severity: sev,
		Title:    title,
		Message: fmt.Sprintf("%s. %s hold characters the strict path validation does not allow under pathType Exact or "+
			"Prefix (only alphanumerics, \"/\", \"_\" and \"-\"): %s, with \"ingress contains invalid paths: path ... "+
			"cannot be used with pathType ...\". The live Ingresses keep serving, so the failure shows in unrelated "+
			"deploys: Helm installs and upgrades of the applications that own them.", state,
			check.Plural(len(bad), "path", "paths"), what),
		Objects: objs,
		Remediation: "Give these paths pathType ImplementationSpecific (the only type under which ingress-nginx takes " +
			"regular expressions and other characters), or remove the characters; set " + facts.ConfigMapKey +
			": \"false\" in the controller's ConfigMap only as a stopgap, since the validation is a security measure.",
		Cases: []string{casePathValidation},
	}
	f.AddEvidence(nginxControllerQuote(s, n, "configmap"))
	if cmRef != nil {
		field := finding.Absent("data[" + facts.ConfigMapKey + "]")
		if setting != "" {
			field = finding.Entry("data["+facts.ConfigMapKey+"]", setting)
		}
		f.AddEvidence(finding.Quote(*cmRef, field))
	}
	f.AddEvidence(g.Items()...)
	f.Evidence = append(f.Evidence, fmt.Sprintf("paths refused: %s", check.ListText(shown, maxPathsShown)),
		fmt.Sprintf("validation: %s; sources: %s", facts.Pattern, strings.Join(facts.Sources, ", ")))
	return f
}
