// Package suppress moves findings a team has accepted out of a report's
// findings and into its suppressed list: by an annotation on the object
// (kubegap.dev/ignore) or by an entry of the config file. Nothing is
// dropped: suppressed findings stay in the report, counted, with the reason;
// an expired entry suppresses nothing and says so in the warnings.
package suppress

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Rule is one suppressions entry of the config file. A finding matches when
// its check matches and its first object, the one the finding is about,
// matches every selector given. Kind, Namespace and Name are globs
// (path.Match: *, ?, [a-z]). An entry with an ID and no check suppresses
// that one finding, whatever its check: the ID a report prints is enough.
type Rule struct {
	// Check is a check ID, or "*" for every check; optional when ID is
	// given.
	Check string `yaml:"check,omitempty" json:"check,omitempty"`
	// ID suppresses one finding by its stable ID (kg- and 16 hex digits).
	ID        string `yaml:"id,omitempty" json:"id,omitempty"`
	Kind      string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Name      string `yaml:"name,omitempty" json:"name,omitempty"`
	// Labels is a label selector ("team=payments,tier!=web") on the object.
	Labels string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// Reason is required: a suppression nobody can explain is a finding
	// nobody reads.
	Reason string `yaml:"reason" json:"reason"`
	// Expires (YYYY-MM-DD) ends the suppression at the start of that day
	// (UTC); empty never expires.
	Expires string `yaml:"expires,omitempty" json:"expires,omitempty"`

	selector labels.Selector
	expires  time.Time
}

// Compile checks a rule and prepares its selector and expiry. known is the
// set of check IDs; an unknown ID is an error, as a typo would otherwise
// suppress nothing in silence.
func (r *Rule) Compile(known func(id string) bool) error {
	if r.Check == "" && r.ID == "" {
		return fmt.Errorf("suppression has neither check (a check ID, or \"*\") nor id (a finding ID, kg-...)")
	}
	if r.ID != "" && !findingID.MatchString(r.ID) {
		return fmt.Errorf("suppression id %q is not a finding ID (kg- and 16 hex digits, as reports print it)", r.ID)
	}
	if r.Check != "" && r.Check != "*" && !known(r.Check) {
		return fmt.Errorf("suppression names unknown check %q", r.Check)
	}
	what := r.Label()
	if strings.TrimSpace(r.Reason) == "" {
		return fmt.Errorf("suppression of %s has no reason", what)
	}
	for _, g := range []string{r.Kind, r.Namespace, r.Name} {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("suppression of %s: bad glob %q", what, g)
		}
	}
	if r.Labels != "" {
		sel, err := labels.Parse(r.Labels)
		if err != nil {
			return fmt.Errorf("suppression of %s: labels: %w", what, err)
		}
		r.selector = sel
	}
	if r.Expires != "" {
		t, err := time.Parse(time.DateOnly, r.Expires)
		if err != nil {
			return fmt.Errorf("suppression of %s: expires %q is not a date (YYYY-MM-DD)", what, r.Expires)
		}
		r.expires = t
	}
	return nil
}

// findingID is the form of finding.StableID.
var findingID = regexp.MustCompile(`^kg-[0-9a-f]{16}$`)

// Label names the rule in messages: its check, its finding ID, or both.
func (r *Rule) Label() string {
	switch {
	case r.ID == "":
		return r.Check
	case r.Check == "" || r.Check == "*":
		return r.ID
	}
	return r.Check + " " + r.ID
}

func (r *Rule) expired(now time.Time) bool { return !r.expires.IsZero() && !now.Before(r.expires) }

func (r *Rule) matches(f finding.Finding, meta func(finding.ObjectRef) (snapshot.Meta, bool)) bool {
	if r.Check != "" && r.Check != "*" && r.Check != f.Check {
		return false
	}
	if r.ID != "" && r.ID != f.ID {
		return false
	}
	if r.Kind == "" && r.Namespace == "" && r.Name == "" && r.selector == nil {
		return true
	}
	if len(f.Objects) == 0 {
		return false
	}
	o := f.Objects[0]
	if !glob(r.Kind, o.Kind) || !glob(r.Namespace, o.Namespace) || !glob(r.Name, o.Name) {
		return false
	}
	if r.selector != nil {
		m, ok := meta(o)
		if !ok || !r.selector.Matches(labels.Set(m.Labels)) {
			return false
		}
	}
	return true
}

func glob(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

// Apply moves suppressed findings of rep into rep.Suppressed and recounts.
// Rules must be compiled. s gives the objects' annotations and labels; now
// decides expiry.
func Apply(rep *report.Report, s *snapshot.Snapshot, rules []Rule, now time.Time) {
	meta := func(o finding.ObjectRef) (snapshot.Meta, bool) {
		if s == nil {
			return snapshot.Meta{}, false
		}
		return s.Meta(o.Kind, o.Namespace, o.Name)
	}
	for i := range rules {
		if rules[i].expired(now) {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("suppression of %s (%s) expired on %s: its findings are reported again",
				rules[i].Label(), rules[i].Reason, rules[i].Expires))
		}
	}
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if sup, ok := byAnnotation(f, meta); ok {
			rep.Suppressed = append(rep.Suppressed, sup)
			continue
		}
		if sup, ok := byRule(f, rules, meta, now); ok {
			rep.Suppressed = append(rep.Suppressed, sup)
			continue
		}
		kept = append(kept, f)
	}
	rep.Findings = kept
	rep.Finish()
}

// byAnnotation suppresses a finding whose first object lists its check (or
// "*") in kubegap.dev/ignore. Only the first object counts: an annotation on
// one node of thirty must not hide the other twenty-nine.
func byAnnotation(f finding.Finding, meta func(finding.ObjectRef) (snapshot.Meta, bool)) (report.Suppressed, bool) {
	if len(f.Objects) == 0 {
		return report.Suppressed{}, false
	}
	o := f.Objects[0]
	m, ok := meta(o)
	if !ok {
		return report.Suppressed{}, false
	}
	for _, id := range strings.Split(m.Annotations[snapshot.IgnoreAnnotation], ",") {
		if id = strings.TrimSpace(id); id == f.Check || id == "*" {
			reason := m.Annotations[snapshot.IgnoreReasonAnnotation]
			if reason == "" {
				reason = "(no " + snapshot.IgnoreReasonAnnotation + " annotation)"
			}
			return report.Suppressed{Finding: f, By: "annotation", Reason: reason, Object: &o}, true
		}
	}
	return report.Suppressed{}, false
}

func byRule(f finding.Finding, rules []Rule, meta func(finding.ObjectRef) (snapshot.Meta, bool), now time.Time) (report.Suppressed, bool) {
	for i := range rules {
		r := &rules[i]
		if r.expired(now) || !r.matches(f, meta) {
			continue
		}
		return report.Suppressed{Finding: f, By: "config", Reason: r.Reason, Expires: r.Expires}, true
	}
	return report.Suppressed{}, false
}
