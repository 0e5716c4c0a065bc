package availability

// webhook-blast-radius's facts table, data/admission-webhooks.yaml: the
// failurePolicy and timeout defaults of each admissionregistration version
// and the matchConditions that exempt system users. The check itself is in
// webhook_blast_radius.go.

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"sync"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

//go:embed data/admission-webhooks.yaml
var admissionWebhooksYAML []byte

// webhookFacts is data/admission-webhooks.yaml.
type webhookFacts struct {
	Defaults webhookDefaults `json:"defaults"`
	// VersionDefaults are the defaults of older API versions, by apiVersion.
	VersionDefaults    map[string]webhookDefaults `json:"versionDefaults"`
	NamespaceNameLabel string                     `json:"namespaceNameLabel"`
	CriticalNamespaces []string                   `json:"criticalNamespaces"`
	// SystemExemptions are matchCondition expressions (RE2) that let the
	// requests of system identities, controllers among them, through
	// without calling the webhook.
	SystemExemptions []string `json:"systemExemptions"`
	Sources          []string `json:"sources"`

	exemptions []*regexp.Regexp
}

// webhookDefaults are what the API server stores for unset fields.
type webhookDefaults struct {
	FailurePolicy  admissionv1.FailurePolicyType `json:"failurePolicy"`
	TimeoutSeconds int32                         `json:"timeoutSeconds"`
}

func (d webhookDefaults) validate(what string) error {
	switch {
	case d.FailurePolicy != admissionv1.Fail && d.FailurePolicy != admissionv1.Ignore:
		return fmt.Errorf("admission webhook facts: %s failurePolicy %q is neither Fail nor Ignore", what, d.FailurePolicy)
	case d.TimeoutSeconds < 1 || d.TimeoutSeconds > 30:
		return fmt.Errorf("admission webhook facts: %s timeoutSeconds %d is outside 1-30", what, d.TimeoutSeconds)
	}
	return nil
}

// defaultsFor returns the defaults of the apiVersion a configuration was
// written in ("" for v1) and a note naming them for evidence.
func (f *webhookFacts) defaultsFor(apiVersion string) (webhookDefaults, string) {
	if d, ok := f.VersionDefaults[apiVersion]; ok {
		return d, " (unset; the " + apiVersion + " default)"
	}
	return f.Defaults, " (unset; the API default)"
}

// exempting returns the first matchCondition that exempts system
// identities, if any.
func (f *webhookFacts) exempting(mcs []admissionv1.MatchCondition) (admissionv1.MatchCondition, bool) {
	for _, mc := range mcs {
		for _, re := range f.exemptions {
			if re.MatchString(mc.Expression) {
				return mc, true
			}
		}
	}
	return admissionv1.MatchCondition{}, false
}

var loadWebhookFacts = sync.OnceValues(func() (*webhookFacts, error) {
	return parseWebhookFacts(admissionWebhooksYAML)
})

func parseWebhookFacts(data []byte) (*webhookFacts, error) {
	var f webhookFacts
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("reading admission webhook facts: %w", err)
	}
	if err := f.Defaults.validate("default"); err != nil {
		return nil, err
	}
	for v, d := range f.VersionDefaults {
		if err := d.validate(v); err != nil {
			return nil, err
		}
	}
	if f.NamespaceNameLabel == "" || len(f.CriticalNamespaces) == 0 || len(f.SystemExemptions) == 0 || len(f.Sources) == 0 {
		return nil, errors.New("admission webhook facts: namespaceNameLabel, criticalNamespaces, systemExemptions and sources are required")
	}
	for _, p := range f.SystemExemptions {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("admission webhook facts: %w", err)
		}
		f.exemptions = append(f.exemptions, re)
	}
	return &f, nil
}
