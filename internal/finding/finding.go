// Package finding holds what a check reports: a Finding, the objects it is
// about, and its Severity. It is the vocabulary shared by checks, the audit
// engine, the renderers and the MCP server, and depends on nothing else.
package finding

import (
	"fmt"
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
	Check       string      `json:"check"`
	Severity    Severity    `json:"severity"`
	Title       string      `json:"title"`
	Message     string      `json:"message"`
	Objects     []ObjectRef `json:"objects"`
	Evidence    []string    `json:"evidence"`
	Remediation string      `json:"remediation"`
	Cases       []string    `json:"cases"`
	// Preflight marks a finding about an upgrade to --target-version:
	// PreflightBefore (fix before upgrading) or PreflightDuring (watch
	// during the upgrade). Empty for a finding about the cluster as it is.
	Preflight string `json:"preflight,omitempty"`
}

// Preflight phases of a finding.
const (
	PreflightBefore = "before"
	PreflightDuring = "during"
)
