package report

import (
	"encoding/json"
	"io"

	"github.com/kubegap/kubegap/internal/finding"
)

// WriteJSON writes the report in the JSON contract, indented.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(withPlan(r))
}

// withPlan is the report as JSON and YAML write it: with its upgrade plan
// made from the findings it holds now (after suppressions and
// --min-severity), and each object reference from files carrying its file
// and line.
func withPlan(r *Report) *Report {
	c := *r
	if r.TargetVersion != "" {
		c.Plan = Plan(r)
	}
	c.Findings = objectsPlaced(r.Findings)
	if len(r.Suppressed) > 0 {
		c.Suppressed = append([]Suppressed(nil), r.Suppressed...)
		for i := range c.Suppressed {
			c.Suppressed[i].Finding = objectsPlaced([]finding.Finding{c.Suppressed[i].Finding})[0]
		}
	}
	return &c
}

// objectsPlaced copies fs with the file and line of f.Locations set on
// each object reference they name (findings[].objects[].file, .line), so a
// reader of one object need not join it with locations. fs itself is left
// as it is: in memory a reference names an object, not where it was read.
func objectsPlaced(fs []finding.Finding) []finding.Finding {
	out := fs
	copied := false
	for i, f := range fs {
		if len(f.Locations) == 0 {
			continue
		}
		if !copied {
			out, copied = append([]finding.Finding(nil), fs...), true
		}
		objs := append([]finding.ObjectRef(nil), f.Objects...)
		for j := range objs {
			for _, l := range f.Locations {
				if l.Object.Same(objs[j]) {
					objs[j].File, objs[j].Line = l.File, l.Line
					break
				}
			}
		}
		out[i].Objects = objs
	}
	return out
}

// ForgetObjectPlaces clears the file and line a JSON report carries on
// object references (they stay in locations), for code that reads a report
// back and compares references as names of objects.
func ForgetObjectPlaces(fs []finding.Finding) {
	for i := range fs {
		for j := range fs[i].Objects {
			fs[i].Objects[j].File, fs[i].Objects[j].Line = "", 0
		}
	}
}
