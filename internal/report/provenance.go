package report

import (
	"strconv"
	"strings"
	"time"

	"github.com/kubegap/kubegap/internal/finding"
)

// RunLine is the one header line that says which kubegap wrote the report
// and when: "kubegap v0.4.0, 2026-12-01T12:00:00Z". Empty for a report
// without either (one written before they existed).
func RunLine(r *Report) string {
	var parts []string
	if r.Tool.Version != "" {
		parts = append(parts, "kubegap "+r.Tool.Version)
	}
	if !r.GeneratedAt.IsZero() {
		parts = append(parts, r.GeneratedAt.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}

// ConfigLine names the config file a run read and what it changed
// ("config ../.kubegap.yaml: set output, skip-checks; skipped 1 check
// (webhook-blast-radius); suppressed 2 findings"), so that a file found
// above the working directory never changes a result silently. Empty
// when no config file was read.
func ConfigLine(r *Report) string {
	c := r.Source.Config
	if c == nil {
		return ""
	}
	var effects []string
	if len(c.Settings) > 0 {
		effects = append(effects, "set "+strings.Join(c.Settings, ", "))
	}
	if n := len(c.SkippedChecks); n > 0 {
		effects = append(effects, "skipped "+Plural(n, "check", "checks")+" ("+strings.Join(c.SkippedChecks, ", ")+")")
	}
	if c.Suppressions > 0 {
		effects = append(effects, "suppressed "+Plural(c.Suppressed, "finding", "findings")+" by "+Plural(c.Suppressions, "entry", "entries"))
	}
	if len(effects) == 0 {
		return "config " + c.Path + ": no effect on this run"
	}
	return "config " + c.Path + ": " + strings.Join(effects, "; ")
}

// HeaderLine is RunLine and ConfigLine on one line, for headers that
// count their lines.
func HeaderLine(r *Report) string {
	var parts []string
	for _, s := range []string{RunLine(r), ConfigLine(r)} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// Where is "file:line" (or "file" without a line) of an object of f, from
// f.Locations: where offline input defined it. Empty for a live read or an
// object the input files do not hold as a plain manifest.
func Where(f finding.Finding, o finding.ObjectRef) string {
	for _, l := range f.Locations {
		if l.Object.Same(o) {
			if l.Line > 0 {
				return l.File + ":" + strconv.Itoa(l.Line)
			}
			return l.File
		}
	}
	return ""
}
