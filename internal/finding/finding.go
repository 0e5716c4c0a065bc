// Package finding holds what a check reports: a Finding, the objects it is
// about, and its Severity. It is the vocabulary shared by checks, the audit
// engine, the renderers and the MCP server, and depends on nothing else.
package finding

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Severity orders findings. The zero value is Info.
type Severity int

// Severities from least to most severe.
const (
	Info Severity = iota
	Low
	Medium
	High
	Critical
)

var severityNames = [...]string{"info", "low", "medium", "high", "critical"}

// Severities lists every severity from most to least severe, the order
// reports use.
func Severities() []Severity { return []Severity{Critical, High, Medium, Low, Info} }

func (s Severity) String() string {
	if s < Info || s > Critical {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity reads a severity name, case-insensitively.
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if strings.EqualFold(name, n) {
			return Severity(i), nil
		}
	}
	return Info, fmt.Errorf("unknown severity %q (want one of %s)", name, strings.Join(severityNames[:], ", "))
}

// MarshalText writes the severity's name, so JSON carries "high", not 3.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ObjectRef names one Kubernetes object. Cluster-scoped objects have no
// namespace.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// File and Line are where offline input defined the object, as
	// findings[].locations says too: the JSON and YAML writers copy them
	// here, on the reference itself, for readers that want them in place.
	// Empty in memory and for a live read.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// Same reports whether o and p name the same object, wherever each was
// read from.
func (o ObjectRef) Same(p ObjectRef) bool {
	return o.APIVersion == p.APIVersion && o.Kind == p.Kind && o.Namespace == p.Namespace && o.Name == p.Name
}

func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// Finding is one gap found in one place. Every finding cites at least one
// case from the incident library.
type Finding struct {
	// ID names the same gap on the same objects across runs: see StableID.
	// The report fills it in.
	ID    string `json:"id,omitempty"`
	Check string `json:"check"`
	// Rule optionally tells apart findings a check makes about the same
	// objects for different reasons (an end of support and a stale image on
	// the same nodes). It goes into the ID; without it the title, digits
	// removed, does.
	Rule        string      `json:"rule,omitempty"`
	Severity    Severity    `json:"severity"`
	Title       string      `json:"title"`
	Message     string      `json:"message"`
	Objects     []ObjectRef `json:"objects"`
	Evidence    []string    `json:"evidence"`
	Remediation string      `json:"remediation"`
	Cases       []string    `json:"cases"`
	// CaseLinks says, for each of Cases in the same order, how the check
	// relates to the incident (prevents, detects, related). The audit
	// fills it from the check's declared links.
	CaseLinks []CaseLink `json:"caseLinks,omitempty"`
	// Preflight marks a finding about an upgrade to --target-version:
	// PreflightBefore (fix before upgrading) or PreflightDuring (watch
	// during the upgrade). Empty for a finding about the cluster as it is.
	Preflight string `json:"preflight,omitempty"`
	// Locations are where the objects were read from, for offline input
	// (file and line); empty for a live read.
	Locations []Location `json:"locations,omitempty"`
	// Baseline is "new" or "unchanged" when the audit was compared with a
	// previous report (--baseline); empty otherwise.
	Baseline string `json:"baseline,omitempty"`

	// EvidenceItems are the evidence lines that quote objects' fields, as
	// data: each item's String is also a line of Evidence. See
	// EvidenceItem; AddEvidence keeps the two in step.
	EvidenceItems []EvidenceItem `json:"evidenceItems,omitempty"`

	// Owner is set when every object the finding asks to change is one a
	// managed provider owns and reconciles (internal/owner): the user
	// cannot fix it in the cluster. Nil otherwise.
	Owner *Owner `json:"owner,omitempty"`
}

// Owner says who owns the objects of a finding and what the user can do
// instead of editing them.
type Owner struct {
	// Provider names who reconciles the objects: "AKS", "EKS", "GKE", "k3s".
	Provider string `json:"provider"`
	// Marker is what on the objects shows it, as read ("label
	// kubernetes.azure.com/managedby=aks on Deployment kube-system/coredns").
	Marker string `json:"marker"`
	// Advice is what to ask or upgrade instead.
	Advice string `json:"advice"`
	// Sources are the public pages the marker rests on.
	Sources []string `json:"sources"`
}

// Sentence is the owner in words, as renderers print it.
func (o *Owner) Sentence() string {
	return "managed by " + o.Provider + ": not fixable in the cluster; " + o.Advice
}

// Location is where an object of a finding was read from.
type Location struct {
	Object ObjectRef `json:"object"`
	File   string    `json:"file"`
	Line   int       `json:"line,omitempty"`
}

// StableID returns the finding's identity: a hash of the check, the rule
// (or, without one, the title with its digits taken out) and the sorted
// object references. Ages, counts and the time of the run are not part of
// it, so the same gap on the same objects has the same ID in every run; a
// baseline and a suppression list can key on it.
func StableID(f Finding) string {
	refs := make([]string, len(f.Objects))
	for i, o := range f.Objects {
		refs[i] = o.APIVersion + "|" + o.String()
	}
	slices.Sort(refs)
	disc := f.Rule
	if disc == "" {
		disc = withoutDigits(f.Title)
	}
	h := sha256.New()
	for _, part := range append([]string{f.Check, disc}, refs...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "kg-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// withoutDigits replaces each run of digits by "#", so that a count in a
// title ("3 nodes" then "4 nodes") does not change the identity.
func withoutDigits(s string) string {
	var b strings.Builder
	inRun := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if !inRun {
				b.WriteByte('#')
			}
			inRun = true
			continue
		}
		inRun = false
		b.WriteRune(r)
	}
	return b.String()
}

// Preflight phases of a finding.
const (
	PreflightBefore = "before"
	PreflightDuring = "during"
)
