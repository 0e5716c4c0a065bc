package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the report in the JSON contract, indented.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(withPlan(r))
}

// withPlan is the report with its upgrade plan made from the findings it
// holds now (after suppressions and --min-severity).
func withPlan(r *Report) *Report {
	if r.TargetVersion == "" {
		return r
	}
	c := *r
	c.Plan = Plan(r)
	return &c
}
